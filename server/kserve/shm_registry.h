// The system shared-memory regions KServe clients registered (shm_region.h opens and
// checks each), kept per user by UserRegions (user_regions.h): a client sees, uses and
// unregisters only its own user's regions, and could register only objects its user
// owns, so a registration never lets one client read another's memory. Clients not on
// this machine get PermissionDenied for every call.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/kserve/shm_region.h"
#include "server/kserve/user_regions.h"
#include "server/transport/listener.h"

namespace et::server::kserve {

class ShmRegistry {
 public:
  explicit ShmRegistry(ShmLimits limits)
      : regions_("region", "register_system_shared_memory", limits) {}

  // Registers `name` for `peer`'s user (ShmRegion::open's checks, UserRegions'
  // limits). InvalidArgument when the name is taken.
  Status add(const Peer& peer, const std::string& name, const std::string& key, uint64_t offset,
             uint64_t byte_size);
  // Unregisters `name` of `peer`'s user, or all of them when `name` is empty.
  Status remove(const Peer& peer, const std::string& name);
  Result<std::vector<std::shared_ptr<const ShmRegion>>> list(const Peer& peer,
                                                             const std::string& name) const;
  Result<std::shared_ptr<const ShmRegion>> find(const Peer& peer, const std::string& name);
  void sweep(const std::function<bool(const std::string& connection)>& alive) {
    regions_.sweep(alive);
  }
  size_t size() const { return regions_.size(); }

 private:
  UserRegions<ShmRegion> regions_;
};

// PermissionDenied for a client that is not on this machine: shared memory is local.
Status remote_peer_error(const Peer& peer);

}  // namespace et::server::kserve
