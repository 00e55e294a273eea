#include "runtime/core/backend.h"

#include <fmt/format.h>

namespace et {

BackendRegistry& BackendRegistry::global() {
  static BackendRegistry* registry = new BackendRegistry();  // never destroyed: used at exit
  return *registry;
}

Status BackendRegistry::add(std::string id, std::shared_ptr<const Backend> backend) {
  MutexLock lock(mu_);
  if (!backends_.emplace(id, std::move(backend)).second) {
    return invalid_argument(fmt::format("backend '{}' is registered twice", id));
  }
  return Status();
}

std::shared_ptr<const Backend> BackendRegistry::find(std::string_view id) const {
  MutexLock lock(mu_);
  auto it = backends_.find(id);
  return it == backends_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const Backend>> BackendRegistry::all() const {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<const Backend>> out;
  for (const auto& [id, backend] : backends_) out.push_back(backend);
  return out;
}

std::vector<std::string> BackendRegistry::ids() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, b] : backends_) out.push_back(id);
  return out;
}

}  // namespace et
