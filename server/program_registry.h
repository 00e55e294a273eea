// Programs by content: one loaded Program per distinct byte content (SHA-256), shared
// by every session that loads it, unloaded when the last session lets go unless it
// was preloaded (then kept warm).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "runtime/program.h"
#include "runtime/status.h"

namespace et::server {

struct RegisteredProgram {
  ~RegisteredProgram();  // logs the unload
  std::string sha256;
  std::string name;  // preloaded file name, or empty
  size_t size_bytes = 0;
  std::shared_ptr<const Program> program;

  // Who sent the bytes: a hash is a capability only for them. Peers are
  // ServiceCore's peer keys (empty for local clients, which share one uid).
  void note_uploader(const std::string& peer) const;
  bool uploaded_by(const std::string& peer) const;

 private:
  mutable std::mutex uploaders_mu_;
  mutable std::set<std::string> uploaders_;  // GUARDED_BY(uploaders_mu_)
};

// Thread-safe.
class ProgramRegistry {
 public:
  // The program with this hash, if some session (or the preload) holds it; else null.
  std::shared_ptr<const RegisteredProgram> find(const std::string& sha256) const;
  // The preloaded program named `name`, or null.
  std::shared_ptr<const RegisteredProgram> find_preloaded(const std::string& name) const;

  // Loads `bytes` (copied) unless a program with the same content is held already;
  // `expected_sha256`, when not empty, must match. Returns the shared entry and whether
  // it existed. Errors: InvalidArgument on a hash mismatch; Program::load's errors.
  Result<std::pair<std::shared_ptr<const RegisteredProgram>, bool>> add(
      std::span<const uint8_t> bytes, const std::string& expected_sha256);

  // Maps the file at `path` and keeps it loaded for the daemon's lifetime under
  // `name`. Errors: those of Program::load_file.
  Status preload(const std::string& path, const std::string& name);

  std::vector<std::string> preloaded_names() const;
  // Distinct programs currently loaded.
  size_t size() const;

 private:
  mutable std::mutex mu_;
  // Entries live while a session (or preloaded_) holds them.
  mutable std::map<std::string, std::weak_ptr<const RegisteredProgram>>
      by_hash_;                                                                // GUARDED_BY(mu_)
  std::map<std::string, std::shared_ptr<const RegisteredProgram>> preloaded_;  // GUARDED_BY(mu_)
};

}  // namespace et::server
