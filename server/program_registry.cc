#include "server/program_registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iterator>

#include "proto/sha256.h"
#include "runtime/program_bytes.h"

namespace et::server {

void RegisteredProgram::note_uploader(const std::string& peer) const {
  std::lock_guard<std::mutex> lock(uploaders_mu_);
  uploaders_.insert(peer);
}

bool RegisteredProgram::uploaded_by(const std::string& peer) const {
  std::lock_guard<std::mutex> lock(uploaders_mu_);
  return uploaders_.count(peer) > 0;
}

RegisteredProgram::~RegisteredProgram() {
  if (program) spdlog::info("program {} unloaded (no session holds it)", sha256.substr(0, 12));
}

std::shared_ptr<const RegisteredProgram> ProgramRegistry::find(const std::string& sha256) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_hash_.find(sha256);
  if (it == by_hash_.end()) return nullptr;
  auto held = it->second.lock();
  if (!held) by_hash_.erase(it);
  return held;
}

std::shared_ptr<const RegisteredProgram> ProgramRegistry::find_preloaded(
    const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = preloaded_.find(name);
  return it == preloaded_.end() ? nullptr : it->second;
}

namespace {

// Parses `bytes` (copied first: bytes in a client's segment may change under us) into
// an entry named by the copy's hash.
Result<std::shared_ptr<RegisteredProgram>> load_entry(std::span<const uint8_t> bytes,
                                                      const std::string& expected_sha256) {
  std::shared_ptr<const ProgramBytes> program_bytes = ProgramBytes::copy_of(bytes);
  const std::string sha = ::etserver::sha256_hex(program_bytes->bytes());
  if (!expected_sha256.empty() && expected_sha256 != sha) {
    return invalid_argument(
        fmt::format("sha256: the program's bytes hash to {}, not {}", sha, expected_sha256));
  }
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const Program> program, Program::load(program_bytes));
  auto entry = std::make_shared<RegisteredProgram>();
  entry->sha256 = sha;
  entry->size_bytes = program_bytes->bytes().size();
  entry->program = std::move(program);
  return entry;
}

}  // namespace

Result<std::pair<std::shared_ptr<const RegisteredProgram>, bool>> ProgramRegistry::add(
    std::span<const uint8_t> bytes, const std::string& expected_sha256) {
  if (!expected_sha256.empty()) {
    if (auto held = find(expected_sha256)) return std::make_pair(held, true);
  }
  // Parse outside the lock: loading a large program must not stall other sessions.
  ET_ASSIGN_OR_RETURN(std::shared_ptr<RegisteredProgram> entry, load_entry(bytes, expected_sha256));
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = by_hash_[entry->sha256];
  if (auto held = slot.lock())
    return std::make_pair(held, true);  // already (or concurrently) loaded
  slot = entry;
  return std::make_pair(std::shared_ptr<const RegisteredProgram>(entry), false);
}

Status ProgramRegistry::preload(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(fmt::format("cannot read {}", path));
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ET_ASSIGN_OR_RETURN(std::shared_ptr<RegisteredProgram> entry, load_entry(bytes, ""));
  entry->name = name;
  std::lock_guard<std::mutex> lock(mu_);
  preloaded_[name] = entry;
  by_hash_[entry->sha256] = entry;
  return Status();
}

std::vector<std::string> ProgramRegistry::preloaded_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : preloaded_) names.push_back(name);
  return names;
}

size_t ProgramRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [sha, entry] : by_hash_) n += !entry.expired();
  return n;
}

}  // namespace et::server
