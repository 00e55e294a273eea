#include "server/kserve/shm_registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "runtime/core/printable.h"

namespace et::server::kserve {

Status remote_peer_error(const Peer& peer) {
  return permission_denied(fmt::format(
      "shared memory needs a client on this machine (a Unix socket, or TCP over loopback); "
      "this connection comes from {}: send the tensors in the request instead",
      peer.address.empty() ? "an unknown address" : peer.address));
}

Status ShmRegistry::add(const Peer& peer, const std::string& name, const std::string& key,
                        uint64_t offset, uint64_t byte_size) {
  if (!peer.local) return remote_peer_error(peer);
  if (name.empty() || name.size() > 255) {
    return invalid_argument("a region needs a name of 1 to 255 bytes");
  }
  if (regions_.contains(peer, name)) return regions_.taken(name);
  ET_ASSIGN_OR_RETURN(std::shared_ptr<ShmRegion> region,
                      ShmRegion::open(name, key, offset, byte_size, peer.uid));
  ET_RETURN_IF_ERROR(regions_.insert(peer, std::move(region)));
  spdlog::debug("kserve: uid {} registered region {} ({} bytes of {})", peer.uid, printable(name),
                byte_size, printable(key));
  return Status();
}

Status ShmRegistry::remove(const Peer& peer, const std::string& name) {
  if (!peer.local) return remote_peer_error(peer);
  return regions_.remove(peer, name);
}

Result<std::vector<std::shared_ptr<const ShmRegion>>> ShmRegistry::list(
    const Peer& peer, const std::string& name) const {
  if (!peer.local) return remote_peer_error(peer);
  return regions_.list(peer, name);
}

Result<std::shared_ptr<const ShmRegion>> ShmRegistry::find(const Peer& peer,
                                                           const std::string& name) {
  if (!peer.local) return remote_peer_error(peer);
  return regions_.find(peer, name);
}

}  // namespace et::server::kserve
