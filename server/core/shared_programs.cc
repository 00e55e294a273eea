#include "server/core/shared_programs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iterator>

#include "proto/sha256.h"
#include "runtime/core/data_file.h"
#include "runtime/core/program_bytes.h"

namespace et::server {

void SharedProgram::note_uploader(const std::string& peer) const {
  MutexLock lock(uploaders_mu_);
  uploaders_.insert(peer);
}

bool SharedProgram::uploaded_by(const std::string& peer) const {
  MutexLock lock(uploaders_mu_);
  return uploaders_.count(peer) > 0;
}

SharedProgram::~SharedProgram() {
  if (program) spdlog::info("program {} unloaded (no session holds it)", sha256.substr(0, 12));
}

namespace {

// Programs are held by content: the program's hash, and its data file's when it has one.
std::string content_key(const std::string& sha256, const std::string& data_sha256) {
  return data_sha256.empty() ? sha256 : sha256 + "+" + data_sha256;
}

// Copies of a program's bytes (and its data file's), named by the copies' hashes:
// bytes in a client's segment may change under us, the copies do not.
struct Copies {
  std::shared_ptr<const ProgramBytes> program, data;
  std::string sha256, data_sha256;
};

Result<Copies> copy_and_hash(std::span<const uint8_t> bytes, const std::string& expected_sha256,
                             std::span<const uint8_t> data,
                             const std::string& expected_data_sha256) {
  Copies c;
  c.program = ProgramBytes::copy_of(bytes);
  c.sha256 = ::et::wire::sha256_hex(c.program->bytes());
  if (!expected_sha256.empty() && expected_sha256 != c.sha256) {
    return invalid_argument(
        fmt::format("sha256: the program's bytes hash to {}, not {}", c.sha256, expected_sha256));
  }
  if (!data.empty()) {
    c.data = ProgramBytes::copy_of(data);
    c.data_sha256 = ::et::wire::sha256_hex(c.data->bytes());
    if (!expected_data_sha256.empty() && expected_data_sha256 != c.data_sha256) {
      return invalid_argument(fmt::format("data_sha256: the data file's bytes hash to {}, not {}",
                                          c.data_sha256, expected_data_sha256));
    }
  } else if (!expected_data_sha256.empty()) {
    return invalid_argument(
        fmt::format("data_sha256: {} names an external data file, but none was sent "
                    "(data_bytes or data_segment)",
                    expected_data_sha256));
  }
  return c;
}

Result<std::shared_ptr<SharedProgram>> load_entry(Copies c) {
  std::shared_ptr<const DataFile> data;
  if (c.data) {
    auto loaded = DataFile::load(c.data);
    if (!loaded.ok()) return loaded.status().with_context("external data file");
    data = std::move(loaded).value();
  }
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const Program> program, Program::load(c.program, data));
  auto entry = std::make_shared<SharedProgram>();
  entry->sha256 = c.sha256;
  entry->data_sha256 = c.data_sha256;
  entry->size_bytes = c.program->bytes().size();
  entry->data_size_bytes = c.data ? c.data->bytes().size() : 0;
  entry->program = std::move(program);
  return entry;
}

}  // namespace

std::shared_ptr<const SharedProgram> SharedPrograms::find(const std::string& sha256,
                                                          const std::string& data_sha256) const {
  MutexLock lock(mu_);
  auto it = by_hash_.find(content_key(sha256, data_sha256));
  if (it == by_hash_.end()) return nullptr;
  auto held = it->second.lock();
  if (!held) by_hash_.erase(it);
  return held;
}

std::shared_ptr<const SharedProgram> SharedPrograms::find_or_await_upload(
    const std::string& sha256, const std::string& data_sha256, uint64_t asker,
    const std::string& peer, std::chrono::milliseconds max_wait) {
  const std::string key = content_key(sha256, data_sha256);
  // This caller's own limit, fixed now: nothing another session does extends it.
  const auto give_up = std::chrono::steady_clock::now() + max_wait;
  MutexLock lock(mu_);
  while (true) {
    if (auto it = by_hash_.find(key); it != by_hash_.end()) {
      if (auto held = it->second.lock()) return held;
    }
    const auto now = std::chrono::steady_clock::now();
    auto it = awaited_.find(key);
    if (it == awaited_.end() || it->second.until <= now) {
      awaited_[key] = Awaited{asker, peer, now + max_wait};
      return nullptr;
    }
    // The sender itself (asking again: its claim is not extended), a sender on another
    // host (whose upload this caller could not use, and whose plans it must not learn),
    // the daemon stopping, or this caller's limit: send the bytes yourself.
    if (it->second.asker == asker || it->second.peer != peer || stop_waiting_ || now >= give_up) {
      return nullptr;
    }
    // A copy: the entry may be erased while this waits (and wait_until reads it again).
    const auto until = std::min(it->second.until, give_up);
    lock.wait_until(loaded_, until);
  }
}

