// The system shared-memory regions KServe clients registered, by user: a client sees,
// uses and unregisters only the regions its own uid registered (and could open only
// objects its uid owns), so a registration never lets one client read another's
// memory. A registration lasts until it is unregistered or every connection that
// registered or used it has closed (sweep()).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/kserve/listener.h"
#include "server/kserve/shm_region.h"

namespace et::server::kserve {

struct ShmLimits {
  size_t max_regions_per_user = 256;
  uint64_t max_bytes_per_user = uint64_t{64} << 30;  // the sum of the registered sizes
};

class ShmRegistry {
 public:
  explicit ShmRegistry(ShmLimits limits) : limits_(limits) {}

  // Registers `name` for `peer`'s uid (ShmRegion::open's checks). PermissionDenied for
  // a client that is not on this machine; InvalidArgument when the name is taken;
  // ResourceExhausted past the limits.
  Status add(const Peer& peer, const std::string& name, const std::string& key, uint64_t offset,
             uint64_t byte_size);
  // Unregisters `name` of `peer`'s uid, or all of them when `name` is empty.
  // NotFound for an unknown name.
  Status remove(const Peer& peer, const std::string& name);
  // `peer`'s regions: `name`, or all when empty. NotFound for an unknown name.
  Result<std::vector<std::shared_ptr<const ShmRegion>>> list(const Peer& peer,
                                                             const std::string& name) const;
  // The region `name` of `peer`'s uid, noting the peer's connection as one of its
  // users. NotFound naming the region (and saying to register it).
  Result<std::shared_ptr<const ShmRegion>> find(const Peer& peer, const std::string& name);
  // Releases the registrations whose connections have all closed.
  void sweep(const std::function<bool(const std::string& connection)>& alive);
  size_t size() const;

 private:
  struct Registration {
    std::shared_ptr<const ShmRegion> region;
    std::set<std::string> connections;  // that registered or used it
  };
  ShmLimits limits_;
  mutable std::mutex mu_;
  std::map<std::pair<uid_t, std::string>, Registration> regions_;  // GUARDED_BY(mu_)
};

}  // namespace et::server::kserve
