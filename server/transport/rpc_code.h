// The one mapping from et::Status to the RPC status codes every transport answers with
// (gRPC's numbering: the et protocol over gRPC and the fast path, KServe's gRPC, and
// the metrics' "code" label). An INTERNAL answer is logged here, once per answer.
#pragma once

#include <cstdint>

#include "runtime/core/status.h"

namespace et::server {

// gRPC's code for `status` (0 for OK).
uint32_t rpc_code(const Status& status);

}  // namespace et::server
