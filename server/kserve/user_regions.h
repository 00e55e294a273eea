// The table behind both shared-memory registries (system: shm_registry.h, CUDA:
// cuda_shm.h): regions by (user, name), each with the connections that registered or
// used it. A client sees only its own user's regions; a region is released when
// removed, or when sweep() finds none of its connections alive.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/printable.h"
#include "runtime/core/status.h"
#include "server/transport/listener.h"

namespace et::server::kserve {

struct ShmLimits {
  size_t max_regions_per_user = 256;
  uint64_t max_bytes_per_user = uint64_t{64} << 30;  // the sum of the registered sizes
};

// R has `name()` and `byte_size()`.
template <typename R>
class UserRegions {
 public:
  // `kind` names the regions in messages ("region", "CUDA region"), `register_call`
  // the client call that registers one.
  UserRegions(std::string kind, std::string register_call, ShmLimits limits)
      : kind_(std::move(kind)), register_call_(std::move(register_call)), limits_(limits) {}

  // Whether `peer`'s user has a region `name` (a cheap check before opening one).
  bool contains(const Peer& peer, const std::string& name) const {
    MutexLock lock(mu_);
    return regions_.count({peer.uid, name}) != 0;
  }

  // Adds `region` for `peer`'s user. InvalidArgument when the name is taken;
  // ResourceExhausted past the limits.
  Status insert(const Peer& peer, std::shared_ptr<const R> region) {
    MutexLock lock(mu_);
    size_t count = 0;
    uint64_t bytes = 0;
    for (const auto& [key, r] : regions_) {
      if (key.first != peer.uid) continue;
      ++count;
      bytes += r.region->byte_size();
    }
    if (regions_.count({peer.uid, region->name()})) return taken(region->name());
    if (count >= limits_.max_regions_per_user) {
      return resource_exhausted(fmt::format(
          "uid {} has {} regions registered, the limit (--kserve-max-regions); unregister some",
          peer.uid, count));
    }
    if (region->byte_size() >
        limits_.max_bytes_per_user - std::min(bytes, limits_.max_bytes_per_user)) {
      return resource_exhausted(
          fmt::format("uid {} has {} bytes registered; {} more is over the limit of {} "
                      "(--kserve-max-region-bytes); unregister some",
                      peer.uid, bytes, region->byte_size(), limits_.max_bytes_per_user));
    }
    Entry& e = regions_[{peer.uid, region->name()}];
    e.region = std::move(region);
    if (!peer.connection.empty()) e.connections.insert(peer.connection);
    return Status();
  }

  Status taken(const std::string& name) const {
    return invalid_argument(
        fmt::format("{} '{}' is registered already; unregister it first", kind_, printable(name)));
  }

  // Removes `name` of `peer`'s user, or all of them when `name` is empty. NotFound for
  // an unknown name.
  Status remove(const Peer& peer, const std::string& name) {
    MutexLock lock(mu_);
    if (name.empty()) {
      for (auto it = regions_.begin(); it != regions_.end();) {
        it = it->first.first == peer.uid ? regions_.erase(it) : std::next(it);
      }
      return Status();
    }
    if (regions_.erase({peer.uid, name}) == 0) return unknown(name);
    return Status();
  }

  // `peer`'s user's regions: `name`, or all when empty. NotFound for an unknown name.
  Result<std::vector<std::shared_ptr<const R>>> list(const Peer& peer,
                                                     const std::string& name) const {
    std::vector<std::shared_ptr<const R>> out;
    MutexLock lock(mu_);
    for (const auto& [key, e] : regions_) {
      if (key.first == peer.uid && (name.empty() || key.second == name)) out.push_back(e.region);
    }
    if (!name.empty() && out.empty()) return unknown(name);
    return out;
  }

  // The region `name` of `peer`'s user, noting the peer's connection as one of its
  // users. NotFound saying how to register one.
  Result<std::shared_ptr<const R>> find(const Peer& peer, const std::string& name) {
    MutexLock lock(mu_);
    auto it = regions_.find({peer.uid, name});
    if (it == regions_.end()) {
      return not_found(fmt::format(
          "shared-memory {} '{}' is not registered (register it with {} first; regions are per "
          "user, and end when every connection that used them has closed)",
          kind_, printable(name), register_call_));
    }
    if (!peer.connection.empty()) it->second.connections.insert(peer.connection);
    return it->second.region;
  }

  // Releases the regions whose connections have all closed.
  void sweep(const std::function<bool(const std::string& connection)>& alive) {
    MutexLock lock(mu_);
    for (auto it = regions_.begin(); it != regions_.end();) {
      auto& users = it->second.connections;
      for (auto c = users.begin(); c != users.end();) c = alive(*c) ? std::next(c) : users.erase(c);
      if (!users.empty()) {
        ++it;
        continue;
      }
      spdlog::debug("kserve: {} {} of uid {} released (its connections closed)", kind_,
                    printable(it->first.second), it->first.first);
      it = regions_.erase(it);
    }
  }

  size_t size() const {
    MutexLock lock(mu_);
    return regions_.size();
  }

 private:
  Status unknown(const std::string& name) const {
    return not_found(fmt::format("no {} '{}' is registered", kind_, printable(name)));
  }

  struct Entry {
    std::shared_ptr<const R> region;
    std::set<std::string> connections;  // that registered or used it
  };
  std::string kind_, register_call_;
  ShmLimits limits_;
  mutable Mutex mu_;
  std::map<std::pair<uid_t, std::string>, Entry> regions_ ET_GUARDED_BY(mu_);
};

}  // namespace et::server::kserve
