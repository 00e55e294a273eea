// Profiles as an ETDump: the flatbuffer ExecuTorch's runtime writes when it profiles
// and its devtools read (executorch.devtools.Inspector(etdump_path=...)). One run data
// entry per execute; one profile event per operator (named by its operator),
// delegate call (by its backend id) and delegate step (by its debug id); times in
// nanoseconds. Our schema: runtime/schema/etdump.fbs.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/profile.h"
#include "runtime/core/status.h"

namespace et {

// ResourceExhausted when the profiles hold more than 10,000,000 events in all (a
// flatbuffer holds at most 2 GiB): profile fewer executes.
Result<std::vector<uint8_t>> etdump_bytes(const std::vector<ExecuteProfile>& profiles);

}  // namespace et
