#include "server/kserve/cuda_shm.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>

#include "runtime/core/printable.h"
#include "server/kserve/shm_registry.h"

namespace et::server::kserve {

// The few entry points of the CUDA runtime the extension needs, resolved at run time.
class CudaRuntime {
 public:
  struct IpcHandle {
    char reserved[64];
  };
  static std::shared_ptr<CudaRuntime> load() {
    static std::shared_ptr<CudaRuntime> loaded = [] {
      for (const char* name :
           {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
        if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
          auto rt = std::make_shared<CudaRuntime>();
          rt->lib_ = lib;
          if (rt->resolve()) return rt;
          dlclose(lib);
        }
      }
      return std::shared_ptr<CudaRuntime>();
    }();
    return loaded;
  }
  int device_count() const {
    int n = 0;
    return get_device_count_(&n) == 0 ? n : 0;
  }
  std::string error(int code) const { return get_error_string_(code); }

  int (*get_device_count_)(int*) = nullptr;
  int (*set_device_)(int) = nullptr;
  int (*ipc_open_)(void**, IpcHandle, unsigned) = nullptr;
  int (*ipc_close_)(void*) = nullptr;
  int (*memcpy_)(void*, const void*, size_t, int) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
  // The driver's cuMemGetAddressRange (libcuda): the allocation a device pointer lies
  // in, to check a region against what the handle really maps.
  int (*address_range_)(unsigned long long*, size_t*, unsigned long long) = nullptr;

 private:
  template <typename F>
  bool bind(F& f, const char* symbol) {
    f = reinterpret_cast<F>(dlsym(lib_, symbol));
    return f != nullptr;
  }
  bool resolve() {
    if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
      address_range_ =
          reinterpret_cast<decltype(address_range_)>(dlsym(driver, "cuMemGetAddressRange_v2"));
    }
    return bind(get_device_count_, "cudaGetDeviceCount") && bind(set_device_, "cudaSetDevice") &&
           bind(ipc_open_, "cudaIpcOpenMemHandle") && bind(ipc_close_, "cudaIpcCloseMemHandle") &&
           bind(memcpy_, "cudaMemcpy") && bind(get_error_string_, "cudaGetErrorString");
  }
  void* lib_ = nullptr;
};

namespace {

constexpr int kHostToDevice = 1, kDeviceToHost = 2;
constexpr unsigned kLazyEnablePeerAccess = 1;

Status check_range(const CudaRegion& r, uint64_t at, uint64_t n) {
  if (at > r.size || n > r.size - at) {
    return invalid_argument(
        fmt::format("CUDA region '{}': {} bytes at offset {} reach past its {} bytes",
                    printable(r.region_name), n, at, r.size));
  }
  return Status();
}

}  // namespace

CudaRegion::~CudaRegion() {
  if (device_ptr && cuda) {
    cuda->set_device_(static_cast<int>(device_id));
    cuda->ipc_close_(device_ptr);
  }
}

Status CudaRegion::read(uint64_t at, std::span<uint8_t> out) const {
  ET_RETURN_IF_ERROR(check_range(*this, at, out.size()));
  cuda->set_device_(static_cast<int>(device_id));
  if (int rc = cuda->memcpy_(out.data(), static_cast<const uint8_t*>(device_ptr) + at, out.size(),
                             kDeviceToHost)) {
    return internal_error(fmt::format("CUDA region '{}': copy to the host: {}",
                                      printable(region_name), cuda->error(rc)));
  }
  return Status();
}

Status CudaRegion::write(uint64_t at, std::span<const uint8_t> in) const {
  ET_RETURN_IF_ERROR(check_range(*this, at, in.size()));
  cuda->set_device_(static_cast<int>(device_id));
  if (int rc = cuda->memcpy_(static_cast<uint8_t*>(device_ptr) + at, in.data(), in.size(),
                             kHostToDevice)) {
    return internal_error(fmt::format("CUDA region '{}': copy to the device: {}",
                                      printable(region_name), cuda->error(rc)));
  }
  return Status();
}

Status CudaShmRegistry::add(const Peer& peer, const std::string& name,
                            const std::string& raw_handle, int64_t device_id, uint64_t byte_size) {
  if (!peer.local) return remote_peer_error(peer);
  std::shared_ptr<CudaRuntime> cuda = CudaRuntime::load();
  if (!cuda) {
    return not_supported(
        "CUDA shared memory: this machine has no CUDA runtime (libcudart) for the daemon to "
        "load; use system shared memory (register_system_shared_memory) instead");
  }
  const int devices = cuda->device_count();
  if (devices == 0) {
    return not_supported(
        "CUDA shared memory: this machine has no GPU the CUDA runtime can see; use system "
        "shared memory (register_system_shared_memory) instead");
  }
  if (device_id < 0 || device_id >= devices) {
    return invalid_argument(
        fmt::format("device_id {}: this machine has GPUs 0 to {}", device_id, devices - 1));
  }
  CudaRuntime::IpcHandle handle{};
  if (raw_handle.size() != sizeof(handle)) {
    return invalid_argument(fmt::format("raw_handle: {} bytes; a CUDA IPC handle has {}",
                                        raw_handle.size(), sizeof(handle)));
  }
  if (name.empty()) return invalid_argument("a region needs a name");
  if (regions_.contains(peer, name)) return regions_.taken(name);
  std::memcpy(handle.reserved, raw_handle.data(), sizeof(handle));
  auto region = std::make_shared<CudaRegion>();
  region->region_name = name;
  region->device_id = device_id;
  region->size = byte_size;
  region->cuda = cuda;
  cuda->set_device_(static_cast<int>(device_id));
  if (int rc = cuda->ipc_open_(&region->device_ptr, handle, kLazyEnablePeerAccess)) {
    region->device_ptr = nullptr;
    return invalid_argument(fmt::format("CUDA region '{}': cannot open the IPC handle: {}",
                                        printable(name), cuda->error(rc)));
  }
  // The region must lie inside the allocation the handle maps: byte_size is the
  // client's word, and a copy past the allocation would fault the daemon's CUDA
  // context for every client, or reach another allocation.
  unsigned long long base = 0;
  size_t allocation = 0;
  const auto ptr = reinterpret_cast<unsigned long long>(region->device_ptr);
  if (!cuda->address_range_ || cuda->address_range_(&base, &allocation, ptr) != 0) {
    return not_supported(
        fmt::format("CUDA region '{}': the daemon cannot read the allocation's size (libcuda's "
                    "cuMemGetAddressRange), so it cannot check byte_size; use system shared memory",
                    printable(name)));
  }
  if (ptr < base || byte_size > allocation - (ptr - base)) {
    return invalid_argument(
        fmt::format("CUDA region '{}': byte_size {} is larger than the {} bytes the handle maps",
                    printable(name), byte_size, allocation - (ptr - base)));
  }
  return regions_.insert(peer, std::move(region));
}

Status CudaShmRegistry::remove(const Peer& peer, const std::string& name) {
  if (!peer.local) return remote_peer_error(peer);
  return regions_.remove(peer, name);
}

Result<std::vector<std::shared_ptr<const CudaRegion>>> CudaShmRegistry::list(
    const Peer& peer, const std::string& name) const {
  if (!peer.local) return remote_peer_error(peer);
  return regions_.list(peer, name);
}

Result<std::shared_ptr<const CudaRegion>> CudaShmRegistry::find(const Peer& peer,
                                                                const std::string& name) {
  if (!peer.local) return remote_peer_error(peer);
  return regions_.find(peer, name);
}

}  // namespace et::server::kserve
