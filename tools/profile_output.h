// What et-run and et-bench do with profiles (--profile, --trace, --etdump).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/core/profile.h"
#include "runtime/core/status.h"

namespace et::tools {

struct ProfileOutputs {
  std::FILE* table = nullptr;  // where the table goes; nullptr: no table
  std::string trace_path;      // Chrome trace JSON; empty: none
  std::string etdump_path;     // ETDump; empty: none
  bool wanted() const { return table != nullptr || !trace_path.empty() || !etdump_path.empty(); }
};

// Writes what `outputs` asks for, saying on stderr (as `tool`) where files went.
// IoError naming a file that could not be written.
Status write_profile_outputs(const std::vector<ExecuteProfile>& profiles,
                             const ProfileOutputs& outputs, const char* tool);

}  // namespace et::tools
