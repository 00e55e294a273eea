#include "server/repository/model_repository.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "proto/sha256.h"
#include "runtime/core/printable.h"

namespace et::server::repository {

Result<ModelControl> parse_model_control(std::string_view text) {
  if (text == "none") return ModelControl::kNone;
  if (text == "poll") return ModelControl::kPoll;
  if (text == "explicit") return ModelControl::kExplicit;
  return invalid_argument(
      fmt::format("--model-control-mode {}: give none, poll or explicit (docs/operations.md)",
                  printable(text)));
}

std::string_view model_control_name(ModelControl control) {
  switch (control) {
    case ModelControl::kNone:
      return "none";
    case ModelControl::kPoll:
      return "poll";
    case ModelControl::kExplicit:
      return "explicit";
  }
  return "?";
}

namespace {

// The whole file, and its stamp; Unavailable when it changed while being read (a
// writer is at it: the next change event brings it back).
Result<std::vector<uint8_t>> read_stable(const std::string& path, const FileStamp& expected) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(fmt::format("cannot read {}: {}", printable(path), strerror(errno)));
  std::vector<uint8_t> bytes(static_cast<size_t>(std::max<off_t>(expected.size, 0)));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  auto after = stamp_of(path);
  if (got != bytes.size() || !after.ok() || !(*after == expected)) {
    return unavailable(fmt::format("{} changed while it was read", printable(path)));
  }
  return bytes;
}

std::string registry_name_of(const ProgramFile& f) { return f.flat() ? f.model + ".pte" : f.model; }

}  // namespace

Result<std::unique_ptr<ModelRepository>> ModelRepository::open(SharedPrograms& registry,
                                                               RepositoryOptions o) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.dir, ec)) {
    return io_error(fmt::format("--models {}: not a directory{}", printable(o.dir),
                                ec ? ": " + ec.message() : ""));
  }
  if (o.control != ModelControl::kExplicit && !o.load_at_start.empty()) {
    return invalid_argument(
        "--load-model goes with --model-control-mode explicit (the other "
        "modes load every model at start)");
  }
  // One spelling of the directory: the watcher's paths and the listing's must match
  // ("models/" and "models" alike).
  std::string normal = std::filesystem::path(o.dir).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  o.dir = normal;
  // From now on (the daemon listens before start() runs), sessions asking for a
  // preloaded name wait for the first loads.
  registry.set_repository_loading(true);
  return std::unique_ptr<ModelRepository>(new ModelRepository(registry, std::move(o)));
}

ModelRepository::~ModelRepository() { watcher_.reset(); }

Status ModelRepository::start() {
  Status watching;
  if (o_.control == ModelControl::kPoll) {
    // Watching first: a change made while the first loads run is seen after them.
    auto watcher = DirectoryWatcher::start(
        o_.dir, o_.settle, o_.rescan,
        [this](const std::set<std::string>& being_written) { refresh(being_written); });
    if (watcher.ok()) {
      watcher_ = std::move(watcher).value();
    } else {
      watching = watcher.status();
    }
  }
  if (o_.control != ModelControl::kExplicit) {
    refresh();
  } else {
    for (const std::string& name : o_.load_at_start) {
      if (name == "*") {
        refresh();
        continue;
      }
      Status s = load(name);
      if (!s.ok()) spdlog::error("--load-model {}: {}", printable(name), s.message());
    }
  }
  registry_.set_repository_loading(false);
  spdlog::info("model repository {} ({}): {} models served", o_.dir, model_control_name(o_.control),
               served_count());
  return watching;
}

void ModelRepository::refresh(const std::set<std::string>& being_written) {
  MutexLock load_lock(load_mu_);
  auto listing = list_repository(o_.dir);
  if (!listing.ok()) {
    spdlog::error("{} (what is served stays)", listing.status().message());
    return;
  }
  std::set<std::string> problems(listing->problems.begin(), listing->problems.end());
  for (const std::string& p : problems) {
    if (!problems_logged_.count(p)) spdlog::warn("model repository: {}", p);
  }
  problems_logged_ = std::move(problems);
  std::map<std::string, std::vector<ProgramFile>> by_model;
  for (ProgramFile& f : listing->files) by_model[f.model].push_back(std::move(f));
  std::vector<std::string> gone;
  {
    MutexLock lock(mu_);
    for (const auto& [model, s] : served_) {
      if (!by_model.count(model)) gone.push_back(model);
    }
    for (auto it = failed_.begin(); it != failed_.end();) {
      it = by_model.count(it->first) ? std::next(it) : failed_.erase(it);
    }
  }
  for (const std::string& model : gone) stop_serving(model, "its files were removed");
  for (const auto& [model, files] : by_model) {
    (void)reconcile(model, files, being_written, false);
  }
}

