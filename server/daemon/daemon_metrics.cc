#include "server/daemon/daemon_metrics.h"

#include <fmt/format.h>

#include "runtime/core/backend.h"
#include "server/core/segment.h"
#include "server/transport/ring/fast_channel.h"

namespace et::server::metrics {

void add_daemon_metrics(Core& core, const repository::ModelRepository* programs) {
  core.metrics().add_collector([&core, programs](std::string& out) {
    out += fmt::format(
        "# HELP et_serverd_build_info The daemon's version.\n"
        "# TYPE et_serverd_build_info gauge\net_serverd_build_info{{version=\"{}\"}} 1\n",
        Core::version());
    write_metric(out, "et_serverd_ready", "gauge",
                 "1 once the model repository has loaded and until the daemon stops.",
                 core.ready() ? 1 : 0);
    write_metric(out, "et_serverd_sessions", "gauge", "Sessions open (the daemon's protocol).",
                 static_cast<double>(core.session_count()));
    write_metric(out, "et_serverd_fast_channels", "gauge", "Fast-path channels open.",
                 static_cast<double>(core.attachment_count()));
    const FastChannelWaits waits = FastChannel::waits();
    out += fmt::format(
        "# HELP et_serverd_fast_path_waits_total How fast-path channels' threads waited for "
        "the next request: polling, or asleep on the doorbell.\n"
        "# TYPE et_serverd_fast_path_waits_total counter\n"
        "et_serverd_fast_path_waits_total{{how=\"spun\"}} {}\n"
        "et_serverd_fast_path_waits_total{{how=\"slept\"}} {}\n"
        "# HELP et_serverd_fast_path_spins_skipped_total Polls not started, or cut short, "
        "because the machine had no CPU to spare.\n"
        "# TYPE et_serverd_fast_path_spins_skipped_total counter\n"
        "et_serverd_fast_path_spins_skipped_total{{reason=\"saturated\"}} {}\n",
        waits.spun, waits.slept, waits.skipped_saturated);
    write_metric(out, "et_serverd_programs", "gauge",
                 "Distinct programs loaded (each held once, whoever uses it).",
                 static_cast<double>(core.shared_programs().size()));
    write_metric(out, "et_serverd_method_instances", "gauge",
                 "Method instances loaded (sessions' and KServe models').",
                 static_cast<double>(MethodSlot::live_instances()));
    write_metric(out, "et_serverd_shared_memory_mapped_bytes", "gauge",
                 "Bytes of clients' shared-memory segments and fast-path channels mapped.",
                 static_cast<double>(Segment::mapped_in_process()));
    for (const auto& backend : BackendRegistry::global().all()) {
      for (const BackendGauge& g : backend->gauges()) {
        write_metric(out, g.name, "gauge", g.help, g.value);
      }
    }
    if (!programs) return;
    write_metric(out, "et_serverd_models_served", "gauge",
                 "Models of the --models repository being served.",
                 static_cast<double>(programs->served_count()));
    out += fmt::format(
        "# HELP et_serverd_repository_loads_total Program loads by the model repository.\n"
        "# TYPE et_serverd_repository_loads_total counter\n"
        "et_serverd_repository_loads_total{{result=\"ok\"}} {}\n"
        "et_serverd_repository_loads_total{{result=\"failed\"}} {}\n",
        programs->loads(), programs->load_failures());
  });
}

}  // namespace et::server::metrics
