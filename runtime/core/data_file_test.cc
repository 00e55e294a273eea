// External data files (.ptd): the reader's checks on synthetic files laid out as
// ExecuTorch writes them, and programs whose tensors are kept in one (constants read
// in place, planned tensors given their initial value from it).
#include "runtime/core/data_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "runtime/core/method.h"
#include "runtime/testing/data_file_builder.h"
#include "runtime/testing/program_builder.h"

namespace et {
namespace {

using testing::DataFileBuilder;
using testing::ProgramBuilder;

Result<std::shared_ptr<const DataFile>> load(const std::vector<uint8_t>& bytes) {
  return DataFile::load(ProgramBytes::copy_of(bytes));
}

bool mentions(const Status& s, const std::string& part) {
  return s.message().find(part) != std::string::npos;
}

std::vector<float> as_floats(std::span<const uint8_t> bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

TEST(DataFile, FindsEveryBlobByKeyWithItsLayout) {
  DataFileBuilder b;
  b.add_floats("linear.weight", {1, 2, 3, 4, 5, 6}, {2, 3});
  b.add("xnnpack_blob", {9, 8, 7});
  b.alias("linear.weight.again", 0);
  auto data = load(b.finish());
  ASSERT_TRUE(data.ok()) << data.status().to_string();
  EXPECT_EQ((*data)->num_keys(), 3u);
  auto w = (*data)->find("linear.weight");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(as_floats(*w), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data()) % 16, 0u);
  const DataLayout* layout = (*data)->layout("linear.weight");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(layout->dtype, ScalarType::kFloat);
  EXPECT_EQ(layout->sizes, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ((*data)->layout("xnnpack_blob"), nullptr);
  auto blob = (*data)->find("xnnpack_blob");
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(std::vector<uint8_t>(blob->begin(), blob->end()), (std::vector<uint8_t>{9, 8, 7}));
  EXPECT_EQ((*data)->find("linear.weight.again")->data(), w->data());
  auto missing = (*data)->find("bias");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(mentions(missing.status(), "'bias'")) << missing.status().message();
}

TEST(DataFile, AProgramGivenAsItsDataFileIsNamed) {
  ProgramBuilder p;
  p.add_tensor({.sizes = {1}, .memory_id = 1});
  p.set_planned_buffers({16});
  auto data = load(p.finish());
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(mentions(data.status(), "program")) << data.status().message();
}

TEST(DataFile, EveryTruncationIsRefusedNeverReadPast) {
  DataFileBuilder b;
  b.add_floats("w", {1, 2, 3, 4}, {4});
  const std::vector<uint8_t> full = b.finish();
  for (size_t n = 0; n < full.size(); ++n) {
    auto data = load(std::vector<uint8_t>(full.begin(), full.begin() + n));
    EXPECT_FALSE(data.ok()) << "accepted " << n << " of " << full.size() << " bytes";
  }
}

TEST(DataFile, InconsistentFilesAreRefusedNamingTheProblem) {
  struct Case {
    const char* what;
    std::function<void(DataFileBuilder&)> build;
    const char* mention;
  };
  const std::vector<Case> cases = {
      {"duplicate key",
       [](DataFileBuilder& b) {
         b.add_floats("w", {1}, {1});
         b.add_floats("w", {2}, {1});
       },
       "two blobs named 'w'"},
      {"layout larger than its segment",
       [](DataFileBuilder& b) {
         b.add("w", std::vector<uint8_t>(8), DataFileBuilder::Layout{6, {4}});
       },
       "needs 16 bytes"},
      {"unknown scalar type",
       [](DataFileBuilder& b) {
         b.add("w", std::vector<uint8_t>(8), DataFileBuilder::Layout{99, {1}});
       },
       "layout for 'w'"},
      {"negative size",
       [](DataFileBuilder& b) {
         b.add("w", std::vector<uint8_t>(8), DataFileBuilder::Layout{6, {-1}});
       },
       "layout for 'w'"},
      {"segment index out of range", [](DataFileBuilder& b) { b.alias("w", 3); }, "segment 3"},
  };
  for (const Case& c : cases) {
    DataFileBuilder b;
    c.build(b);
    auto data = load(b.finish());
    ASSERT_FALSE(data.ok()) << c.what;
    EXPECT_EQ(data.status().code(), StatusCode::kInvalidProgram) << c.what;
    EXPECT_TRUE(mentions(data.status(), c.mention)) << c.what << ": " << data.status().message();
  }
}

TEST(DataFile, SegmentsOutsideTheFileAreRefused) {
  DataFileBuilder b;
  b.add_floats("w", {1, 2, 3, 4}, {4});
  std::vector<uint8_t> bytes = b.finish();
  // The header's segment data size (byte 40) grows past the end of the file.
  uint64_t size;
  std::memcpy(&size, &bytes[40], 8);
  size += 1;
  std::memcpy(&bytes[40], &size, 8);
  auto data = load(bytes);
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(mentions(data.status(), "does not fit")) << data.status().message();
  // Shrunk to less than the blob: the file is long enough, the segment is not inside.
  size = 8;
  std::memcpy(&bytes[40], &size, 8);
  data = load(bytes);
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(mentions(data.status(), "segment 0 (16 bytes at 0) lies outside its 8 bytes"))
      << data.status().message();
}

// ---- Programs with external tensors -----------------------------------------

// out = x + w (float32 [n]).
Status add(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* x, ctx.input(0));
  ET_ASSIGN_OR_RETURN(const Tensor* w, ctx.input(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  for (int64_t i = 0; i < out->numel(); ++i)
    out->data_as<float>()[i] = x->data_as<const float>()[i] + w->data_as<const float>()[i];
  return Status();
}

// x (planned input) + w (external: a constant, or with `planned_w` a planned tensor
// whose initial value is in the .ptd) -> out.
std::vector<uint8_t> program_with_external_w(bool planned_w = false, int32_t w_size = 3) {
  ProgramBuilder b;
  const int x = b.add_tensor({.sizes = {3}, .memory_id = 1});
  ProgramBuilder::TensorSpec w{.sizes = {w_size}, .external_name = "w"};
  if (planned_w) {
    w.memory_id = 1;
    w.memory_offset = 32;
  }
  const int wv = b.add_tensor(w);
  const int out = b.add_tensor({.sizes = {3}, .memory_id = 1, .memory_offset = 16});
  b.kernel_call(b.add_operator("test::add"), {x, wv, out});
  b.set_inputs({x});
  b.set_outputs({out});
  b.set_planned_buffers({64});
  return b.finish();
}

std::shared_ptr<const DataFile> data_with_w(std::vector<float> w) {
  DataFileBuilder b;
  b.add_floats("w", w, {static_cast<int32_t>(w.size())});
  auto data = load(b.finish());
  EXPECT_TRUE(data.ok()) << data.status().to_string();
  return data.ok() ? *data : nullptr;
}

std::vector<float> run(std::shared_ptr<const Program> program, std::vector<float> x) {
  KernelRegistry k;
  EXPECT_TRUE(k.add("test::add", add).ok());
  auto m = Method::load(std::move(program), "forward", {.kernels = &k});
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  if (!m.ok()) return {};
  const std::vector<int64_t> sizes = {static_cast<int64_t>(x.size())};
  TensorView v;
  v.data = x.data();
  v.nbytes = x.size() * sizeof(float);
  v.dtype = ScalarType::kFloat;
  v.sizes = sizes;
  EXPECT_TRUE((*m)->set_input(0, InputValue::of_tensor(v)).ok());
  Status s = (*m)->execute();
  EXPECT_TRUE(s.ok()) << s.to_string();
  const Tensor& out = (*(*m)->output(0))->to_tensor();
  return std::vector<float>(out.data_as<const float>(), out.data_as<const float>() + out.numel());
}

TEST(ExternalData, ConstantsAreReadFromTheDataFile) {
  for (bool planned : {false, true}) {
    auto program = Program::load(ProgramBytes::adopt(program_with_external_w(planned)),
                                 data_with_w({10, 20, 30}));
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    EXPECT_EQ(run(*program, {1, 2, 3}), (std::vector<float>{11, 22, 33})) << planned;
  }
}

// As ExecuTorch's: the program loads without its data file (its metadata can be read);
// a method holding a tensor kept there refuses to load, naming the tensor and the fix.
TEST(ExternalData, AProgramWithoutItsDataFileNamesTheTensorAndTheFix) {
  for (bool planned : {false, true}) {
    auto program = Program::load(ProgramBytes::adopt(program_with_external_w(planned)));
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    ASSERT_TRUE((*program)->method_meta("forward").ok());
    const Status whole = (*program)->check_data_given();
    EXPECT_EQ(whole.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(mentions(whole, "'w'")) << whole.message();
    KernelRegistry k;
    ASSERT_TRUE(k.add("test::add", add).ok());
    auto m = Method::load(*program, "forward", {.kernels = &k});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(mentions(m.status(), "method 'forward' cannot load")) << m.status().message();
    EXPECT_TRUE(mentions(m.status(), "'w'")) << m.status().message();
    EXPECT_TRUE(mentions(m.status(), "--data")) << m.status().message();
  }
  // With it, both checks pass.
  auto program =
      Program::load(ProgramBytes::adopt(program_with_external_w()), data_with_w({1, 2, 3}));
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  EXPECT_TRUE((*program)->check_data_given().ok());
}

TEST(ExternalData, AMismatchedDataFileIsRefused) {
  // A .ptd without the tensor, one of another shape, and one with too few bytes.
  DataFileBuilder other;
  other.add_floats("v", {1, 2, 3}, {3});
  DataFileBuilder short_blob;
  short_blob.add("w", std::vector<uint8_t>(8));
  const std::vector<std::pair<std::vector<uint8_t>, const char*>> cases = {
      {other.finish(), "has no tensor 'w'"},
      {[] {
         DataFileBuilder b;
         b.add_floats("w", {1, 2, 3, 4}, {4});
         return b.finish();
       }(),
       "float32 [4]"},
      {short_blob.finish(), "has 8 bytes"},
  };
  for (const auto& [bytes, mention] : cases) {
    auto data = load(bytes);
    ASSERT_TRUE(data.ok()) << data.status().to_string();
    auto program = Program::load(ProgramBytes::adopt(program_with_external_w()), *data);
    ASSERT_FALSE(program.ok()) << mention;
    EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(mentions(program.status(), mention)) << program.status().message();
  }
}

TEST(ExternalData, NamedDataFallsBackToTheDataFile) {
  DataFileBuilder b;
  b.add_floats("w", {10, 20, 30}, {3});
  b.add("blob", {1, 2});
  auto data = load(b.finish());
  ASSERT_TRUE(data.ok());
  auto program = Program::load(ProgramBytes::adopt(program_with_external_w()), *data);
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  auto blob = (*program)->named_data("blob");
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  EXPECT_EQ(blob->size(), 2u);
  EXPECT_FALSE((*program)->named_data("nothing").ok());
}

}  // namespace
}  // namespace et
