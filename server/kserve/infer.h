// One KServe inference: a ModelInferRequest's tensors (raw, typed, or in a client's
// shared-memory region) into a method's inputs, one execute, and its outputs into the
// ModelInferResponse (raw) or the client's regions. The checks, in order, name the
// tensor ("input__1") and say what to do: unknown, repeated or missing inputs;
// datatype; shape (rank, negative dims, then the program's own shape checks); byte
// counts of raw contents, typed contents and regions; requested outputs. A call whose
// deadline passes while it waits for its model never runs (DeadlineExceeded).
#pragma once

#include <atomic>
#include <functional>

#include "kserve_v2.pb.h"
#include "server/core/core.h"
#include "server/kserve/cuda_shm.h"
#include "server/kserve/model_catalog.h"
#include "server/kserve/shm_registry.h"

namespace et::server::kserve {

struct InferContext {
  Core& core;
  ModelCatalog& models;
  ShmRegistry& system_shm;
  CudaShmRegistry& cuda_shm;
  // Who is calling, asked only when the request uses shared memory.
  std::function<Result<Peer>()> peer;
  const std::atomic<bool>& cancelled;
  // The transport's bounds of the call (gRPC's deadline and cancellation); the
  // request's "timeout" parameter (microseconds, as Triton takes it) tightens them.
  CallBounds bounds;
};

// Runs `req`, filling `resp`. Errors are the checks above, and those of running
// (NotFound/Unavailable for the model, DeadlineExceeded, the program's errors).
Status infer(const InferContext& ctx, const inference::ModelInferRequest& req,
             inference::ModelInferResponse& resp);

}  // namespace et::server::kserve
