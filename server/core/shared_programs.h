// Programs by content: one loaded Program per distinct byte content (SHA-256), shared
// by every session that loads it, unloaded when the last session lets go unless it
// was preloaded (then kept warm).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/program.h"
#include "runtime/core/status.h"

namespace et::server {

struct SharedProgram {
  ~SharedProgram();  // logs the unload
  std::string sha256;
  std::string data_sha256;  // of its external data file (.ptd), or empty
  std::string name;         // preloaded file name, or empty
  size_t size_bytes = 0;
  size_t data_size_bytes = 0;
  std::shared_ptr<const Program> program;

  // Who sent the bytes: a hash is a capability only for them. Peers are
  // Core's peer keys (empty for local clients, which share one uid).
  void note_uploader(const std::string& peer) const;
  bool uploaded_by(const std::string& peer) const;

 private:
  mutable Mutex uploaders_mu_;
  mutable std::set<std::string> uploaders_ ET_GUARDED_BY(uploaders_mu_);
};

// Thread-safe.
class SharedPrograms {
 public:
  // The program with this hash (and external data with `data_sha256`; empty: none), if
  // some session (or the preload) holds it; else null.
  std::shared_ptr<const SharedProgram> find(const std::string& sha256,
                                            const std::string& data_sha256 = {}) const;
  // find(), except when another caller (`asker` differs) was just told this content is
  // missing and is expected to send it: then waits for that upload (at most `max_wait`)
  // and returns its program, so that many sessions starting at once send a program
  // once. Null means the caller is now the one expected to send the bytes (for
  // `max_wait`; after that, or once an add() of the content ends, others stop waiting).
  // Only callers of one `peer` (Core's peer key) wait for each other; each waits
  // at most `max_wait` from its call, and not at all once stop_waiting() was called.
  std::shared_ptr<const SharedProgram> find_or_await_upload(const std::string& sha256,
                                                            const std::string& data_sha256,
                                                            uint64_t asker, const std::string& peer,
                                                            std::chrono::milliseconds max_wait);
  // `asker`'s upload of this content ended without add() (refused before it): the
  // others stop waiting for it.
  void release_claim(const std::string& sha256, const std::string& data_sha256, uint64_t asker);
  // The daemon is stopping: every wait ends now, and none starts.
  void stop_waiting();
  // The session `asker` ended: nobody waits any longer for uploads it was told to send.
  void forget_asker(uint64_t asker);
  // The preloaded program named `name`, or null. While the daemon's model repository
  // is loading at start (set_repository_loading), waits for that to end, at most
  // `max_wait`, before answering null.
  std::shared_ptr<const SharedProgram> find_preloaded(
      const std::string& name, std::chrono::milliseconds max_wait = {}) const;
  // Whether the model repository is loading its programs at start (find_preloaded waits).
  void set_repository_loading(bool loading);

  // Loads `bytes` (copied), with `data` (copied; empty: no external data file), unless a
  // program with the same content is held already, or being loaded by another call
  // (which it then waits for): the bytes are hashed where they are first, and copied
  // only to be loaded. Each expected hash, when not empty, must match its bytes. The
  // bytes are always hashed: a known hash alone never stands in for them. Returns the
  // shared entry and whether it existed.
  // Errors: InvalidArgument on a hash mismatch; DataFile::load's and Program::load's.
  // `uploader` (the sending session's peer key; empty for local clients) is noted as
  // having sent the content before any other caller can find it.
  Result<std::pair<std::shared_ptr<const SharedProgram>, bool>> add(
      std::span<const uint8_t> bytes, const std::string& expected_sha256,
      std::span<const uint8_t> data = {}, const std::string& expected_data_sha256 = {},
      const std::string& uploader = {});

  // Loads `bytes` (with the external data file's `data`; empty: none) as the program
  // the preloaded name `name` stands for (the model repository's), replacing the one
  // held under that name, which sessions holding it keep. Errors: those of add(), and
  // InvalidArgument for a program that keeps tensors in a .ptd when `data` is empty.
  Result<std::shared_ptr<const SharedProgram>> preload(std::span<const uint8_t> bytes,
                                                       std::span<const uint8_t> data,
                                                       const std::string& name);

  std::vector<std::string> preloaded_names() const;
  // Stops holding the preloaded program `name` (a KServe unload); sessions that hold
  // it keep it. False when none has that name.
  bool unload_preloaded(const std::string& name);
  // Distinct programs currently loaded.
  size_t size() const;
  // Keeps `program` loaded for `keep_for` after a session let it go (its last session,
  // maybe), so that the next process loading it (the next test of a CI run) finds it
  // parsed with its weights packed, instead of sending and parsing it again. At most
  // `max_bytes` of programs are kept this way; the least recently released go first.
  // A program kept again has its time restarted.
  void keep_warm(std::shared_ptr<const SharedProgram> program);
  void set_keep_warm(std::chrono::milliseconds keep_for, uint64_t max_bytes);
  // --vet: add() runs `vet` on content it has not loaded before (its copies: the
  // program, the data file maybe empty, and their content key) and refuses it with vet's
  // error. preload() (the operator's own programs) never vets. Set before any add().
  using Vet =
      std::function<Status(std::span<const uint8_t>, std::span<const uint8_t>, const std::string&)>;
  void set_vetter(Vet vet) { vet_ = std::move(vet); }
  // Lets go of the programs kept longer than keep_for (the daemon calls it now and then).
  void drop_expired();
  // Programs copied and parsed since the start (each add() that did not find its
  // content loaded or being loaded).
  uint64_t parsed() const { return parsed_.load(std::memory_order_relaxed); }

 private:
  Vet vet_;
  mutable Mutex mu_;
  // Entries live while a session (or preloaded_) holds them.
  mutable std::map<std::string, std::weak_ptr<const SharedProgram>> by_hash_ ET_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const SharedProgram>> preloaded_ ET_GUARDED_BY(mu_);
  // Contents being copied and parsed by an add(); another add() of the same content
  // waits for it (loaded_ is notified) instead of copying and parsing it again.
  std::set<std::string> loading_ ET_GUARDED_BY(mu_);
  // Contents a caller of find_or_await_upload() was told to send: who, and until when
  // others wait for it.
  struct Awaited {
    uint64_t asker = 0;
    std::string peer;
    std::chrono::steady_clock::time_point until;
  };
  std::map<std::string, Awaited> awaited_ ET_GUARDED_BY(mu_);
  bool stop_waiting_ ET_GUARDED_BY(mu_) = false;
  bool repository_loading_ ET_GUARDED_BY(mu_) = false;
  mutable std::condition_variable repository_loaded_;
  // Programs kept loaded after their sessions let them go, oldest first (keep_warm()).
  struct Warm {
    std::shared_ptr<const SharedProgram> program;
    std::chrono::steady_clock::time_point until;
  };
  std::list<Warm> warm_ ET_GUARDED_BY(mu_);
  uint64_t warm_bytes_ ET_GUARDED_BY(mu_) = 0;
  std::chrono::milliseconds keep_for_ ET_GUARDED_BY(mu_){0};
  uint64_t keep_max_bytes_ ET_GUARDED_BY(mu_) = 0;
  std::condition_variable loaded_;
  std::atomic<uint64_t> parsed_{0};
};

}  // namespace et::server
