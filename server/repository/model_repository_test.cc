// The model repository against a real directory: both layouts, the three control
// modes, and poll mode following files added, rewritten, half-written, corrupted and
// removed under it.
#include "server/repository/model_repository.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/eventually.h"

namespace et::server::repository {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::et::testing::eventually;
using ::et::testing::kBackstop;

std::string fixture(const std::string& name) { return std::string(ET_FIXTURES_DIR) + "/" + name; }

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Written beside it under a hidden name, then renamed into place, as a deployer should:
// the poll-mode watcher never sees the file empty or half written (created in place, it
// would be read empty by a watcher whose settle period passed before the first write,
// as on a busy machine). A writer still at a file is PollModeWaitsForAWriterToCloseItsFile.
void write_file(const fs::path& path, const std::vector<char>& bytes) {
  fs::create_directories(path.parent_path());
  const fs::path partial = path.parent_path() / ("." + path.filename().string() + ".partial");
  std::ofstream(partial, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  fs::rename(partial, path);
}

class Repo : public ::testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(spdlog::level::warn);
    dir_ = fs::temp_directory_path() /
           ("et-repo-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    repo_.reset();
    fs::remove_all(dir_);
  }
  ModelRepository& open(ModelControl control, std::vector<std::string> load = {}) {
    RepositoryOptions o{dir_.string(), control, std::move(load), 50ms, 0ms};
    repo_ = ModelRepository::open(registry_, o).value();
    repo_->observe([this](const std::string& model, uint64_t version,
                          const std::shared_ptr<const SharedProgram>& program) {
      std::lock_guard<std::mutex> lock(mu_);
      told_.push_back(model + "@" + std::to_string(version) + (program ? "" : " gone"));
    });
    return *repo_;
  }
  uint64_t version_of(const std::string& model) {
    uint64_t v = 0;
    return repo_->served(model, &v) ? v : 0;
  }
  std::vector<std::string> told() {
    std::lock_guard<std::mutex> lock(mu_);
    return told_;
  }

  fs::path dir_;
  SharedPrograms registry_;
  std::unique_ptr<ModelRepository> repo_;
  std::mutex mu_;
  std::vector<std::string> told_;
};

TEST_F(Repo, ListsBothLayoutsAndReportsShadowedFiles) {
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  write_file(dir_ / "mlp" / "1" / "model.pte", bytes_of(fixture("mlp.pte")));
  write_file(dir_ / "mlp" / "3" / "model.pte", bytes_of(fixture("mlp.pte")));
  write_file(dir_ / "mlp" / "config.pbtxt", {'x'});
  write_file(dir_ / "mlp" / "0" / "model.pte", {'x'});         // not a version
  write_file(dir_ / "mlp" / "v2" / "model.pte", {'x'});        // not a version
  write_file(dir_ / "mlp.pte", bytes_of(fixture("add.pte")));  // shadowed by mlp/
  write_file(dir_ / ".hidden.pte", {'x'});
  write_file(dir_ / "cnn_ptd.pte", bytes_of(fixture("cnn_ptd.pte")));
  write_file(dir_ / "cnn_ptd.ptd", bytes_of(fixture("cnn_ptd.ptd")));
  auto listing = list_repository(dir_.string()).value();
  ASSERT_EQ(listing.files.size(), 4u);
  EXPECT_EQ(listing.files[0].model, "add");
  EXPECT_TRUE(listing.files[0].flat());
  EXPECT_EQ(listing.files[1].model, "cnn_ptd");
  EXPECT_EQ(listing.files[1].data_path, (dir_ / "cnn_ptd.ptd").string());
  EXPECT_EQ(listing.files[2].model, "mlp");
  EXPECT_EQ(listing.files[2].version, 3u);  // newest first
  EXPECT_EQ(listing.files[3].version, 1u);
  ASSERT_EQ(listing.problems.size(), 1u);
  EXPECT_NE(listing.problems[0].find("mlp.pte is shadowed"), std::string::npos);
  EXPECT_EQ(list_repository((dir_ / "missing").string()).status().code(), StatusCode::kIoError);
}

TEST_F(Repo, BundledProgramsServeAsTheirPrograms) {
  write_file(dir_ / "checked.bpte", bytes_of(fixture("mlp_bundled.bpte")));
  write_file(dir_ / "cnn" / "2" / "model.bpte", bytes_of(fixture("cnn_bundled_xnnpack.bpte")));
  write_file(dir_ / "twice.pte", bytes_of(fixture("mlp.pte")));
  write_file(dir_ / "twice.bpte", bytes_of(fixture("mlp_bundled.bpte")));
  auto listing = list_repository(dir_.string()).value();
  ASSERT_EQ(listing.files.size(), 3u);
  EXPECT_EQ(listing.files[0].path, (dir_ / "checked.bpte").string());
  EXPECT_EQ(listing.files[1].path, (dir_ / "cnn" / "2" / "model.bpte").string());
  EXPECT_EQ(listing.files[2].path, (dir_ / "twice.pte").string());
  ASSERT_EQ(listing.problems.size(), 1u);
  EXPECT_NE(listing.problems[0].find("twice.pte and twice.bpte both name model twice"),
            std::string::npos)
      << listing.problems[0];
  ASSERT_TRUE(open(ModelControl::kNone).start().ok());
  auto checked = repo_->served("checked");
  ASSERT_NE(checked, nullptr);
  ASSERT_NE(checked->program->bundled_tests(), nullptr);
  EXPECT_EQ(version_of("cnn"), 2u);
}

TEST_F(Repo, NoneModeLoadsEverythingSkipsABadFileAndRefusesRequests) {
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  write_file(dir_ / "broken.pte", {'n', 'o', 't', ' ', 'a', ' ', 'p', 't', 'e'});
  write_file(dir_ / "mlp" / "2" / "model.pte", bytes_of(fixture("mlp.pte")));
  auto& repo = open(ModelControl::kNone);
  ASSERT_TRUE(repo.start().ok());
  EXPECT_EQ(version_of("add"), 1u);
  EXPECT_EQ(version_of("mlp"), 2u);
  EXPECT_EQ(repo.served("broken"), nullptr);
  EXPECT_EQ(repo.load_failures(), 1u);
  // The served programs are the daemon's preloaded ones, by file or model name.
  EXPECT_EQ(registry_.find_preloaded("add.pte"), repo.served("add"));
  EXPECT_EQ(registry_.find_preloaded("mlp"), repo.served("mlp"));
  bool indexed = false;
  for (const ModelState& s : repo.index()) {
    if (s.model == "broken") {
      indexed = true;
      EXPECT_FALSE(s.ready);
      EXPECT_EQ(s.version, 1u);
      EXPECT_FALSE(s.reason.empty());
    }
  }
  EXPECT_TRUE(indexed);
  EXPECT_EQ(repo.load("add").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(repo.unload("add").code(), StatusCode::kFailedPrecondition);
}

TEST_F(Repo, ExplicitModeLoadsOnRequest) {
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  write_file(dir_ / "mlp.pte", bytes_of(fixture("mlp.pte")));
  write_file(dir_ / "broken.pte", {'x'});
  auto& repo = open(ModelControl::kExplicit, {"add"});
  ASSERT_TRUE(repo.start().ok());
  EXPECT_EQ(version_of("add"), 1u);
  EXPECT_EQ(repo.served("mlp"), nullptr);
  ASSERT_TRUE(repo.load("mlp").ok());
  EXPECT_EQ(version_of("mlp"), 1u);
  EXPECT_EQ(repo.load("nothing").code(), StatusCode::kNotFound);
  EXPECT_EQ(repo.load("../add").code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(repo.load("broken").ok());
  // A load of a model served from unchanged files serves it anew (observers restart it).
  const size_t before = told().size();
  ASSERT_TRUE(repo.load("add").ok());
  EXPECT_EQ(told().size(), before + 1);
  EXPECT_EQ(version_of("add"), 1u);
  // Held programs outlive an unload.
  auto held = repo.served("add");
  ASSERT_TRUE(repo.unload("add").ok());
  EXPECT_EQ(repo.served("add"), nullptr);
  EXPECT_EQ(registry_.find_preloaded("add.pte"), nullptr);
  EXPECT_TRUE(held->program->method_meta("forward").ok());
  EXPECT_EQ(repo.unload("add").code(), StatusCode::kNotFound);
}

TEST_F(Repo, PollModeFollowsFilesAddedRewrittenAndRemoved) {
  auto& repo = open(ModelControl::kPoll);
  ASSERT_TRUE(repo.start().ok());
  EXPECT_EQ(repo.served_count(), 0u);

  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  ASSERT_TRUE(eventually([&] { return version_of("add") == 1; }));
  auto session_holds = repo.served("add");

  // Rewritten with other content: version 2; a session holding version 1 keeps it.
  write_file(dir_ / "add.pte", bytes_of(fixture("mlp.pte")));
  ASSERT_TRUE(eventually([&] { return version_of("add") == 2; }));
  EXPECT_NE(repo.served("add")->sha256, session_holds->sha256);
  EXPECT_TRUE(session_holds->program->method_meta("forward").ok());

  // Rewritten with a corrupt file: reported, and version 2 stays.
  write_file(dir_ / "add.pte", {'b', 'a', 'd'});
  ASSERT_TRUE(eventually([&] { return repo.load_failures() == 1; }));
  EXPECT_EQ(version_of("add"), 2u);

  // Triton's layout: a version directory appears, then a newer one; the newest is served,
  // and removing it falls back to the one before.
  write_file(dir_ / "mlp" / "1" / "model.pte", bytes_of(fixture("mlp.pte")));
  ASSERT_TRUE(eventually([&] { return version_of("mlp") == 1; }));
  write_file(dir_ / "mlp" / "7" / "model.pte", bytes_of(fixture("add.pte")));
  ASSERT_TRUE(eventually([&] { return version_of("mlp") == 7; }));
  fs::remove_all(dir_ / "mlp" / "7");
  ASSERT_TRUE(eventually([&] { return version_of("mlp") == 1; }));

  // Removed: no longer served.
  fs::remove(dir_ / "add.pte");
  ASSERT_TRUE(eventually([&] { return repo.served("add") == nullptr; }));
  EXPECT_EQ(registry_.find_preloaded("add.pte"), nullptr);
  const auto log = told();
  EXPECT_NE(std::find(log.begin(), log.end(), "add@0 gone"), log.end());
}

TEST_F(Repo, PollModeWaitsForAWriterToCloseItsFile) {
  // A served file rewritten in place: the truncation that opens it for writing is its
  // first change event, so the watcher knows it is being written from its first look
  // on. (A file created in place is there, empty, before any write: a watcher whose
  // settle period passed before the first write, as on a busy machine, reads it empty.)
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  auto& repo = open(ModelControl::kPoll);
  ASSERT_TRUE(repo.start().ok());
  const auto served = repo.served("add");
  ASSERT_NE(served, nullptr);
  const auto bytes = bytes_of(fixture("mlp.pte"));
  const std::string path = (dir_ / "add.pte").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const size_t half = bytes.size() / 2;
  ASSERT_EQ(write(fd, bytes.data(), half), static_cast<ssize_t>(half));
  // Settle periods pass with the file half written and open (at least 8 of them: a
  // busy machine only adds more): not read.
  std::this_thread::sleep_for(400ms);
  repo.refresh({path});  // what the watcher does, with the file still being written
  EXPECT_EQ(repo.served("add"), served);
  EXPECT_EQ(version_of("add"), 1u);
  EXPECT_EQ(repo.load_failures(), 0u);
  ASSERT_EQ(write(fd, bytes.data() + half, bytes.size() - half),
            static_cast<ssize_t>(bytes.size() - half));
  close(fd);
  ASSERT_TRUE(eventually([&] { return version_of("add") == 2; }));
  EXPECT_NE(repo.served("add")->sha256, served->sha256);
  EXPECT_EQ(repo.load_failures(), 0u);
}

TEST_F(Repo, ATouchedFileKeepsItsProgramAndABadRewriteKeepsTheVersionServed) {
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  write_file(dir_ / "mlp" / "1" / "model.pte", bytes_of(fixture("mlp.pte")));
  write_file(dir_ / "mlp" / "2" / "model.pte", bytes_of(fixture("mlp.pte")));
  auto& repo = open(ModelControl::kNone);
  ASSERT_TRUE(repo.start().ok());
  const auto add = repo.served("add");
  const uint64_t loads = repo.loads();
  // Copied over with its own bytes (a new inode and mtime): same program, same version,
  // nothing loaded again.
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  repo.refresh();
  EXPECT_EQ(repo.served("add"), add);
  EXPECT_EQ(version_of("add"), 1u);
  EXPECT_EQ(repo.loads(), loads);
  // Triton's version 2 rewritten with a file that does not load: version 2 stays (no
  // fall back to 1), and the failure is indexed.
  const auto mlp2 = repo.served("mlp");
  write_file(dir_ / "mlp" / "2" / "model.pte", {'b', 'a', 'd', '!', '!', '!', '!', '!', '!'});
  repo.refresh();
  EXPECT_EQ(version_of("mlp"), 2u);
  EXPECT_EQ(repo.served("mlp"), mlp2);
  auto failed = [&] {
    for (const ModelState& s : repo.index()) {
      if (s.model == "mlp" && !s.ready) return true;
    }
    return false;
  };
  EXPECT_TRUE(failed());
  // A bad version removed: its failure leaves the index, and version 1 is served.
  fs::remove_all(dir_ / "mlp" / "2");
  repo.refresh();
  EXPECT_FALSE(failed());
  EXPECT_EQ(version_of("mlp"), 1u);
}

TEST_F(Repo, TheDirectoryIsSpelledOneWay) {
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  RepositoryOptions o{dir_.string() + "//", ModelControl::kNone, {}, 50ms, 0ms};
  repo_ = ModelRepository::open(registry_, o).value();
  EXPECT_EQ(repo_->dir(), dir_.string());
  // The watcher's name for a file being written (the directory, "/", the name) is the
  // listing's: it is not read.
  ASSERT_TRUE(repo_->start().ok());
  const auto first = repo_->served("add");
  write_file(dir_ / "add.pte", bytes_of(fixture("mlp.pte")));
  repo_->refresh({(dir_ / "add.pte").string()});
  EXPECT_EQ(repo_->served("add"), first);
}

TEST_F(Repo, PreloadedNameLookupsWaitForTheFirstLoads) {
  write_file(dir_ / "add.pte", bytes_of(fixture("add.pte")));
  auto& repo = open(ModelControl::kNone);  // raises the registry's loading flag
  std::thread asker([&] { EXPECT_NE(registry_.find_preloaded("add.pte", kBackstop), nullptr); });
  std::this_thread::sleep_for(50ms);  // most often waiting already; asking later finds it too
  ASSERT_TRUE(repo.start().ok());
  asker.join();
  EXPECT_EQ(registry_.find_preloaded("missing.pte", 10s), nullptr);  // not loading: at once
}

}  // namespace
}  // namespace et::server::repository