Status ModelRepository::reconcile(const std::string& model, const std::vector<ProgramFile>& files,
                                  const std::set<std::string>& being_written, bool renew) {
  auto writing = [&](const ProgramFile& f) {
    return being_written.count(f.path) ||
           (!f.data_path.empty() && being_written.count(f.data_path));
  };
  if (!files.empty() && writing(files.front())) {
    spdlog::debug("model repository: {} is being written; read once it is closed",
                  printable(files.front().path));
    return Status();
  }
  std::optional<Served> current;
  {
    MutexLock lock(mu_);
    if (auto it = served_.find(model); it != served_.end()) current = it->second;
    // Failures of files no longer there are forgotten (a removed bad version).
    std::erase_if(failed_[model], [&](const Failure& bad) {
      return std::none_of(files.begin(), files.end(),
                          [&](const ProgramFile& f) { return f.path == bad.path; });
    });
  }
  Status newest;
  bool first = true;
  for (const ProgramFile& f : files) {
    const bool is_newest = std::exchange(first, false);
    if (writing(f)) continue;
    auto stamp = stamp_of(f.path);
    if (!stamp.ok()) continue;  // removed meanwhile
    FileStamp data_stamp;
    if (!f.data_path.empty()) {
      auto ds = stamp_of(f.data_path);
      if (!ds.ok()) continue;
      data_stamp = *ds;
    }
    if (current && current->path == f.path && current->stamp == *stamp &&
        current->data_stamp == data_stamp) {
      if (renew) tell(model, current->version, current->program);
      return newest;
    }
    if (!renew) {  // a load request tries again what failed; a refresh waits for a change
      std::optional<Status> known_bad;
      {
        MutexLock lock(mu_);
        for (const Failure& bad : failed_[model]) {
          if (bad.path == f.path && bad.stamp == *stamp && bad.data_stamp == data_stamp) {
            known_bad = bad.status;
          }
        }
      }
      if (known_bad) {
        if (is_newest) newest = *known_bad;
        continue;
      }
    }
    Status s = load_file(model, f, *stamp, data_stamp, renew);
    if (s.ok()) return newest;
    if (is_newest) newest = s;
    // The served version's own file rewritten badly: it stays served (falling back to
    // an older version is not what the operator asked for).
    if (current && current->path == f.path) return newest;
  }
  if (current) {
    const bool still_there = std::any_of(
        files.begin(), files.end(), [&](const ProgramFile& f) { return f.path == current->path; });
    if (!still_there) stop_serving(model, "its file was removed and no other version loads");
  }
  return newest;
}

Status ModelRepository::load_file(const std::string& model, const ProgramFile& f,
                                  const FileStamp& stamp, const FileStamp& data_stamp, bool renew) {
  std::optional<Served> current;
  {
    MutexLock lock(mu_);
    if (auto it = served_.find(model); it != served_.end()) current = it->second;
  }
  const uint64_t version = !f.flat() ? f.version : (current ? current->version + 1 : uint64_t{1});
  auto fail = [&](Status s) {
    if (s.code() == StatusCode::kUnavailable) return s;  // being written: not a failure
    load_failures_.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("model {} version {} ({}) did not load: {}{}", printable(model), version,
                  printable(f.path), s.message(),
                  current ? fmt::format("; version {} is still served", current->version) : "");
    MutexLock lock(mu_);
    auto& list = failed_[model];
    std::erase_if(list, [&](const Failure& bad) { return bad.path == f.path; });
    list.push_back({version, f.path, stamp, data_stamp, s});
    std::sort(list.begin(), list.end(),
              [](const Failure& a, const Failure& b) { return a.version > b.version; });
    return s;
  };
  auto bytes = read_stable(f.path, stamp);
  if (!bytes.ok()) return fail(bytes.status());
  std::vector<uint8_t> data;
  if (!f.data_path.empty()) {
    auto read = read_stable(f.data_path, data_stamp);
    if (!read.ok()) return fail(read.status());
    data = std::move(read).value();
  }
  const std::string name = registry_name_of(f);
  // The same bytes again (touched, or copied over with themselves): the program served
  // stays (no second copy is loaded); only the stamps are new.
  if (current && current->path == f.path &&
      current->program->sha256 == ::et::wire::sha256_hex(*bytes) &&
      current->program->data_sha256 == (data.empty() ? "" : ::et::wire::sha256_hex(data))) {
    {
      MutexLock lock(mu_);
      served_[model].stamp = stamp;
      served_[model].data_stamp = data_stamp;
    }
    if (renew) tell(model, current->version, current->program);
    return Status();
  }
  auto program = registry_.preload(*bytes, data, name);
  if (!program.ok()) return fail(program.status());
  loads_.fetch_add(1, std::memory_order_relaxed);
  if (o_.warm_up) o_.warm_up(model, **program);

  Served now{version, f.path, stamp, data_stamp, name, *program};
  {
    MutexLock lock(mu_);
    served_[model] = now;
    auto& list = failed_[model];
    std::erase_if(list, [&](const Failure& bad) { return f.flat() || bad.version <= version; });
  }
  if (current && current->registry_name != name) registry_.unload_preloaded(current->registry_name);
  spdlog::info("model {} version {} loaded from {}{}", printable(model), now.version,
               printable(f.path),
               current && current->version != now.version
                   ? fmt::format(" (version {} is no longer served)", current->version)
                   : "");
  tell(model, now.version, now.program);
  return Status();
}

