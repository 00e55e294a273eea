#include "server/kserve/repository.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <set>

#include "runtime/printable.h"

namespace et::server::kserve {
namespace {

std::string stem_of(const std::string& program_file) {
  return std::filesystem::path(program_file).stem().string();
}

std::string model_name(const std::string& program_file, const std::string& method) {
  return method == "forward" ? stem_of(program_file) : stem_of(program_file) + "." + method;
}

// A model or program name a client may give: no path, nothing hidden.
bool plain_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos && name[0] != '.';
}

}  // namespace

ModelRepository::ModelRepository(ServiceCore& core, std::string models_dir, size_t max_instances)
    : core_(core), models_dir_(std::move(models_dir)), max_instances_(max_instances) {}

void ModelRepository::add_preloaded() {
  for (const std::string& file : core_.registry().preloaded_names()) {
    set_program(file, core_.registry().find_preloaded(file));
  }
}

void ModelRepository::set_program(const std::string& program_file,
                                  std::shared_ptr<const RegisteredProgram> program) {
  std::map<std::string, Entry> made;
  if (program) {
    for (const std::string& method : program->program->method_names()) {
      const std::string name = model_name(program_file, method);
      auto model = Model::create(core_, name, program_file, program, method, max_instances_);
      Entry e{nullptr, program_file, ""};
      if (model.ok()) {
        e.model = *model;
      } else {
        e.reason = model.status().to_string();
        spdlog::warn("kserve: model {} is unavailable: {}", printable(name), printable(e.reason));
      }
      made[name] = std::move(e);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = models_.begin(); it != models_.end();) {
    it = it->second.program_file == program_file ? models_.erase(it) : std::next(it);
  }
  for (auto& [name, e] : made) {
    auto [it, added] = models_.try_emplace(name, std::move(e));
    if (!added) {
      spdlog::warn("kserve: {} of {} is also the name of a model of {}; that one is served",
                   printable(name), printable(program_file), printable(it->second.program_file));
    }
  }
}

Result<std::shared_ptr<Model>> ModelRepository::find(const std::string& name,
                                                     const std::string& version) const {
  std::lock_guard<std::mutex> lock(mu_);
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
        fmt::format("model '{}' is not loaded (models: {}); RepositoryIndex lists the models, "
                    "RepositoryModelLoad loads one from the --models directory",
                    printable(name), known.empty() ? "none" : known));
  }
  if (!version.empty() && version != "1") {
    return not_found(fmt::format("model '{}' has no version '{}'; its one version is \"1\"",
                                 printable(name), printable(version)));
  }
  if (!it->second.model) {
    return unavailable(
        fmt::format("model '{}' is not ready: {}", printable(name), it->second.reason));
  }
  return it->second.model;
}

std::vector<std::shared_ptr<Model>> ModelRepository::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<Model>> out;
  for (const auto& [n, e] : models_) {
    if (e.model) out.push_back(e.model);
  }
  return out;
}

std::vector<ModelRepository::IndexEntry> ModelRepository::index() const {
  std::vector<IndexEntry> out;
  std::set<std::string> listed_files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, e] : models_) {
      out.push_back({name, "1", e.model ? "READY" : "UNAVAILABLE", e.reason});
      listed_files.insert(e.program_file);
    }
  }
  if (models_dir_.empty()) return out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(models_dir_, ec)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".pte" || listed_files.count(file)) continue;
    out.push_back({stem_of(file), "", "UNAVAILABLE", "not loaded (RepositoryModelLoad loads it)"});
  }
  return out;
}

std::string ModelRepository::program_file_of(const std::string& model) const {
  auto it = models_.find(model);
  return it == models_.end() ? "" : it->second.program_file;
}

Status ModelRepository::load(const std::string& name) {
  if (models_dir_.empty()) {
    return failed_precondition(
        "the daemon has no model repository: start it with --models DIR to load models");
  }
  if (!plain_name(name)) {
    return invalid_argument(
        fmt::format("model name '{}': give a file name in the --models directory, without a path",
                    printable(name)));
  }
  std::string file;
  {
    std::lock_guard<std::mutex> lock(mu_);
    file = program_file_of(name);
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (file.empty()) {
    // NAME.pte, or for NAME.METHOD, the program NAME.pte.
    for (std::string stem = name;; stem = stem.substr(0, stem.rfind('.'))) {
      if (fs::is_regular_file(fs::path(models_dir_) / (stem + ".pte"), ec)) {
        file = stem + ".pte";
        break;
      }
      if (stem.find('.') == std::string::npos) break;
    }
  }
  if (file.empty()) {
    return not_found(
        fmt::format("no program {}.pte in the model repository {}", printable(name), models_dir_));
  }
  const fs::path path = fs::path(models_dir_) / file;
  fs::path data = path;
  data.replace_extension(".ptd");
  const bool has_data = fs::is_regular_file(data, ec);
  ET_RETURN_IF_ERROR(
      core_.registry().preload(path.string(), file, has_data ? data.string() : std::string()));
  set_program(file, core_.registry().find_preloaded(file));
  spdlog::info("kserve: loaded {}", file);
  return Status();
}

Status ModelRepository::unload(const std::string& name) {
  std::string file;
  {
    std::lock_guard<std::mutex> lock(mu_);
    file = program_file_of(name);
  }
  if (file.empty()) {
    return not_found(fmt::format("model '{}' is not loaded", printable(name)));
  }
  core_.registry().unload_preloaded(file);
  set_program(file, nullptr);
  spdlog::info("kserve: unloaded {}", file);
  return Status();
}

}  // namespace et::server::kserve
