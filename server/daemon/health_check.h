// `et-serverd --check [ADDRESS]`: asks a running daemon's standard health service
// (grpc.health.v1, which et-serverd serves) whether it is serving, for scripts and
// container health checks.
#pragma once

#include <chrono>
#include <string>

namespace et::server {

// ADDRESS: a Unix socket path, "unix:PATH" or "HOST:PORT". Prints one line ("SERVING",
// "NOT_SERVING", or why it could not ask) and returns the exit status: 0 serving,
// 1 not serving (starting or stopping), 2 not reachable.
int check_health(const std::string& address, std::chrono::milliseconds timeout);

}  // namespace et::server
