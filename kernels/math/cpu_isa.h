// The vector instruction sets the CPU math (sgemm.h, vector_math.h) can use, found once
// by cpuinfo: AVX-512F, AVX2 with FMA, or portable C++ (any CPU, the compiler's baseline).
// ET_CPU_ISA=portable|avx2|avx512 forces one the CPU has (tests and benchmarks); the best
// one is the default.
#pragma once

#include <span>

namespace et::kernels {

enum class CpuIsa { kPortable, kAvx2, kAvx512 };

// The ISAs this CPU (and this build) can run, portable first; and the one in use.
std::span<const CpuIsa> available_isas();
CpuIsa selected_isa();
const char* isa_name(CpuIsa isa);

}  // namespace et::kernels
