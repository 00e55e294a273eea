// Method::generate through libetclient and a real et-serverd: token generation with the
// LLM programs ExecuTorch's export flow made (tests/models/llm_export_flow.py), the
// prefill and decode loop inside the daemon. Greedy tokens must equal those eager
// PyTorch picked when the fixtures were recorded (the inputs of each recorded decode
// call); sampling, stop tokens, the context bound and follow-up calls are checked too.
#include <gtest/gtest.h>

#include <cstring>

#include "etclient/client.h"
#include "tests/support/client_testing.h"

namespace et::testing {
namespace {

std::shared_ptr<etclient::Client> connect(const DaemonProcess& daemon) {
  auto client =
      etclient::Client::connect({.socket = daemon.socket(), .client_name = "generate_test"});
  EXPECT_TRUE(client.ok()) << client.status().message();
  return client.ok() ? *client : nullptr;
}

std::vector<int64_t> npy_ints(const std::string& rel) {
  const pb::Tensor t = npy_tensor(kFixtures + "/" + rel);
  const std::vector<uint8_t> bytes = tensor_bytes(t);
  std::vector<int64_t> v(bytes.size() / sizeof(int64_t));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(int64_t));
  return v;
}

// The recorded prompt and eager's 8 greedy tokens (each decode call's input).
struct Recorded {
  std::vector<int64_t> prompt, tokens;
};
Recorded recorded(const std::string& model) {
  Recorded r;
  r.prompt = npy_ints(model + "/forward.in0.npy");
  for (int call = 1; call <= 8; ++call) {
    r.tokens.push_back(npy_ints(model + "/forward.call" + std::to_string(call) + ".in0.npy")[0]);
  }
  return r;
}

class Generate : public ::testing::TestWithParam<std::string> {};

TEST_P(Generate, GreedyTokensEqualEagers) {
  DaemonProcess daemon;
  auto client = connect(daemon);
  ASSERT_TRUE(client);
  auto program = client->load_program(kFixtures + "/" + GetParam() + ".pte");
  ASSERT_TRUE(program.ok()) << program.status().message();
  auto method = (*program)->load_method();
  ASSERT_TRUE(method.ok()) << method.status().message();
  const Recorded want = recorded(GetParam());
  std::vector<int64_t> streamed;
  auto result = (*method)->generate({.prompt = want.prompt, .max_new_tokens = 8}, [&](int64_t t) {
    streamed.push_back(t);
    return true;
  });
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->tokens, want.tokens);
  EXPECT_EQ(streamed, want.tokens);
  EXPECT_EQ(result->stop_reason, "max_new_tokens");
  EXPECT_EQ(result->prompt_tokens, want.prompt.size());
  EXPECT_EQ(result->next_pos, static_cast<int64_t>(want.prompt.size()) + 7);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Generate,
                         ::testing::Values("llama_export_flow", "llama_export_flow_xnnpack",
                                           "llama_recipe_8da4w_xnnpack",
                                           "llama_recipe_emb4_xnnpack",
                                           "llama_recipe_8da4w_emb4_kv8_xnnpack"));

struct Loaded {
  DaemonProcess daemon;
  std::shared_ptr<etclient::Client> client;
  std::shared_ptr<etclient::Program> program;
};

std::unique_ptr<Loaded> load(const std::string& model) {
  auto l = std::make_unique<Loaded>();
  l->client = connect(l->daemon);
  if (!l->client) return nullptr;
  auto program = l->client->load_program(kFixtures + "/" + model + ".pte");
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (!program.ok()) return nullptr;
  l->program = *program;
  return l;
}

// A follow-up call continues the conversation in the same instance: 4 tokens, then
// the 4th as the next prompt at next_pos, gives eager's tokens 5..8.
TEST(GenerateCalls, AFollowUpContinuesTheConversation) {
  auto l = load("llama_export_flow");
  ASSERT_TRUE(l);
  auto method = l->program->load_method();
  ASSERT_TRUE(method.ok());
  const Recorded want = recorded("llama_export_flow");
  auto first = (*method)->generate({.prompt = want.prompt, .max_new_tokens = 4});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto rest = (*method)->generate(
      {.prompt = {first->tokens.back()}, .start_pos = first->next_pos, .max_new_tokens = 4});
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  std::vector<int64_t> all = first->tokens;
  all.insert(all.end(), rest->tokens.begin(), rest->tokens.end());
  EXPECT_EQ(all, want.tokens);
}

TEST(GenerateCalls, StopTokensTheContextAndTheCallerEndIt) {
  auto l = load("llama_export_flow");
  ASSERT_TRUE(l);
  auto method = l->program->load_method();
  ASSERT_TRUE(method.ok());
  const Recorded want = recorded("llama_export_flow");
  auto stopped = (*method)->generate({.prompt = want.prompt, .stop_tokens = {want.tokens[2]}});
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(stopped->stop_reason, "stop_token");
  EXPECT_EQ(stopped->tokens, std::vector<int64_t>(want.tokens.begin(), want.tokens.begin() + 3));

  // No bound given: the program's own (get_max_context_len: 64 positions).
  auto full = (*method)->generate({.prompt = want.prompt});
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->stop_reason, "context_full");
  EXPECT_EQ(full->next_pos, 64);
  EXPECT_EQ(full->tokens.size(), 64 - want.prompt.size() + 1);

  int seen = 0;
  auto cut = (*method)->generate({.prompt = want.prompt}, [&](int64_t) { return ++seen < 2; });
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  EXPECT_EQ(cut->stop_reason, "caller");
  EXPECT_EQ(seen, 2);

  auto past = (*method)->generate({.prompt = want.prompt, .start_pos = 62});
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("does not fit a context of 64"), std::string::npos)
      << past.status().message();
}

TEST(GenerateCalls, SamplingIsSeeded) {
  auto l = load("llama_export_flow");
  ASSERT_TRUE(l);
  const Recorded want = recorded("llama_export_flow");
  auto run = [&](uint64_t seed) {
    auto method = l->program->load_method();
    EXPECT_TRUE(method.ok());
    auto r = (*method)->generate({.prompt = want.prompt,
                                  .max_new_tokens = 16,
                                  .temperature = 1.5f,
                                  .top_p = 0.95f,
                                  .seed = seed});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->tokens : std::vector<int64_t>{};
  };
  const std::vector<int64_t> a = run(1), b = run(1), c = run(2);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(std::vector<int64_t>(a.begin(), a.begin() + 8), want.tokens);  // not greedy
}

TEST(GenerateCalls, AMethodOfAnotherShapeIsRefusedSayingWhy) {
  auto l = load("mlp");
  ASSERT_TRUE(l);
  auto method = l->program->load_method();
  ASSERT_TRUE(method.ok());
  auto r = (*method)->generate({.prompt = {1, 2, 3}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), etclient::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("LLM export flow"), std::string::npos)
      << r.status().message();
  auto llm = load("llama_export_flow");
  ASSERT_TRUE(llm);
  auto m2 = llm->program->load_method();
  ASSERT_TRUE(m2.ok());
  auto empty = (*m2)->generate({});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no tokens"), std::string::npos);
  auto hot = (*m2)->generate({.prompt = {1}, .top_p = 2});
  ASSERT_FALSE(hot.ok());
  EXPECT_NE(hot.status().message().find("top_p"), std::string::npos);
}

}  // namespace
}  // namespace et::testing
