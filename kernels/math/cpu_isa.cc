#include "kernels/math/cpu_isa.h"

#include <cpuinfo.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace et::kernels {
namespace {

struct IsaChoice {
  std::vector<CpuIsa> available{CpuIsa::kPortable};
  CpuIsa selected = CpuIsa::kPortable;
};

const IsaChoice& isa_choice() {
  static const IsaChoice choice = [] {
    IsaChoice c;
#if ET_CPU_X86
    if (cpuinfo_initialize()) {
      if (cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3()) c.available.push_back(CpuIsa::kAvx2);
      if (cpuinfo_has_x86_avx512f()) c.available.push_back(CpuIsa::kAvx512);
    }
#endif
    c.selected = c.available.back();
    if (const char* forced = std::getenv("ET_CPU_ISA"); forced != nullptr && *forced != '\0') {
      bool found = false;
      for (CpuIsa isa : c.available) {
        if (std::string_view(forced) == isa_name(isa)) {
          c.selected = isa;
          found = true;
        }
      }
      if (!found) {
        std::fprintf(stderr,
                     "et-serverd: ET_CPU_ISA=%s is not an ISA this CPU and build run (they are"
                     " portable, avx2, avx512 where the CPU has them); using %s\n",
                     forced, isa_name(c.selected));
      }
    }
    return c;
  }();
  return choice;
}

}  // namespace

std::span<const CpuIsa> available_isas() { return isa_choice().available; }

CpuIsa selected_isa() { return isa_choice().selected; }

const char* isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kPortable:
      break;
  }
  return "portable";
}

}  // namespace et::kernels