void ModelRepository::stop_serving(const std::string& model, const std::string& why) {
  std::optional<Served> was;
  {
    MutexLock lock(mu_);
    auto it = served_.find(model);
    if (it == served_.end()) return;
    was = std::move(it->second);
    served_.erase(it);
  }
  registry_.unload_preloaded(was->registry_name);
  spdlog::info("model {} version {} is no longer served: {}", printable(model), was->version, why);
  tell(model, 0, nullptr);
}

void ModelRepository::tell(const std::string& model, uint64_t version,
                           const std::shared_ptr<const SharedProgram>& program) {
  for (const Observer& o : observers_) o(model, version, program);
}

Status ModelRepository::load(const std::string& name) {
  if (o_.control != ModelControl::kExplicit) {
    return failed_precondition(fmt::format(
        "the model repository is in mode '{}': load requests need --model-control-mode explicit "
        "({})",
        model_control_name(o_.control),
        o_.control == ModelControl::kPoll ? "in poll mode, add the files to the directory"
                                          : "in mode none, every model is loaded at start"));
  }
  if (!valid_model_name(name)) {
    return invalid_argument(
        fmt::format("model name '{}': give a model of the --models directory, without a path",
                    printable(name)));
  }
  MutexLock load_lock(load_mu_);
  ET_ASSIGN_OR_RETURN(Listing listing, list_repository(o_.dir));
  std::vector<ProgramFile> files;
  for (ProgramFile& f : listing.files) {
    if (f.model == name) files.push_back(std::move(f));
  }
  if (files.empty()) {
    return not_found(
        fmt::format("no model '{}' in the model repository {} (NAME.pte or "
                    "NAME/VERSION/model.pte)",
                    printable(name), o_.dir));
  }
  if (Status s = reconcile(name, files, {}, true); !s.ok()) {
    uint64_t version = 0;
    const bool older = served(name, &version) != nullptr;
    return s.with_context(fmt::format("model '{}' (newest version) did not load{}", printable(name),
                                      older ? fmt::format("; version {} is served", version) : ""));
  }
  if (!served(name)) {
    return unavailable(fmt::format("model '{}': no version of it loads", printable(name)));
  }
  return Status();
}

Status ModelRepository::unload(const std::string& name) {
  if (o_.control != ModelControl::kExplicit) {
    return failed_precondition(fmt::format(
        "the model repository is in mode '{}': unload requests need --model-control-mode "
        "explicit{}",
        model_control_name(o_.control),
        o_.control == ModelControl::kPoll ? " (in poll mode, remove the files)" : ""));
  }
  MutexLock load_lock(load_mu_);
  if (!served(name)) return not_found(fmt::format("model '{}' is not loaded", printable(name)));
  stop_serving(name, "unloaded by request");
  return Status();
}

std::shared_ptr<const SharedProgram> ModelRepository::served(const std::string& model,
                                                             uint64_t* version) const {
  MutexLock lock(mu_);
  auto it = served_.find(model);
  if (it == served_.end()) return nullptr;
  if (version) *version = it->second.version;
  return it->second.program;
}

size_t ModelRepository::served_count() const {
  MutexLock lock(mu_);
  return served_.size();
}

std::vector<ModelState> ModelRepository::index() const {
  std::map<std::string, std::vector<ModelState>> by_model;
  {
    MutexLock lock(mu_);
    for (const auto& [model, s] : served_) by_model[model].push_back({model, s.version, true, ""});
    for (const auto& [model, list] : failed_) {
      for (const Failure& bad : list) {
        by_model[model].push_back({model, bad.version, false, bad.status.message()});
      }
    }
  }
  if (auto listing = list_repository(o_.dir); listing.ok()) {
    for (const ProgramFile& f : listing->files) {
      if (!by_model.count(f.model)) by_model[f.model].push_back({f.model, 0, false, "not loaded"});
    }
  }
  std::vector<ModelState> out;
  for (auto& [model, states] : by_model) {
    std::sort(states.begin(), states.end(),
              [](const ModelState& a, const ModelState& b) { return a.version > b.version; });
    for (ModelState& s : states) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace et::server::repository
