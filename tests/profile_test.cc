// Profiles of real exported programs: every kernel and delegate instruction timed and
// named, delegate steps inside their call, aggregation and the Chrome trace.
#include "runtime/core/profile.h"

#include <gtest/gtest.h>

#include "runtime/core/method.h"
#include "runtime/devtools/chrome_trace.h"
#include "runtime/testing/fixtures.h"

namespace et {
namespace {

// A loaded method of a fixture with every input bound to zeros.
struct Ready {
  std::shared_ptr<const Program> program;
  std::unique_ptr<Method> method;
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<int64_t>> shapes;
};

Ready ready(const std::string& file) {
  Ready r;
  r.program = testing::fixture(file);
  auto m = Method::load(r.program, "forward");
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  r.method = std::move(m).value();
  std::vector<InputValue> values;
  r.inputs.reserve(r.method->num_inputs());
  r.shapes.reserve(r.method->num_inputs());
  for (const ValueMeta& in : r.method->meta().inputs) {
    auto& bytes = r.inputs.emplace_back(in.tensor->nbytes);
    auto& shape = r.shapes.emplace_back(in.tensor->sizes.begin(), in.tensor->sizes.end());
    values.push_back(InputValue::of_tensor(
        {.data = bytes.data(), .nbytes = bytes.size(), .dtype = in.tensor->dtype, .sizes = shape}));
  }
  EXPECT_TRUE(r.method->set_inputs(values).ok());
  return r;
}

TEST(Profile, EveryKernelInstructionIsTimedAndNamed) {
  Ready r = ready("mlp.pte");
  ExecuteProfile profile;
  profile.events.resize(5);  // execute() starts the profile afresh
  ASSERT_TRUE(r.method->execute({}, &profile).ok());
  EXPECT_EQ(profile.method, "forward");
  ASSERT_EQ(profile.events.size(), 5u);  // addmm, relu, addmm + the two permutes
  std::multiset<std::string> names;
  int64_t previous_start = profile.start_ns;
  for (const ProfileEvent& e : profile.events) {
    names.insert(e.name);
    EXPECT_EQ(e.kind, ProfileEvent::Kind::kOperator);
    EXPECT_GE(e.start_ns, previous_start);
    EXPECT_GE(e.end_ns, e.start_ns);
    EXPECT_LE(e.end_ns, profile.end_ns);
    previous_start = e.start_ns;
  }
  EXPECT_EQ(names.count("aten::addmm.out"), 2u);
  EXPECT_EQ(names.count("aten::relu.out"), 1u);
  EXPECT_EQ(names.count("aten::permute_copy.out"), 2u);
  // The first addmm: bias, input, transposed weight, output.
  const ProfileEvent& addmm =
      *std::find_if(profile.events.begin(), profile.events.end(),
                    [](const auto& e) { return e.name == "aten::addmm.out"; });
  EXPECT_EQ(addmm.args, "float32[32], float32[4, 16], float32[16, 32], float32[4, 32]");

  // Without a profile the method runs as before.
  ASSERT_TRUE(r.method->execute().ok());
}

TEST(Profile, DelegateCallsAndTheirSteps) {
  Ready r = ready("transformer_block_xnnpack.pte");
  ExecuteProfile profile;
  ASSERT_TRUE(r.method->execute({}, &profile).ok());
  size_t delegates = 0, steps = 0, own_kernel_steps = 0;
  const ProfileEvent* call = nullptr;
  for (const ProfileEvent& e : profile.events) {
    if (e.kind == ProfileEvent::Kind::kDelegate) {
      ++delegates;
      call = &e;
      EXPECT_EQ(e.name, "XnnpackBackend");
    } else if (e.kind == ProfileEvent::Kind::kDelegateStep) {
      ++steps;
      ASSERT_NE(call, nullptr) << "a step before any delegate call";
      EXPECT_EQ(e.instruction, call->instruction);
      EXPECT_GE(e.start_ns, call->start_ns);
      EXPECT_LE(e.end_ns, call->end_ns);
      EXPECT_GE(e.debug_id, 0);
      own_kernel_steps += e.name.find("(own kernel)") != std::string::npos;
      EXPECT_TRUE(e.name.rfind("XNNPACK ", 0) == 0 ||
                  e.name.find("(own kernel)") != std::string::npos)
          << e.name;
    }
  }
  EXPECT_GT(delegates, 0u);
  EXPECT_GE(steps, delegates);
  EXPECT_GT(own_kernel_steps, 0u);  // Debian's XNNPACK lacks some of its nodes
}

TEST(Profile, SummaryAggregatesExecutesSlowestFirst) {
  Ready r = ready("transformer_block_xnnpack.pte");
  std::vector<ExecuteProfile> profiles(3);
  for (ExecuteProfile& p : profiles) ASSERT_TRUE(r.method->execute({}, &p).ok());
  const ProfileSummary summary = ProfileSummary::of(profiles);
  EXPECT_EQ(summary.executes, 3u);
  ASSERT_FALSE(summary.rows.empty());
  int64_t previous = INT64_MAX;
  size_t events = 0;
  for (const ExecuteProfile& p : profiles) events += p.events.size();
  uint64_t calls = 0;
  for (const ProfileRow& row : summary.rows) {
    calls += row.calls;
    EXPECT_EQ(row.calls % 3, 0u) << row.name;  // every instruction ran in each execute
    EXPECT_LE(row.min_ns, row.max_ns);
    if (row.kind == ProfileEvent::Kind::kDelegateStep) continue;  // listed under their call
    EXPECT_LE(row.total_ns, previous) << row.name;
    previous = row.total_ns;
  }
  EXPECT_EQ(calls, events);
  const std::string table = summary.table();
  EXPECT_NE(table.find("3 execute(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("XnnpackBackend  (delegate 0)"), std::string::npos) << table;
  EXPECT_NE(table.find("  step at node "), std::string::npos) << table;
  EXPECT_NE(table.find("by operator / delegate, all arguments together:"), std::string::npos)
      << table;
  EXPECT_NE(table.find("aten::native_layer_norm.out  (float32["), std::string::npos) << table;
}

TEST(Profile, ChromeTraceHasAnEventPerProfileEvent) {
  Ready r = ready("mlp_xnnpack.pte");
  std::vector<ExecuteProfile> profiles(2);
  for (ExecuteProfile& p : profiles) ASSERT_TRUE(r.method->execute({}, &p).ok());
  const std::string json = chrome_trace_json(profiles);
  size_t complete = 0;
  for (size_t at = json.find("\"ph\": \"X\""); at != std::string::npos;
       at = json.find("\"ph\": \"X\"", at + 1)) {
    ++complete;
  }
  EXPECT_EQ(complete, 2 + profiles[0].events.size() + profiles[1].events.size());
  EXPECT_NE(json.find("\"name\": \"XnnpackBackend\", \"cat\": \"delegate\""), std::string::npos)
      << json;
  EXPECT_EQ(json.rfind("]}\n"), json.size() - 3);
}

}  // namespace
}  // namespace et
