// The KServe models: one for each method of each program the daemon's model repository
// (server/repository/) serves, rebuilt as it changes. Model names (docs/kserve.md):
// "NAME" for the forward method of model NAME, "NAME.METHOD" for its other methods;
// their version is the repository's.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "port/mutex.h"
#include "server/core/core.h"
#include "server/kserve/model.h"
#include "server/repository/model_repository.h"

namespace et::server::kserve {

class ModelCatalog {
 public:
  // Models of what `programs` serves (null: the daemon has no --models directory; then
  // there are no models and loads are refused). `max_instances`: method instances per
  // model (calls of one model run in parallel on that many).
  // REQUIRES: `programs` not started yet (this observes it from the constructor on).
  ModelCatalog(Core& core, repository::ModelRepository* programs, size_t max_instances);

  // The ready model `name`; `version` empty or the one served. NotFound naming what
  // exists; Unavailable (with the reason) for a model whose program cannot run.
  Result<std::shared_ptr<Model>> find(const std::string& name, const std::string& version) const;
  std::vector<std::shared_ptr<Model>> ready() const;

  struct IndexEntry {
    std::string name, version, state, reason;
  };
  // Every model: the ready ones, and the repository's versions and models not loaded.
  std::vector<IndexEntry> index() const;

  // The repository's load and unload (explicit mode), `name` being a model of the
  // repository or one of its "NAME.METHOD" models.
  Status load(const std::string& name);
  Status unload(const std::string& name);

 private:
  // Replaces the models of repository model `program_model` (null: removes them).
  void set_program(const std::string& program_model, uint64_t version,
                   const std::shared_ptr<const SharedProgram>& program);
  // The repository's model for KServe model `name` ("NAME" of "NAME.METHOD").
  std::string program_model_of(const std::string& name) const;

  Core& core_;
  repository::ModelRepository* programs_;
  size_t max_instances_;

  struct Entry {
    std::shared_ptr<Model> model;  // null when not ready
    std::string program_model;
    std::string version;
    std::string reason;  // why not ready
  };
  mutable Mutex mu_;
  std::map<std::string, Entry> models_ ET_GUARDED_BY(mu_);  // by model name
};

}  // namespace et::server::kserve
