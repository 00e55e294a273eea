// The XNNPACK backend: runs DelegateCalls whose delegate id is "XnnpackBackend".
//
// Linking et_backend_xnnpack (whole archive, through et_backends) registers it in
// BackendRegistry::global(). The parsed and planned graph of each payload is cached
// on the program, so all instances of all methods of one program share one copy of
// the packed weights per concurrent run (see compiled_graph.h).
#pragma once

#include <memory>

#include "backends/xnnpack/compiled_graph.h"
#include "runtime/core/backend.h"

namespace et {

inline constexpr std::string_view kXnnpackBackendId = "XnnpackBackend";

// A backend with its own options (tests, benchmarks); the registered one uses the
// defaults, with ET_XNNPACK_PARTITION=node selecting node-by-node partitioning and
// ET_XNNPACK_REPLICAS=N the replica limit.
std::shared_ptr<const Backend> make_xnnpack_backend(const xnn::CompileOptions& options);

}  // namespace et
