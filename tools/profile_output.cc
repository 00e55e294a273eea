#include "tools/profile_output.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "runtime/devtools/chrome_trace.h"
#include "runtime/devtools/etdump.h"

namespace et::tools {
namespace {

Status write_file(const std::string& path, const void* bytes, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return io_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  }
  const bool written = std::fwrite(bytes, 1, size, f) == size;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    return io_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  }
  return Status();
}

}  // namespace

Status write_profile_outputs(const std::vector<ExecuteProfile>& profiles,
                             const ProfileOutputs& outputs, const char* tool) {
  if (outputs.table != nullptr) {
    std::fprintf(outputs.table, "%s", ProfileSummary::of(profiles).table().c_str());
  }
  if (!outputs.trace_path.empty()) {
    const std::string json = chrome_trace_json(profiles);
    ET_RETURN_IF_ERROR(write_file(outputs.trace_path, json.data(), json.size()));
    std::fprintf(stderr, "%s: Chrome trace written to %s\n", tool, outputs.trace_path.c_str());
  }
  if (!outputs.etdump_path.empty()) {
    ET_ASSIGN_OR_RETURN(const std::vector<uint8_t> etdump, etdump_bytes(profiles));
    ET_RETURN_IF_ERROR(write_file(outputs.etdump_path, etdump.data(), etdump.size()));
    std::fprintf(stderr, "%s: ETDump written to %s\n", tool, outputs.etdump_path.c_str());
  }
  return Status();
}

}  // namespace et::tools
