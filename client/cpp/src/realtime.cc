#include "port/realtime.h"

#include <cerrno>

#include "etclient/client.h"

namespace etclient {

Status enter_realtime_class(const std::string& policy, const std::string& cpus) {
  et::RealtimeClass rt;
  if (std::string error = et::parse_realtime_class(policy, rt); !error.empty()) {
    return Status(StatusCode::kInvalidArgument, "real-time class " + error);
  }
  if (!cpus.empty()) {
    if (std::string error = et::parse_cpu_list(cpus, rt.cpus); !error.empty()) {
      return Status(StatusCode::kInvalidArgument, "real-time CPUs: " + error);
    }
  }
  if (const int error = et::enter_realtime_class(rt); error != 0) {
    return Status(error == EPERM ? StatusCode::kPermissionDenied : StatusCode::kInvalidArgument,
                  et::realtime_refusal(rt, error));
  }
  return Status();
}

}  // namespace etclient
