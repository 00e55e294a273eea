#include "server/kserve/model_catalog.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "runtime/core/printable.h"

namespace et::server::kserve {
namespace {

std::string model_name(const std::string& program_model, const std::string& method) {
  return method == "forward" ? program_model : program_model + "." + method;
}

Status no_repository() {
  return failed_precondition(
      "the daemon has no model repository: start it with --models DIR to load models");
}

}  // namespace

ModelCatalog::ModelCatalog(Core& core, repository::ModelRepository* programs, size_t max_instances)
    : core_(core), programs_(programs), max_instances_(max_instances) {
  if (programs_) {
    programs_->observe([this](const std::string& model, uint64_t version,
                              const std::shared_ptr<const SharedProgram>& program) {
      set_program(model, version, program);
    });
  }
}

void ModelCatalog::set_program(const std::string& program_model, uint64_t version,
                               const std::shared_ptr<const SharedProgram>& program) {
  std::map<std::string, Entry> made;
  const std::string version_text = std::to_string(version);
  if (program) {
    for (const std::string& method : program->program->method_names()) {
      const std::string name = model_name(program_model, method);
      auto model =
          Model::create(core_, name, version_text, program_model, program, method, max_instances_);
      Entry e{nullptr, program_model, version_text, ""};
      if (model.ok()) {
        e.model = *model;
      } else {
        e.reason = model.status().to_string();
        spdlog::warn("kserve: model {} is unavailable: {}", printable(name), printable(e.reason));
      }
      made[name] = std::move(e);
    }
  }
  MutexLock lock(mu_);
  for (auto it = models_.begin(); it != models_.end();) {
    it = it->second.program_model == program_model ? models_.erase(it) : std::next(it);
  }
  for (auto& [name, e] : made) {
    auto [it, added] = models_.try_emplace(name, std::move(e));
    if (!added) {
      spdlog::warn("kserve: {} of model {} is also the name of a model of {}; that one is served",
                   printable(name), printable(program_model), printable(it->second.program_model));
    }
  }
}

Result<std::shared_ptr<Model>> ModelCatalog::find(const std::string& name,
                                                  const std::string& version) const {
  MutexLock lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    std::string known;
    for (const auto& [n, e] : models_) {
      if (known.size() > 200) {
        known += ", ...";
        break;
      }
      known += (known.empty() ? "" : ", ") + n;
    }
    return not_found(
        fmt::format("model '{}' is not loaded (models: {}); RepositoryIndex lists the models of "
                    "the --models directory",
                    printable(name), known.empty() ? "none" : known));
  }
  if (!version.empty() && version != it->second.version) {
    return not_found(fmt::format("model '{}' has no version '{}' being served; version {} is",
                                 printable(name), printable(version), it->second.version));
  }
  if (!it->second.model) {
    return unavailable(
        fmt::format("model '{}' is not ready: {}", printable(name), it->second.reason));
  }
  return it->second.model;
}

std::vector<std::shared_ptr<Model>> ModelCatalog::ready() const {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<Model>> out;
  for (const auto& [n, e] : models_) {
    if (e.model) out.push_back(e.model);
  }
  return out;
}

std::vector<ModelCatalog::IndexEntry> ModelCatalog::index() const {
  std::vector<IndexEntry> out;
  {
    MutexLock lock(mu_);
    for (const auto& [name, e] : models_) {
      out.push_back({name, e.version, e.model ? "READY" : "UNAVAILABLE", e.reason});
    }
  }
  if (!programs_) return out;
  for (const repository::ModelState& s : programs_->index()) {
    if (s.ready) continue;  // its methods are listed above
    out.push_back({s.model, s.version ? std::to_string(s.version) : "", "UNAVAILABLE", s.reason});
  }
  return out;
}

std::string ModelCatalog::program_model_of(const std::string& name) const {
  {
    MutexLock lock(mu_);
    if (auto it = models_.find(name); it != models_.end()) return it->second.program_model;
  }
  if (!programs_) return name;
  // Not loaded: "NAME.METHOD" of a model NAME of the directory, or a model's own name.
  std::set<std::string> known;
  for (const repository::ModelState& s : programs_->index()) known.insert(s.model);
  for (std::string stem = name;; stem = stem.substr(0, stem.rfind('.'))) {
    if (known.count(stem)) return stem;
    if (stem.find('.') == std::string::npos) return name;
  }
}

Status ModelCatalog::load(const std::string& name) {
  if (!programs_) return no_repository();
  return programs_->load(program_model_of(name));
}

Status ModelCatalog::unload(const std::string& name) {
  if (!programs_) return no_repository();
  return programs_->unload(program_model_of(name));
}

}  // namespace et::server::kserve
