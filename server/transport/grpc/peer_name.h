// What gRPC's peer names say about a caller.
#pragma once

#include <string>

namespace et::server {

// gRPC names a TCP peer "ipv4:10.0.0.7:53412" or "ipv6:[::1]:53412": its host without
// the port (which differs per connection); empty for any other peer ("unix:...",
// "fd:...": local clients).
inline std::string tcp_host_of(const std::string& grpc_peer) {
  if (grpc_peer.rfind("ipv4:", 0) != 0 && grpc_peer.rfind("ipv6:", 0) != 0) return "";
  const size_t colon = grpc_peer.rfind(':');
  return colon == std::string::npos ? grpc_peer : grpc_peer.substr(0, colon);
}

}  // namespace et::server
