// The KServe path in-process: models from preloaded programs, inference from many
// threads at once on shared instances, and unloading and reloading a program while
// calls of its models run (under TSan and ASan in CI).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "server/core/core.h"
#include "server/kserve/http_codec.h"
#include "server/kserve/infer.h"

namespace et::server::kserve {
namespace {

struct KServe {
  Core core{ServiceLimits{}};
  std::unique_ptr<repository::ModelRepository> programs =
      repository::ModelRepository::open(core.shared_programs(),
                                        {.dir = ET_FIXTURES_DIR,
                                         .control = repository::ModelControl::kExplicit,
                                         .load_at_start = {"add"}})
          .value();
  ModelCatalog models{core, programs.get(), 2};
  ShmRegistry system_shm{ShmLimits{}};
  CudaShmRegistry cuda_shm;
  std::atomic<bool> cancelled{false};

  KServe() {
    // spdlog makes its registry at the first log call, inside its uninstrumented
    // library: made here, before any test thread starts, TSan sees it published (made
    // by the first log of a later thread, it reported the hand-off as a race).
    spdlog::set_level(spdlog::level::info);
    EXPECT_TRUE(programs->start().ok());
    EXPECT_TRUE(models.find("add", "1").ok());
  }
  Status run(const inference::ModelInferRequest& req, inference::ModelInferResponse& resp) {
    InferContext ctx{core,
                     models,
                     system_shm,
                     cuda_shm,
                     []() -> Result<Peer> { return permission_denied("no peer in this test"); },
                     cancelled,
                     CallBounds{}};
    return infer(ctx, req, resp);
  }
};

inference::ModelInferRequest add_request(float a, float b) {
  inference::ModelInferRequest req;
  req.set_model_name("add");
  for (const char* name : {"input__0", "input__1"}) {
    auto& in = *req.add_inputs();
    in.set_name(name);
    in.set_datatype("FP32");
    in.add_shape(2);
    in.add_shape(3);
    std::vector<float> values(6, name[7] == '0' ? a : b);
    req.add_raw_input_contents(std::string(reinterpret_cast<const char*>(values.data()), 24));
  }
  return req;
}

float first_output(const inference::ModelInferResponse& resp) {
  float v = 0;
  std::memcpy(&v, resp.raw_output_contents(0).data(), sizeof(v));
  return v;
}

TEST(KServe, ManyThreadsOnOneModel) {
  KServe k;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        inference::ModelInferResponse resp;
        Status st = k.run(add_request(static_cast<float>(t), static_cast<float>(i)), resp);
        if (!st.ok() || first_output(resp) != static_cast<float>(t + i)) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  auto model = k.models.find("add", "");
  ASSERT_TRUE(model.ok());
  EXPECT_LE((*model)->instances(), 2u);
  EXPECT_EQ((*model)->stats().inference_count, 800u);
}

TEST(KServe, UnloadAndReloadWhileCallsRun) {
  KServe k;
  std::atomic<bool> stop{false};
  std::atomic<int> ran{0}, refused{0}, wrong{0};
  std::thread caller([&] {
    while (!stop) {
      inference::ModelInferResponse resp;
      Status st = k.run(add_request(1, 2), resp);
      if (st.ok()) {
        ++ran;
        if (first_output(resp) != 3.0f) ++wrong;
      } else if (st.code() == StatusCode::kNotFound) {
        ++refused;  // between the unload and the reload
      } else {
        ++wrong;
      }
    }
  });
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(k.models.unload("add").ok());
    EXPECT_TRUE(k.models.load("add").ok());
    // Let calls run on the reloaded models before the next unload.
    const int before = ran.load();
    for (int wait = 0; wait < 2000 && ran.load() == before; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  stop = true;
  caller.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(ran.load(), 0);
}

TEST(KServe, HttpBodiesRoundTrip) {
  KServe k;
  const std::string body =
      R"({"inputs":[{"name":"input__0","shape":[2,3],"datatype":"FP32","data":[[1,2,3],[4,5,NaN]]},)"
      R"({"name":"input__1","shape":[2,3],"datatype":"FP32","parameters":{"binary_data_size":24}}],)"
      R"("outputs":[{"name":"output__0","parameters":{"binary_data":false}}]})";
  std::string binary(24, '\0');
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  std::memcpy(binary.data(), ones, 24);
  auto parsed = parse_http_infer(body + binary, std::to_string(body.size()), "add", "");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  inference::ModelInferResponse resp;
  ASSERT_TRUE(k.run(parsed->req, resp).ok());
  const HttpBody out = write_http_infer(*parsed, resp);
  EXPECT_FALSE(out.header_length);
  EXPECT_NE(out.text.find(R"("data":[2,3,4,5,6,NaN])"), std::string::npos) << out.text;
  // A binary size past the body is refused, naming the input.
  auto past = parse_http_infer(body, std::to_string(body.size()), "add", "");
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("input__1"), std::string::npos);
}

TEST(KServe, HttpBodiesNestedTooDeepAreRefusedNotFollowed) {
  // A million nested arrays: a recursive walk would overflow the thread's stack.
  const size_t depth = 1'000'000;
  const std::string body =
      R"({"inputs":[{"name":"input__0","shape":[1],"datatype":"FP32","data":)" +
      std::string(depth, '[') + "1" + std::string(depth, ']') + R"(,"parameters":{"x":)" +
      std::string(depth, '[') + std::string(depth, ']') + "}}]}";
  auto parsed = parse_http_infer(body, std::nullopt, "add", "");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("more than 32 deep"), std::string::npos)
      << parsed.status().message();
}

TEST(KServe, HttpNumbersOutsideTheDatatypeAreRefused) {
  auto body = [](const char* datatype, const char* data) {
    return fmt::format(
        R"({{"inputs":[{{"name":"input__0","shape":[1],"datatype":"{}","data":[{}]}}]}})", datatype,
        data);
  };
  for (auto [datatype, data] :
       {std::pair{"INT8", "300"}, std::pair{"UINT8", "-1"}, std::pair{"INT64", "1e300"},
        std::pair{"INT32", "1.5"}, std::pair{"UINT64", "\"x\""}}) {
    auto parsed = parse_http_infer(body(datatype, data), std::nullopt, "add", "");
    ASSERT_FALSE(parsed.ok()) << datatype << " " << data;
    EXPECT_NE(parsed.status().message().find("data[0]"), std::string::npos);
  }
  // A float beyond FP32's range is an infinity, as a cast to float32 rounds it.
  auto big = parse_http_infer(body("FP32", "1e300"), std::nullopt, "add", "");
  ASSERT_TRUE(big.ok());
  float v = 0;
  std::memcpy(&v, big->req.raw_input_contents(0).data(), 4);
  EXPECT_TRUE(std::isinf(v) && v > 0);
}

TEST(KServe, HttpResponsesKeepTheRequestIdAsGiven) {
  KServe k;
  const std::string body =
      R"({"id":"@et-float-data-0@","inputs":[{"name":"input__0","shape":[2,3],"datatype":"FP32",)"
      R"("data":[1,1,1,1,1,1]},{"name":"input__1","shape":[2,3],"datatype":"FP32","data":[1,1,1,1,1,1]}]})";
  auto parsed = parse_http_infer(body, std::nullopt, "add", "");
  ASSERT_TRUE(parsed.ok());
  inference::ModelInferResponse resp;
  ASSERT_TRUE(k.run(parsed->req, resp).ok());
  const HttpBody out = write_http_infer(*parsed, resp);
  auto j = nlohmann::json::parse(out.text);
  EXPECT_EQ(j["id"], "@et-float-data-0@");
  EXPECT_EQ(j["outputs"][0]["data"], nlohmann::json({2, 2, 2, 2, 2, 2}));
}

}  // namespace
}  // namespace et::server::kserve