void SharedPrograms::release_claim(const std::string& sha256, const std::string& data_sha256,
                                   uint64_t asker) {
  {
    MutexLock lock(mu_);
    auto it = awaited_.find(content_key(sha256, data_sha256));
    if (it == awaited_.end() || it->second.asker != asker) return;
    awaited_.erase(it);
  }
  loaded_.notify_all();
}

void SharedPrograms::stop_waiting() {
  {
    MutexLock lock(mu_);
    stop_waiting_ = true;
  }
  loaded_.notify_all();
  repository_loaded_.notify_all();
}

void SharedPrograms::forget_asker(uint64_t asker) {
  {
    MutexLock lock(mu_);
    for (auto it = awaited_.begin(); it != awaited_.end();) {
      it = it->second.asker == asker ? awaited_.erase(it) : std::next(it);
    }
  }
  loaded_.notify_all();
}

void SharedPrograms::set_keep_warm(std::chrono::milliseconds keep_for, uint64_t max_bytes) {
  MutexLock lock(mu_);
  keep_for_ = keep_for;
  keep_max_bytes_ = max_bytes;
}

void SharedPrograms::keep_warm(std::shared_ptr<const SharedProgram> program) {
  std::vector<std::shared_ptr<const SharedProgram>> released;  // freed outside the lock
  {
    MutexLock lock(mu_);
    const uint64_t bytes = program->size_bytes + program->data_size_bytes;
    for (auto it = warm_.begin(); it != warm_.end(); ++it) {
      if (it->program == program) {
        warm_bytes_ -= bytes;
        released.push_back(std::move(it->program));
        warm_.erase(it);
        break;
      }
    }
    if (keep_for_.count() <= 0 || bytes > keep_max_bytes_) return;
    warm_.push_back(Warm{std::move(program), std::chrono::steady_clock::now() + keep_for_});
    warm_bytes_ += bytes;
    while (warm_bytes_ > keep_max_bytes_) {
      const SharedProgram& oldest = *warm_.front().program;
      warm_bytes_ -= oldest.size_bytes + oldest.data_size_bytes;
      released.push_back(std::move(warm_.front().program));
      warm_.pop_front();
    }
  }
}

void SharedPrograms::drop_expired() {
  std::vector<std::shared_ptr<const SharedProgram>> released;  // freed outside the lock
  {
    MutexLock lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = warm_.begin(); it != warm_.end();) {
      if (it->until > now) {
        ++it;
        continue;
      }
      warm_bytes_ -= it->program->size_bytes + it->program->data_size_bytes;
      released.push_back(std::move(it->program));
      it = warm_.erase(it);
    }
  }
}

std::shared_ptr<const SharedProgram> SharedPrograms::find_preloaded(
    const std::string& name, std::chrono::milliseconds max_wait) const {
  MutexLock lock(mu_);
  const auto give_up = std::chrono::steady_clock::now() + max_wait;
  while (true) {
    auto it = preloaded_.find(name);
    if (it != preloaded_.end()) return it->second;
    if (!repository_loading_ || stop_waiting_ ||
        lock.wait_until(repository_loaded_, give_up) == std::cv_status::timeout) {
      return nullptr;
    }
  }
}

void SharedPrograms::set_repository_loading(bool loading) {
  {
    MutexLock lock(mu_);
    repository_loading_ = loading;
  }
  repository_loaded_.notify_all();
}

