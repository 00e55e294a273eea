// Programs by content: one loaded Program per distinct byte content (SHA-256), shared
// by every session that loads it, unloaded when the last session lets go unless it
// was preloaded (then kept warm).
#pragma once

#include <atomic>
#include <condition_variable>
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
  std::string data_sha256;  // of its external data file (.ptd), or empty
  std::string name;         // preloaded file name, or empty
  size_t size_bytes = 0;
  size_t data_size_bytes = 0;
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
  // The program with this hash (and external data with `data_sha256`; empty: none), if
  // some session (or the preload) holds it; else null.
  std::shared_ptr<const RegisteredProgram> find(const std::string& sha256,
                                                const std::string& data_sha256 = {}) const;
  // The preloaded program named `name`, or null.
  std::shared_ptr<const RegisteredProgram> find_preloaded(const std::string& name) const;

  // Loads `bytes` (copied), with `data` (copied; empty: no external data file), unless a
  // program with the same content is held already, or being loaded by another call
  // (which it then waits for): the bytes are hashed where they are first, and copied
  // only to be loaded. Each expected hash, when not empty, must match its bytes. The
  // bytes are always hashed: a known hash alone never stands in for them. Returns the
  // shared entry and whether it existed.
  // Errors: InvalidArgument on a hash mismatch; DataFile::load's and Program::load's.
  Result<std::pair<std::shared_ptr<const RegisteredProgram>, bool>> add(
      std::span<const uint8_t> bytes, const std::string& expected_sha256,
      std::span<const uint8_t> data = {}, const std::string& expected_data_sha256 = {});

  // Reads the file at `path` (with the external data file at `data_path` unless empty)
  // and keeps it loaded for the daemon's lifetime under `name`. Errors: IoError naming
  // the file, and those of add().
  Status preload(const std::string& path, const std::string& name,
                 const std::string& data_path = {});

  std::vector<std::string> preloaded_names() const;
  // Distinct programs currently loaded.
  size_t size() const;
  // Programs copied and parsed since the start (each add() that did not find its
  // content loaded or being loaded).
  uint64_t parsed() const { return parsed_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  // Entries live while a session (or preloaded_) holds them.
  mutable std::map<std::string, std::weak_ptr<const RegisteredProgram>>
      by_hash_;                                                                // GUARDED_BY(mu_)
  std::map<std::string, std::shared_ptr<const RegisteredProgram>> preloaded_;  // GUARDED_BY(mu_)
  // Contents being copied and parsed by an add(); another add() of the same content
  // waits for it (loaded_ is notified) instead of copying and parsing it again.
  std::set<std::string> loading_;  // GUARDED_BY(mu_)
  std::condition_variable loaded_;
  std::atomic<uint64_t> parsed_{0};
};

}  // namespace et::server
