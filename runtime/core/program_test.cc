// Program loading and MethodMeta, on real exported programs.
#include "runtime/core/program.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/testing/fixtures.h"

namespace et {
namespace {

using testing::fixture;

const MethodMeta& meta(const std::shared_ptr<const Program>& p,
                       const std::string& method = "forward") {
  auto m = p->method_meta(method);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return **m;
}

// The meta of a fixture's forward method. The MethodMeta lives in its Program, so the
// program is kept for the rest of the test binary's life.
const MethodMeta& meta_of(const std::string& file) {
  static std::vector<std::shared_ptr<const Program>> kept;
  kept.push_back(fixture(file));
  return meta(kept.back());
}

// ExecuTorch's attributes: every tensor with a fully qualified name, in value order.
TEST(Program, NamedMutableBuffersAreAttributes) {
  const MethodMeta& named = meta_of("mutable_buffer_named.pte");
  ASSERT_EQ(named.attributes.size(), 1u);
  EXPECT_EQ(named.attributes[0].name, "total");
  EXPECT_EQ(named.attributes[0].tensor.dtype, ScalarType::kFloat);
  EXPECT_EQ(named.attributes[0].tensor.sizes, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(named.attributes[0].tensor.nbytes, 24u);
  EXPECT_TRUE(named.attributes[0].tensor.is_memory_planned);
  EXPECT_GE(named.attributes[0].value_index, 0);
  // Exported without emit_mutable_buffer_names, the same buffer has no name.
  EXPECT_TRUE(meta_of("mutable_buffer.pte").attributes.empty());
  EXPECT_TRUE(meta_of("mlp.pte").attributes.empty());
}

TEST(Program, MlpMeta) {
  auto p = fixture("mlp.pte");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->method_names(), std::vector<std::string>{"forward"});
  const MethodMeta& m = meta(p);
  ASSERT_EQ(m.inputs.size(), 1u);
  const TensorMeta& in = *m.inputs[0].tensor;
  EXPECT_EQ(in.dtype, ScalarType::kFloat);
  EXPECT_EQ(in.sizes, (std::vector<int32_t>{4, 16}));
  EXPECT_EQ(in.dim_order, (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(in.nbytes, 4u * 16 * 4);
  EXPECT_TRUE(in.is_memory_planned);
  EXPECT_FALSE(in.is_dynamic);
  EXPECT_EQ(in.device, DeviceType::kCpu);
  EXPECT_EQ(m.outputs[0].tensor->sizes, (std::vector<int32_t>{4, 8}));
  EXPECT_EQ(m.operators.size(), 3u);
  EXPECT_TRUE(m.backends.empty());
}

TEST(Program, ChannelsLastDimOrder) {
  const MethodMeta& m = meta_of("channels_last.pte");
  EXPECT_EQ(m.inputs[0].tensor->dim_order, (std::vector<uint8_t>{0, 2, 3, 1}));
}

TEST(Program, DynamicInputReportsUpperBounds) {
  const MethodMeta& m = meta_of("dynamic_batch.pte");
  EXPECT_TRUE(m.inputs[0].tensor->is_dynamic);
  EXPECT_EQ(m.inputs[0].tensor->sizes, (std::vector<int32_t>{8, 16}));
}

TEST(Program, UnplannedIo) {
  const MethodMeta& m = meta_of("add_unplanned_io.pte");
  EXPECT_FALSE(m.inputs[0].tensor->is_memory_planned);
  EXPECT_FALSE(m.outputs[0].tensor->is_memory_planned);
}

TEST(Program, ScalarInputsCarryTracedValues) {
  const MethodMeta& m = meta_of("scalars.pte");
  ASSERT_EQ(m.inputs.size(), 3u);
  EXPECT_EQ(m.inputs[1].kind, ValueKind::kInt);
  EXPECT_EQ(m.inputs[1].traced.to_int(), 3);
  EXPECT_EQ(m.inputs[2].kind, ValueKind::kDouble);
  EXPECT_EQ(m.inputs[2].traced.to_double(), 1.5);
}

TEST(Program, TwoMethods) {
  auto p = fixture("two_methods.pte");
  EXPECT_EQ(p->num_methods(), 2u);
  EXPECT_EQ(meta(p, "encode").inputs[0].tensor->sizes, (std::vector<int32_t>{3, 2}));
}

TEST(Program, DelegatedProgramNamesItsBackendAndPayload) {
  auto p = fixture("mlp_xnnpack.pte");
  EXPECT_EQ(meta(p).backends, std::vector<std::string>{"XnnpackBackend"});
}

TEST(Program, DtypesOfTypedModels) {
  EXPECT_EQ(meta_of("bfloat16.pte").inputs[0].tensor->dtype, ScalarType::kBFloat16);
  EXPECT_EQ(meta_of("float16.pte").inputs[0].tensor->dtype, ScalarType::kHalf);
  EXPECT_EQ(meta_of("embedding_int64.pte").inputs[0].tensor->dtype, ScalarType::kLong);
  EXPECT_EQ(meta_of("where_bool.pte").inputs[1].tensor->dtype, ScalarType::kBool);
}

TEST(Program, MissingFileIsAnIoError) {
  auto p = Program::load_file("/nonexistent/model.pte");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kIoError);
  EXPECT_NE(p.status().message().find("/nonexistent/model.pte"), std::string::npos);
}

TEST(Program, BytesOutliveTheCallersHandle) {
  auto bytes = ProgramBytes::map_file(std::string(ET_FIXTURES_DIR) + "/add.pte");
  ASSERT_TRUE(bytes.ok());
  auto p = Program::load(*bytes);
  ASSERT_TRUE(p.ok());
  std::weak_ptr<const ProgramBytes> weak = *bytes;
  bytes = Result<std::shared_ptr<const ProgramBytes>>(invalid_argument("dropped"));
  EXPECT_FALSE(weak.expired());  // the Program holds them
}

}  // namespace
}  // namespace et
