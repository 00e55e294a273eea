// The daemon's gauges and counters read at each scrape (docs/operations.md lists them):
// sessions, programs, method instances, models, shared memory, packed weights.
#pragma once

#include "server/core/core.h"
#include "server/repository/model_repository.h"

namespace et::server::metrics {

// Adds them to `core.metrics()`. `programs` may be null (no --models). Both must
// outlive every render of the page.
void add_daemon_metrics(Core& core, const repository::ModelRepository* programs);

}  // namespace et::server::metrics
