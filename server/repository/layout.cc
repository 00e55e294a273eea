#include "server/repository/layout.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>

#include "runtime/core/printable.h"

namespace et::server::repository {
namespace fs = std::filesystem;

Result<FileStamp> stamp_of(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return io_error(fmt::format("{}: {}", printable(path), std::strerror(errno)));
  }
  return FileStamp{st.st_dev, st.st_ino, st.st_size,
                   int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
}

bool valid_model_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos && name[0] != '.';
}

namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// A Triton version directory's number: digits only, at least 1.
bool version_number(const std::string& name, uint64_t& out) {
  if (name.empty() || name.size() > 19 ||
      !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  std::from_chars(name.data(), name.data() + name.size(), out);
  return out > 0;
}

// The versions of the Triton model directory `model_dir`, newest first.
std::vector<ProgramFile> versions_of(const std::string& model, const fs::path& model_dir,
                                     std::vector<std::string>& problems) {
  std::vector<ProgramFile> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(model_dir, ec)) {
    uint64_t version = 0;
    if (!version_number(entry.path().filename().string(), version)) continue;
    fs::path pte = entry.path() / "model.pte";
    if (!is_file(pte)) pte = entry.path() / "model.bpte";  // a bundled program
    if (!is_file(pte)) continue;
    const fs::path ptd = entry.path() / "model.ptd";
    out.push_back({model, version, pte.string(), is_file(ptd) ? ptd.string() : ""});
  }
  if (ec) problems.push_back(fmt::format("{}: {}", printable(model_dir.string()), ec.message()));
  std::sort(out.begin(), out.end(),
            [](const ProgramFile& a, const ProgramFile& b) { return a.version > b.version; });
  return out;
}

}  // namespace

Result<Listing> list_repository(const std::string& dir) {
  Listing listing;
  std::map<std::string, std::vector<ProgramFile>> by_model;
  std::map<std::string, ProgramFile> flat;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return io_error(fmt::format("model repository {}: {}", printable(dir), ec.message()));
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string file = path.filename().string();
    if (file.empty() || file[0] == '.') continue;  // editors' and copiers' temporary files
    std::error_code kind_ec;
    if (it->is_directory(kind_ec)) {
      if (!valid_model_name(file)) continue;
      auto versions = versions_of(file, path, listing.problems);
      if (!versions.empty()) by_model[file] = std::move(versions);
    } else if ((path.extension() == ".pte" || path.extension() == ".bpte") && is_file(path)) {
      const std::string model = path.stem().string();
      if (!valid_model_name(model)) {
        listing.problems.push_back(
            fmt::format("{}: not a usable model name; rename the file", printable(file)));
        continue;
      }
      fs::path ptd = path;
      ptd.replace_extension(".ptd");
      if (auto other = flat.find(model); other != flat.end()) {
        listing.problems.push_back(fmt::format(
            "{}.pte and {}.bpte both name model {}: {}.pte is served; rename or remove one",
            printable(model), printable(model), printable(model), printable(model)));
        if (path.extension() == ".bpte") continue;
      }
      flat[model] = {model, 0, path.string(), is_file(ptd) ? ptd.string() : ""};
    }
  }
  if (ec) return io_error(fmt::format("model repository {}: {}", printable(dir), ec.message()));
  for (auto& [model, file] : flat) {
    if (by_model.count(model)) {
      listing.problems.push_back(
          fmt::format("{}.pte is shadowed by the model directory {}/ (Triton's layout): "
                      "the directory is served; move or rename one of them",
                      printable(model), printable(model)));
      continue;
    }
    by_model[model] = {std::move(file)};
  }
  for (auto& [model, files] : by_model) {
    for (auto& f : files) listing.files.push_back(std::move(f));
  }
  return listing;
}

}  // namespace et::server::repository
