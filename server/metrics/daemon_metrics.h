// The daemon's gauges and counters read at each scrape (docs/operations.md lists them):
// sessions, programs, method instances, models, shared memory, packed weights.
#pragma once

#include "server/repository/program_repository.h"
#include "server/service_core.h"

namespace et::server::metrics {

// Adds them to `core.metrics()`. `programs` may be null (no --models). Both must
// outlive every render of the page.
void add_daemon_metrics(ServiceCore& core, const repository::ProgramRepository* programs);

}  // namespace et::server::metrics
