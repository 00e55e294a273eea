#include "runtime/testing/bundle_builder.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>

#include "runtime/schema/bundled_program_generated.h"

namespace et::testing {
namespace {

flatbuffers::Offset<bfb::Value> write_value(flatbuffers::FlatBufferBuilder& b,
                                            const BundleValue& v) {
  if (v.without_body) {
    bfb::ValueBuilder value(b);
    value.add_val_type(bfb::ValueUnion::Tensor);
    return value.Finish();
  }
  switch (v.kind) {
    case BundleValue::Kind::kInt:
      return bfb::CreateValue(b, bfb::ValueUnion::Int, bfb::CreateInt(b, v.int_value).Union());
    case BundleValue::Kind::kBool:
      return bfb::CreateValue(b, bfb::ValueUnion::Bool, bfb::CreateBool(b, v.bool_value).Union());
    case BundleValue::Kind::kDouble:
      return bfb::CreateValue(b, bfb::ValueUnion::Double,
                              bfb::CreateDouble(b, v.double_value).Union());
    case BundleValue::Kind::kTensor:
      break;
  }
  b.ForceVectorAlignment(v.data.size(), 1, 16);
  auto data = b.CreateVector(v.data);
  auto sizes = b.CreateVector(v.sizes);
  auto dim_order = v.dim_order.empty() ? 0 : b.CreateVector(v.dim_order);
  auto tensor = bfb::CreateTensor(b, v.scalar_type, sizes, data, dim_order);
  return bfb::CreateValue(b, bfb::ValueUnion::Tensor, tensor.Union());
}

}  // namespace

BundleValue BundleValue::floats(std::vector<int32_t> sizes, const std::vector<float>& values) {
  BundleValue v;
  v.sizes = std::move(sizes);
  for (size_t d = 0; d < v.sizes.size(); ++d) v.dim_order.push_back(static_cast<uint8_t>(d));
  v.data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(v.data.data(), values.data(), v.data.size());
  return v;
}

BundleValue BundleValue::of_int(int64_t x) {
  BundleValue v;
  v.kind = Kind::kInt;
  v.int_value = x;
  return v;
}

std::vector<uint8_t> build_bundle(const std::vector<uint8_t>& program,
                                  const std::vector<BundleSuite>& suites, uint32_t version) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<bfb::MethodTestSuite>> written;
  for (const BundleSuite& suite : suites) {
    std::vector<flatbuffers::Offset<bfb::TestCase>> cases;
    for (const BundleCase& c : suite.cases) {
      std::vector<flatbuffers::Offset<bfb::Value>> inputs, outputs;
      for (const BundleValue& v : c.inputs) inputs.push_back(write_value(b, v));
      for (const BundleValue& v : c.expected_outputs) outputs.push_back(write_value(b, v));
      cases.push_back(bfb::CreateTestCase(b, b.CreateVector(inputs), b.CreateVector(outputs)));
    }
    written.push_back(
        bfb::CreateMethodTestSuite(b, b.CreateString(suite.method), b.CreateVector(cases)));
  }
  auto suites_offset = b.CreateVector(written);
  b.ForceVectorAlignment(program.size(), 1, 32);
  auto program_offset = b.CreateVector(program);
  b.Finish(bfb::CreateBundledProgram(b, version, suites_offset, program_offset), "BP08");
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace et::testing
