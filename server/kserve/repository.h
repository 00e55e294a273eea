// The KServe model repository: a model for each method of each program in the --models
// directory (preloaded at start, or loaded later with RepositoryModelLoad). Model names
// (docs/kserve.md): "NAME" for the forward method of NAME.pte, "NAME.METHOD" for its
// other methods; one version, "1".
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/kserve/model.h"
#include "server/service_core.h"

namespace et::server::kserve {

class ModelRepository {
 public:
  // `models_dir`: where RepositoryModelLoad finds NAME.pte (empty: loads are refused).
  // `max_instances`: method instances per model (calls of one model run in parallel
  // on that many).
  ModelRepository(ServiceCore& core, std::string models_dir, size_t max_instances);

  // Makes the models of every program the daemon preloaded.
  void add_preloaded();

  // The ready model `name`; `version` empty or "1". NotFound naming what exists;
  // Unavailable (with the reason) for a model that failed to load or was unloaded.
  Result<std::shared_ptr<Model>> find(const std::string& name, const std::string& version) const;
  std::vector<std::shared_ptr<Model>> ready() const;

  struct IndexEntry {
    std::string name, version, state, reason;
  };
  // Every model: ready ones, and those of the directory's programs not loaded.
  std::vector<IndexEntry> index() const;

  // (Re)loads program NAME.pte (with NAME.ptd when present) from the models
  // directory, `name` being the program's or one of its models'. NotFound when there
  // is no such file; the program's load errors.
  Status load(const std::string& name);
  // Unloads the program of model `name` (all its models). NotFound when not loaded.
  Status unload(const std::string& name);

 private:
  // Replaces the models of `program_file` with those of `program` (null: removes them).
  void set_program(const std::string& program_file,
                   std::shared_ptr<const RegisteredProgram> program);
  std::string program_file_of(const std::string& model_name) const;  // REQUIRES: mu_

  ServiceCore& core_;
  std::string models_dir_;
  size_t max_instances_;

  struct Entry {
    std::shared_ptr<Model> model;  // null when not ready
    std::string program_file;
    std::string reason;  // why not ready
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> models_;  // GUARDED_BY(mu_), by model name
};

}  // namespace et::server::kserve
