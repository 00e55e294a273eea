// Programs with an external data file (.ptd) through the daemon: loaded with their data
// as one unit named by both hashes, shared by those hashes, refused with the reason
// when the data is missing or not theirs, and preloaded from --models with NAME.ptd
// beside NAME.pte. In-process against the service core, and one real daemon.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "proto/sha256.h"
#include "server/core/core.h"
#include "server/transport/etproto/et_protocol.h"
#include "tests/support/daemon.h"

namespace et::server {
namespace {

namespace pb = ::etserver::v1;

std::string fixture_bytes(const std::string& name) {
  std::ifstream in(std::string(ET_FIXTURES_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string hash(const std::string& bytes) {
  return ::et::wire::sha256_hex({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

class DataFileService : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  // A fresh service core with `limits`, and a session on it.
  void start(ServiceLimits limits) {
    core_ = std::make_unique<Core>(limits);
    et_ = std::make_unique<EtProtocol>(*core_);
    session_ = core_->open_session("test").value();
  }

  // program/data: bytes to send (empty: none); the hashes are sent as given.
  Result<pb::LoadProgramResponse> load(const std::shared_ptr<Session>& s,
                                       const std::string& program, const std::string& data,
                                       const std::string& sha256 = "",
                                       const std::string& data_sha256 = "") {
    pb::LoadProgramRequest req;
    req.set_session(s->token);
    req.set_sha256(sha256);
    req.set_data_sha256(data_sha256);
    if (!program.empty()) req.set_program_bytes(program);
    if (!data.empty()) req.set_data_bytes(data);
    pb::LoadProgramResponse resp;
    ET_RETURN_IF_ERROR(et_->load_program(req, resp));
    return resp;
  }

  // Runs `model`'s forward on its fixture input; the largest difference from eager.
  float run_fixture(const std::shared_ptr<Session>& s, uint64_t program, const std::string& model) {
    pb::LoadMethodRequest lm;
    lm.set_session(s->token);
    lm.set_program_id(program);
    lm.set_method_name("forward");
    pb::LoadMethodResponse method;
    Status loaded = et_->load_method(lm, method);
    EXPECT_TRUE(loaded.ok()) << loaded.to_string();
    pb::RunRequest req;
    req.set_session(s->token);
    req.set_method_handle(method.method_handle());
    const std::string dir = std::string(ET_FIXTURES_DIR) + "/" + model;
    *req.add_inputs()->mutable_tensor() = et::testing::npy_tensor(dir + "/forward.in0.npy");
    pb::RunResponse resp;
    Status ran = et_->run(req, resp);
    EXPECT_TRUE(ran.ok()) << ran.to_string();
    if (!ran.ok()) return INFINITY;
    const std::string got = resp.outputs(0).tensor().inline_data();
    const std::string want = et::testing::npy_tensor(dir + "/forward.out0.npy").inline_data();
    EXPECT_EQ(got.size(), want.size());
    float worst = 0;
    for (size_t i = 0; i + 4 <= std::min(got.size(), want.size()); i += 4) {
      float a, b;
      std::memcpy(&a, got.data() + i, 4);
      std::memcpy(&b, want.data() + i, 4);
      worst = std::max(worst, std::fabs(a - b));
    }
    return worst;
  }

  std::unique_ptr<Core> core_;
  std::unique_ptr<EtProtocol> et_;  // the et protocol over core_
  std::shared_ptr<Session> session_;
};

TEST_F(DataFileService, LoadsWithItsDataAndSharesThePairByHash) {
  for (const char* model : {"mlp_ptd", "mlp_ptd_xnnpack"}) {
    const std::string pte = fixture_bytes(std::string(model) + ".pte");
    const std::string ptd = fixture_bytes(std::string(model) + ".ptd");
    auto first = load(session_, pte, ptd, hash(pte), hash(ptd));
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    EXPECT_FALSE(first->already_loaded());
    EXPECT_EQ(first->info().data_sha256(), hash(ptd));
    EXPECT_EQ(first->info().data_size_bytes(), ptd.size());
    EXPECT_LT(run_fixture(session_, first->program_id(), model), 1e-5) << model;

    auto other = core_->open_session("other").value();
    auto by_hash = load(other, "", "", hash(pte), hash(ptd));
    ASSERT_TRUE(by_hash.ok()) << by_hash.status().to_string();
    EXPECT_TRUE(by_hash->already_loaded());
    EXPECT_LT(run_fixture(other, by_hash->program_id(), model), 1e-5) << model;

    // The program's hash alone names another unit (the program without data).
    auto alone = load(other, "", "", hash(pte));
    ASSERT_FALSE(alone.ok());
    EXPECT_EQ(alone.status().code(), StatusCode::kNotFound);
  }
}

TEST_F(DataFileService, MissingOrForeignDataIsRefusedWithTheReason) {
  const std::string pte = fixture_bytes("mlp_ptd.pte");
  const std::string ptd = fixture_bytes("mlp_ptd.ptd");
  // Without its data the program loads (its metadata can be read, as ExecuTorch's
  // does); its method refuses to load, naming the tensor.
  auto without = load(session_, pte, "");
  ASSERT_TRUE(without.ok()) << without.status().to_string();
  pb::LoadMethodRequest lm;
  lm.set_session(session_->token);
  lm.set_program_id(without->program_id());
  lm.set_method_name("forward");
  pb::LoadMethodResponse method;
  Status refused = et_->load_method(lm, method);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("method 'forward' cannot load: tensor 'fc1.weight' is kept in "
                                   "an external data file"),
            std::string::npos)
      << refused.message();

  auto foreign = load(session_, pte, fixture_bytes("cnn_ptd.ptd"));
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(foreign.status().message().find("has no tensor"), std::string::npos)
      << foreign.status().message();

  auto not_a_ptd = load(session_, pte, pte);
  ASSERT_FALSE(not_a_ptd.ok());
  EXPECT_NE(not_a_ptd.status().message().find("not its external data file"), std::string::npos)
      << not_a_ptd.status().message();

  auto wrong_hash = load(session_, pte, ptd, "", std::string(64, 'a'));
  ASSERT_FALSE(wrong_hash.ok());
  EXPECT_NE(wrong_hash.status().message().find("data file's bytes hash to"), std::string::npos)
      << wrong_hash.status().message();

  auto hash_without_bytes = load(session_, pte, "", "", hash(ptd));
  ASSERT_FALSE(hash_without_bytes.ok());
  EXPECT_NE(hash_without_bytes.status().message().find("none was sent"), std::string::npos)
      << hash_without_bytes.status().message();

  // Nothing was kept from the failures: the right pair still loads fresh.
  auto right = load(session_, pte, ptd);
  ASSERT_TRUE(right.ok()) << right.status().to_string();
  EXPECT_FALSE(right->already_loaded());
}

TEST_F(DataFileService, DataAndProgramCountTogetherAgainstTheLimits) {
  const std::string pte = fixture_bytes("llama_decode_ptd.pte");
  const std::string ptd = fixture_bytes("llama_decode_ptd.ptd");
  ServiceLimits limits;
  limits.max_program_bytes = pte.size() + ptd.size() - 1;  // each alone fits
  start(limits);
  auto refused = load(session_, pte, ptd).status();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("with its data file"), std::string::npos) << refused.message();
}

// The data file's bytes are given back with the program's when it is unloaded: a
// session can load and unload a pair any number of times within its byte limit.
TEST_F(DataFileService, UnloadingGivesTheDataBytesBack) {
  const std::string pte = fixture_bytes("mlp_ptd.pte");
  const std::string ptd = fixture_bytes("mlp_ptd.ptd");
  ServiceLimits limits;
  limits.max_program_bytes_per_session = pte.size() + ptd.size() + ptd.size() / 2;
  start(limits);
  for (int round = 0; round < 3; ++round) {
    auto loaded = load(session_, pte, ptd);
    ASSERT_TRUE(loaded.ok()) << "round " << round << ": " << loaded.status().to_string();
    pb::UnloadProgramRequest unload;
    unload.set_session(session_->token);
    unload.set_program_id(loaded->program_id());
    ASSERT_TRUE(et_->unload_program(unload).ok());
  }
}

// --models DIR: NAME.ptd beside NAME.pte is loaded as its data file.
TEST(DataFileDaemon, PreloadsTheDataFileBesideTheProgram) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("et-ptd-models-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path fixtures(ET_FIXTURES_DIR);
  fs::copy_file(fixtures / "mlp_ptd_xnnpack.pte", dir / "mlp_ptd_xnnpack.pte",
                fs::copy_options::overwrite_existing);
  fs::copy_file(fixtures / "mlp_ptd_xnnpack.ptd", dir / "mlp_ptd_xnnpack.ptd",
                fs::copy_options::overwrite_existing);
  fs::copy_file(fixtures / "mlp_ptd.pte", dir / "mlp_ptd.pte",  // its .ptd is missing
                fs::copy_options::overwrite_existing);
  {
    et::testing::DaemonProcess daemon({"--models", dir.string()});
    et::testing::TestClient c(daemon.socket());
    ASSERT_TRUE(c.connected()) << daemon.log();
    pb::LoadProgramRequest req;
    req.set_session(c.session());
    req.set_preloaded_name("mlp_ptd_xnnpack.pte");
    pb::LoadProgramResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = c.stub().LoadProgram(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << daemon.log();
    EXPECT_EQ(resp.info().data_sha256(), hash(fixture_bytes("mlp_ptd_xnnpack.ptd")));
    std::string error;
    EXPECT_NE(c.load_method(resp.program_id(), "forward", &error), 0u) << error;
    // The one without its .ptd is reported and skipped, naming the tensor.
    EXPECT_NE(daemon.log().find("model mlp_ptd version 1 (" + (dir / "mlp_ptd.pte").string() +
                                ") did not load"),
              std::string::npos)
        << daemon.log();
    EXPECT_NE(daemon.log().find("fc1.weight"), std::string::npos) << daemon.log();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace et::server
