#include "server/kserve/shm_registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "runtime/printable.h"

namespace et::server::kserve {
namespace {

Status remote_peer(const Peer& peer) {
  return permission_denied(fmt::format(
      "shared memory needs a client on this machine (a Unix socket, or TCP over loopback); "
      "this connection comes from {}: send the tensors in the request instead",
      peer.address.empty() ? "an unknown address" : peer.address));
}

}  // namespace

Status ShmRegistry::add(const Peer& peer, const std::string& name, const std::string& key,
                        uint64_t offset, uint64_t byte_size) {
  if (!peer.local) return remote_peer(peer);
  if (name.empty() || name.size() > 255) {
    return invalid_argument("a region needs a name of 1 to 255 bytes");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (regions_.count({peer.uid, name})) {
      return invalid_argument(
          fmt::format("region '{}' is registered already; unregister it first", printable(name)));
    }
  }
  ET_ASSIGN_OR_RETURN(std::shared_ptr<ShmRegion> region,
                      ShmRegion::open(name, key, offset, byte_size, peer.uid));
  std::lock_guard<std::mutex> lock(mu_);
  size_t count = 0;
  uint64_t bytes = 0;
  for (const auto& [k, r] : regions_) {
    if (k.first != peer.uid) continue;
    ++count;
    bytes += r.region->byte_size();
  }
  if (count >= limits_.max_regions_per_user) {
    return resource_exhausted(fmt::format(
        "uid {} has {} regions registered, the limit (--kserve-max-regions); unregister some",
        peer.uid, count));
  }
  if (byte_size > limits_.max_bytes_per_user - std::min(bytes, limits_.max_bytes_per_user)) {
    return resource_exhausted(
        fmt::format("uid {} has {} bytes registered; {} more is over the limit of {} "
                    "(--kserve-max-region-bytes); unregister some",
                    peer.uid, bytes, byte_size, limits_.max_bytes_per_user));
  }
  auto [it, added] = regions_.try_emplace({peer.uid, name});
  if (!added) {
    return invalid_argument(
        fmt::format("region '{}' is registered already; unregister it first", printable(name)));
  }
  it->second.region = std::move(region);
  if (!peer.connection.empty()) it->second.connections.insert(peer.connection);
  spdlog::debug("kserve: uid {} registered region {} ({} bytes of {})", peer.uid, printable(name),
                byte_size, printable(key));
  return Status();
}

Status ShmRegistry::remove(const Peer& peer, const std::string& name) {
  if (!peer.local) return remote_peer(peer);
  std::lock_guard<std::mutex> lock(mu_);
  if (name.empty()) {
    for (auto it = regions_.begin(); it != regions_.end();) {
      it = it->first.first == peer.uid ? regions_.erase(it) : std::next(it);
    }
    return Status();
  }
  if (regions_.erase({peer.uid, name}) == 0) {
    return not_found(fmt::format("no region '{}' is registered", printable(name)));
  }
  return Status();
}

Result<std::vector<std::shared_ptr<const ShmRegion>>> ShmRegistry::list(
    const Peer& peer, const std::string& name) const {
  if (!peer.local) return remote_peer(peer);
  std::vector<std::shared_ptr<const ShmRegion>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, r] : regions_) {
    if (k.first == peer.uid && (name.empty() || k.second == name)) out.push_back(r.region);
  }
  if (!name.empty() && out.empty()) {
    return not_found(fmt::format("no region '{}' is registered", printable(name)));
  }
  return out;
}

Result<std::shared_ptr<const ShmRegion>> ShmRegistry::find(const Peer& peer,
                                                           const std::string& name) {
  if (!peer.local) return remote_peer(peer);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.find({peer.uid, name});
  if (it == regions_.end()) {
    return not_found(
        fmt::format("shared-memory region '{}' is not registered (register it with "
                    "register_system_shared_memory first; regions are per user, and end when every "
                    "connection that used them has closed)",
                    printable(name)));
  }
  if (!peer.connection.empty()) it->second.connections.insert(peer.connection);
  return it->second.region;
}

void ShmRegistry::sweep(const std::function<bool(const std::string&)>& alive) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = regions_.begin(); it != regions_.end();) {
    auto& users = it->second.connections;
    for (auto c = users.begin(); c != users.end();) c = alive(*c) ? std::next(c) : users.erase(c);
    if (users.empty()) {
      spdlog::debug("kserve: region {} of uid {} released (its connections closed)",
                    printable(it->first.second), it->first.first);
      it = regions_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t ShmRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return regions_.size();
}

}  // namespace et::server::kserve