Result<std::pair<std::shared_ptr<const SharedProgram>, bool>> SharedPrograms::add(
    std::span<const uint8_t> bytes, const std::string& expected_sha256,
    std::span<const uint8_t> data, const std::string& expected_data_sha256,
    const std::string& uploader) {
  // Hashed where the bytes are (a client's shared memory, maybe): many sessions sending
  // one program at once cost one copy and one parse. A client changing its bytes
  // meanwhile only gets a hash of something else here; the copies are hashed again.
  const std::string sha = ::et::wire::sha256_hex(bytes);
  const std::string data_sha = data.empty() ? "" : ::et::wire::sha256_hex(data);
  const std::string seen = content_key(sha, data_sha);
  // Bytes that are not what the caller says they are take the checked path below (its
  // errors name the mismatch); only matching ones may be answered by what is loaded.
  const bool as_claimed = (expected_sha256.empty() || expected_sha256 == sha) &&
                          (expected_data_sha256.empty() || expected_data_sha256 == data_sha);
  if (as_claimed) {
    MutexLock lock(mu_);
    while (true) {
      auto it = by_hash_.find(seen);
      if (it != by_hash_.end()) {
        if (auto held = it->second.lock()) {
          held->note_uploader(uploader);
          return std::make_pair(held, true);
        }
      }
      if (loading_.count(seen) == 0) break;
      lock.wait(loaded_);
    }
    loading_.insert(seen);
  }
  struct Done {  // whatever happens below, waiters for `seen` are let go
    SharedPrograms& r;
    const std::string& key;
    bool loading;  // this call holds `key` in loading_
    ~Done() {
      if (!loading) return;
      {
        MutexLock lock(r.mu_);
        r.loading_.erase(key);
        r.awaited_.erase(key);  // sent: whoever waited for it finds it (or sends their own)
      }
      r.loaded_.notify_all();
    }
  } done{*this, seen, as_claimed};
  ET_ASSIGN_OR_RETURN(Copies copies,
                      copy_and_hash(bytes, expected_sha256, data, expected_data_sha256));
  const std::string key = content_key(copies.sha256, copies.data_sha256);
  if (auto held = find(copies.sha256, copies.data_sha256)) {
    held->note_uploader(uploader);
    return std::make_pair(held, true);
  }
  if (vet_) {
    ET_RETURN_IF_ERROR(vet_(copies.program->bytes(),
                            copies.data ? copies.data->bytes() : std::span<const uint8_t>{}, key));
  }
  // Parse outside the lock: loading a large program must not stall other sessions.
  parsed_.fetch_add(1, std::memory_order_relaxed);
  ET_ASSIGN_OR_RETURN(std::shared_ptr<SharedProgram> entry, load_entry(std::move(copies)));
  entry->note_uploader(uploader);
  MutexLock lock(mu_);
  auto& slot = by_hash_[key];
  if (auto held = slot.lock()) {  // concurrently loaded
    held->note_uploader(uploader);
    return std::make_pair(held, true);
  }
  slot = entry;
  return std::make_pair(std::shared_ptr<const SharedProgram>(entry), false);
}

Result<std::shared_ptr<const SharedProgram>> SharedPrograms::preload(std::span<const uint8_t> bytes,
                                                                     std::span<const uint8_t> data,
                                                                     const std::string& name) {
  ET_ASSIGN_OR_RETURN(Copies copies, copy_and_hash(bytes, "", data, ""));
  const std::string key = content_key(copies.sha256, copies.data_sha256);
  ET_ASSIGN_OR_RETURN(std::shared_ptr<SharedProgram> entry, load_entry(std::move(copies)));
  // The operator's model is served only when its methods can load: one whose .ptd is
  // missing is refused here, naming the tensor, rather than served unusable.
  ET_RETURN_IF_ERROR(entry->program->check_data_given());
  entry->name = name;
  std::shared_ptr<const SharedProgram> replaced;  // released outside the lock (it logs)
  MutexLock lock(mu_);
  replaced = std::move(preloaded_[name]);
  preloaded_[name] = entry;
  by_hash_[key] = entry;
  return std::shared_ptr<const SharedProgram>(entry);
}

std::vector<std::string> SharedPrograms::preloaded_names() const {
  MutexLock lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : preloaded_) names.push_back(name);
  return names;
}

bool SharedPrograms::unload_preloaded(const std::string& name) {
  std::shared_ptr<const SharedProgram> dropped;  // released outside the lock (it logs)
  MutexLock lock(mu_);
  auto it = preloaded_.find(name);
  if (it == preloaded_.end()) return false;
  dropped = std::move(it->second);
  preloaded_.erase(it);
  return true;
}

size_t SharedPrograms::size() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [sha, entry] : by_hash_) n += !entry.expired();
  return n;
}

}  // namespace et::server
