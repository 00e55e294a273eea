// One execute of a method on zeros of its declared inputs (tensors of zeros at their
// declared, for a dynamic input their largest, sizes; every other input at its traced
// value), with its unplanned outputs given memory: what the vetting sandbox runs on a
// client's program, and what warm-up runs on a preloaded one before the daemon says it
// is ready (so no first call pays XNNPACK's graph compilation or the first touch of the
// weights).
#pragma once

#include "runtime/core/method.h"
#include "runtime/core/status.h"

namespace et::server {

// Runs `method` once as above within `limits`. Errors: those of set_inputs (a program
// whose inputs zeros cannot stand for) and of the execute.
Status run_on_zeros(Method& method, const ExecuteLimits& limits);

}  // namespace et::server
