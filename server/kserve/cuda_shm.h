// Triton's CUDA shared-memory extension: regions a client exported as CUDA IPC
// handles (cudaIpcGetMemHandle), which the daemon opens with the CUDA runtime loaded
// at run time (dlopen of libcudart), so that it builds and runs on machines without
// CUDA. Without a CUDA runtime or a GPU, registration fails and says so; status and
// unregistration work (there is nothing to list or remove).
//
// Regions are per user, as system ones are (shm_registry.h). Opened handles are closed
// when unregistered or when the connections that used them have all closed.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "server/kserve/user_regions.h"
#include "server/transport/listener.h"

namespace et::server::kserve {

class CudaRuntime;  // the loaded libcudart (cuda_shm.cc)

struct CudaRegion {
  std::string region_name;
  int64_t device_id = 0;
  uint64_t size = 0;
  void* device_ptr = nullptr;
  std::shared_ptr<CudaRuntime> cuda;
  ~CudaRegion();  // closes the IPC handle

  const std::string& name() const { return region_name; }
  uint64_t byte_size() const { return size; }
  // Copies between the region and host memory. InvalidArgument outside the region;
  // Internal with CUDA's message when the copy fails.
  Status read(uint64_t at, std::span<uint8_t> out) const;
  Status write(uint64_t at, std::span<const uint8_t> in) const;
};

class CudaShmRegistry {
 public:
  explicit CudaShmRegistry(ShmLimits limits = {})
      : regions_("CUDA region", "register_cuda_shared_memory", limits) {}
  // Opens `raw_handle` (a cudaIpcMemHandle_t, 64 bytes) on `device_id`. NotSupported
  // when this machine has no CUDA runtime or no such device; PermissionDenied for a
  // remote client; InvalidArgument for a malformed handle or a taken name.
  Status add(const Peer& peer, const std::string& name, const std::string& raw_handle,
             int64_t device_id, uint64_t byte_size);
  Status remove(const Peer& peer, const std::string& name);
  Result<std::vector<std::shared_ptr<const CudaRegion>>> list(const Peer& peer,
                                                              const std::string& name) const;
  Result<std::shared_ptr<const CudaRegion>> find(const Peer& peer, const std::string& name);
  void sweep(const std::function<bool(const std::string& connection)>& alive) {
    regions_.sweep(alive);
  }

 private:
  UserRegions<CudaRegion> regions_;
};

}  // namespace et::server::kserve
