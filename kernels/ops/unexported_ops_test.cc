// Kernels no exported program reaches, each called by name in a one-instruction
// program run through Method:
//   aten::_native_batch_norm_legit.out  export functionalises training batch norm
//                                       (_native_batch_norm_legit_functional, which
//                                       to_executorch cannot lower)
//   aten::index_put_                    functionalised into index_put.out
//   aten::lift_fresh_copy.out           torch.export turns lift_fresh_copy into clone
//   aten::sym_numel                     x.numel() traces to a product of sym_size
//   et_copy::_h2d_copy.out, _d2h_copy.out  inserted only by device-aware lowering
// Expected values: batch norm's are PyTorch's, computed in .venv-export with
// torch.ops.aten._native_batch_norm_legit.default on the same inputs (the calls are
// quoted at each test) and pasted; the others are worked out by hand (copies,
// element counts, rows written).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/method.h"
#include "runtime/testing/one_call.h"

namespace et {
namespace {

using testing::OneCall;
using testing::values_of;

std::vector<int32_t> sizes_of(const Method& m, size_t output) {
  auto s = (*m.output(output))->to_tensor().sizes();
  return {s.begin(), s.end()};
}

// Binds a float input of the given shape.
Status set_floats(Method& m, size_t index, std::vector<float>& data, std::vector<int64_t> sizes) {
  TensorView view;
  view.data = data.data();
  view.nbytes = data.size() * sizeof(float);
  view.dtype = ScalarType::kFloat;
  view.sizes = sizes;
  return m.set_input(index, InputValue::of_tensor(view));
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// --- the three copies: lift_fresh_copy.out, _h2d_copy.out, _d2h_copy.out

struct CopyOp {
  const char* name;
  const char* overload;
};

class Copies : public ::testing::TestWithParam<CopyOp> {};

TEST_P(Copies, CopyValuesOfEachDtype) {
  {
    OneCall p;
    const int self = p.constant<float>(ScalarType::kFloat, {2, 3}, {1.5f, -2, 3, 0.25f, -0.5f, 7});
    const int out = p.planned(ScalarType::kFloat, {2, 3});
    p.call(GetParam().name, GetParam().overload, {self, out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_TRUE((*m)->execute().ok());
    EXPECT_EQ(values_of<float>(**m, 0), (std::vector<float>{1.5f, -2, 3, 0.25f, -0.5f, 7}));
  }
  {
    OneCall p;
    const int self = p.constant<int64_t>(ScalarType::kLong, {3}, {INT64_MIN, -1, INT64_MAX});
    const int out = p.planned(ScalarType::kLong, {3});
    p.call(GetParam().name, GetParam().overload, {self, out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_TRUE((*m)->execute().ok());
    EXPECT_EQ(values_of<int64_t>(**m, 0), (std::vector<int64_t>{INT64_MIN, -1, INT64_MAX}));
  }
  {
    OneCall p;
    const int self = p.constant<uint8_t>(ScalarType::kBool, {4}, {1, 0, 0, 1});
    const int out = p.planned(ScalarType::kBool, {4});
    p.call(GetParam().name, GetParam().overload, {self, out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    ASSERT_TRUE((*m)->execute().ok());
    EXPECT_EQ(values_of<uint8_t>(**m, 0), (std::vector<uint8_t>{1, 0, 0, 1}));
  }
}

// out's dim order decides its memory layout: a (2, 3) copy into dim order (1, 0)
// stores column by column.
TEST_P(Copies, WritesInOutsDimOrder) {
  OneCall p;
  const int self = p.constant<float>(ScalarType::kFloat, {2, 3}, {0, 1, 2, 10, 11, 12});
  const int out = p.planned(ScalarType::kFloat, {2, 3}, {1, 0});
  p.call(GetParam().name, GetParam().overload, {self, out});
  p.b.set_outputs({out});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_TRUE((*m)->execute().ok());
  EXPECT_EQ(values_of<float>(**m, 0), (std::vector<float>{0, 10, 1, 11, 2, 12}));
}

// A dynamic out (planned for up to (4, 3)) takes self's shape.
TEST_P(Copies, OutTakesSelfsShape) {
  OneCall p;
  const int self = p.constant<float>(ScalarType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  const int out = p.planned(ScalarType::kFloat, {4, 3}, {}, /*shape_dynamism=*/1);
  p.call(GetParam().name, GetParam().overload, {self, out});
  p.b.set_outputs({out});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_TRUE((*m)->execute().ok());
  EXPECT_EQ(sizes_of(**m, 0), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(values_of<float>(**m, 0), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_P(Copies, RefusesADtypeChangeAndAConstantOut) {
  {
    OneCall p;
    const int self = p.constant<float>(ScalarType::kFloat, {2}, {1, 2});
    const int out = p.planned(ScalarType::kInt, {2});
    p.call(GetParam().name, GetParam().overload, {self, out});
    p.b.set_outputs({out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_FALSE((*m)->execute().ok());
  }
  {
    OneCall p;
    const int self = p.constant<float>(ScalarType::kFloat, {2}, {1, 2});
    const int out = p.constant<float>(ScalarType::kFloat, {2}, {0, 0});
    p.call(GetParam().name, GetParam().overload, {self, out});
    auto m = p.load();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    Status s = (*m)->execute();
    EXPECT_NE(s.message().find("program constant"), std::string::npos) << s.to_string();
  }
}

INSTANTIATE_TEST_SUITE_P(UnexportedOps, Copies,
                         ::testing::Values(CopyOp{"aten::lift_fresh_copy", "out"},
                                           CopyOp{"et_copy::_h2d_copy", "out"},
                                           CopyOp{"et_copy::_d2h_copy", "out"}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.name;
                           return n.substr(n.find("::") + 2);
                         });

// --- aten::sym_numel

Result<int64_t> numel_of(ScalarType dtype, std::vector<int32_t> sizes, bool with_memory) {
  OneCall p;
  const int self = with_memory ? p.planned(dtype, sizes) : p.shape_only(dtype, sizes);
  const int result = p.b.add_none();
  p.call("aten::sym_numel", "", {self, result});
  p.b.set_outputs({result});
  ET_ASSIGN_OR_RETURN(std::unique_ptr<Method> m, p.load());
  ET_RETURN_IF_ERROR(m->execute());
  ET_ASSIGN_OR_RETURN(const Value* v, m->output(0));
  if (!v->is_int()) return invalid_argument("sym_numel gave no int");
  return v->to_int();
}

TEST(UnexportedOps, SymNumelCountsElements) {
  EXPECT_EQ(*numel_of(ScalarType::kFloat, {2, 3, 4}, true), 24);
  EXPECT_EQ(*numel_of(ScalarType::kLong, {7}, true), 7);
  EXPECT_EQ(*numel_of(ScalarType::kFloat, {}, true), 1);  // a 0-d tensor holds one
  EXPECT_EQ(*numel_of(ScalarType::kFloat, {3, 0, 5}, false), 0);
  // Only the shape is read: a tensor with no memory is fine.
  EXPECT_EQ(*numel_of(ScalarType::kHalf, {5, 6}, false), 30);
}

TEST(UnexportedOps, SymNumelNeedsATensor) {
  OneCall p;
  const int not_tensor = p.b.add_int(3);
  const int result = p.b.add_none();
  p.call("aten::sym_numel", "", {not_tensor, result});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_FALSE((*m)->execute().ok());
}

// --- aten::index_put_(self, indices, values, accumulate): writes self in place

struct IndexPut {
  std::vector<int64_t> index;
  std::vector<int32_t> value_sizes;
  std::vector<float> values;
  bool accumulate = false;
};

// self is a (4, 3) float input holding 0..11; index_put_ writes it; returns self.
Result<std::vector<float>> index_put_(const IndexPut& c) {
  OneCall p;
  const int self = p.planned(ScalarType::kFloat, {4, 3});
  const int index =
      p.constant<int64_t>(ScalarType::kLong, {static_cast<int32_t>(c.index.size())}, c.index);
  const int list = p.b.add_tensor_list({index});
  const int values = p.constant<float>(ScalarType::kFloat, c.value_sizes, c.values);
  const int accumulate = p.b.add_bool(c.accumulate);
  p.call("aten::index_put_", "", {self, list, values, accumulate});
  p.b.set_inputs({self});
  p.b.set_outputs({self});
  ET_ASSIGN_OR_RETURN(std::unique_ptr<Method> m, p.load());
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  ET_RETURN_IF_ERROR(set_floats(*m, 0, x, {4, 3}));
  ET_RETURN_IF_ERROR(m->execute());
  return values_of<float>(*m, 0);
}

TEST(UnexportedOps, IndexPutInPlaceWritesRows) {
  // self[[3, 0]] = [[-1, -2, -3], [-4, -5, -6]]: row 3 gets the first, row 0 the second.
  auto r = index_put_({{3, 0}, {2, 3}, {-1, -2, -3, -4, -5, -6}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, (std::vector<float>{-4, -5, -6, 3, 4, 5, 6, 7, 8, -1, -2, -3}));
}

TEST(UnexportedOps, IndexPutInPlaceBroadcastsValuesAndWrapsNegativeIndices) {
  // self[[-1, 1]] = [100, 200, 300]
  auto r = index_put_({{-1, 1}, {3}, {100, 200, 300}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, (std::vector<float>{0, 1, 2, 100, 200, 300, 6, 7, 8, 100, 200, 300}));
}

TEST(UnexportedOps, IndexPutInPlaceAccumulatesRepeatedIndices) {
  // self.index_put_([[1, 1, 2]], [[1, 1, 1], [10, 10, 10], [0.5, 0.5, 0.5]], True)
  auto r = index_put_({{1, 1, 2}, {3, 3}, {1, 1, 1, 10, 10, 10, 0.5f, 0.5f, 0.5f}, true});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, (std::vector<float>{0, 1, 2, 14, 15, 16, 6.5f, 7.5f, 8.5f, 9, 10, 11}));
}

TEST(UnexportedOps, IndexPutInPlaceRefusesBadIndicesAndConstants) {
  EXPECT_FALSE(index_put_({{4}, {3}, {1, 2, 3}}).ok());
  EXPECT_FALSE(index_put_({{-5}, {3}, {1, 2, 3}}).ok());
  EXPECT_FALSE(index_put_({{0, 1}, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}).ok());  // 3 rows for 2
  OneCall p;
  const int self = p.constant<float>(ScalarType::kFloat, {2}, {1, 2});
  const int index = p.constant<int64_t>(ScalarType::kLong, {1}, {0});
  const int list = p.b.add_tensor_list({index});
  const int values = p.constant<float>(ScalarType::kFloat, {1}, {5});
  p.call("aten::index_put_", "", {self, list, values, p.b.add_bool(false)});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  Status s = (*m)->execute();
  EXPECT_NE(s.message().find("program constant"), std::string::npos) << s.to_string();
}

// --- aten::_native_batch_norm_legit.out(input, weight, bias, running_mean,
//     running_var, training, momentum, eps, *, out, save_mean, save_invstd)

const std::vector<float> kBnInput = {1.0f,  2.0f, 0.5f, -1.0f, 3.0f, 3.5f,  // (2, 3, 2)
                                     -2.0f, 4.0f, 1.5f, 0.0f,  2.0f, -0.5f};
const std::vector<float> kBnWeight = {1.5f, -0.5f, 2.0f};
const std::vector<float> kBnBias = {0.25f, 1.0f, -1.0f};

struct BatchNorm {
  std::vector<float> out, save_mean, save_invstd, running_mean, running_var;
  std::vector<int32_t> save_sizes;
};

// running_mean = [0.5, -0.25, 1.0] and running_var = [2.0, 0.5, 1.5] are inputs (the
// kernel writes them when training); they are returned after the call.
Result<BatchNorm> batch_norm(bool training, double momentum, double eps, bool affine) {
  OneCall p;
  const int input = p.constant<float>(ScalarType::kFloat, {2, 3, 2}, kBnInput);
  const int weight =
      affine ? p.constant<float>(ScalarType::kFloat, {3}, kBnWeight) : p.b.add_none();
  const int bias = affine ? p.constant<float>(ScalarType::kFloat, {3}, kBnBias) : p.b.add_none();
  const int rm = p.planned(ScalarType::kFloat, {3});
  const int rv = p.planned(ScalarType::kFloat, {3});
  const int out = p.planned(ScalarType::kFloat, {2, 3, 2});
  const int save_mean = p.planned(ScalarType::kFloat, {3}, {}, /*shape_dynamism=*/1);
  const int save_invstd = p.planned(ScalarType::kFloat, {3}, {}, /*shape_dynamism=*/1);
  p.call("aten::_native_batch_norm_legit", "out",
         {input, weight, bias, rm, rv, p.b.add_bool(training), p.b.add_double(momentum),
          p.b.add_double(eps), out, save_mean, save_invstd});
  p.b.set_inputs({rm, rv});
  p.b.set_outputs({out, save_mean, save_invstd, rm, rv});
  ET_ASSIGN_OR_RETURN(std::unique_ptr<Method> m, p.load());
  std::vector<float> running_mean = {0.5f, -0.25f, 1.0f};
  std::vector<float> running_var = {2.0f, 0.5f, 1.5f};
  ET_RETURN_IF_ERROR(set_floats(*m, 0, running_mean, {3}));
  ET_RETURN_IF_ERROR(set_floats(*m, 1, running_var, {3}));
  ET_RETURN_IF_ERROR(m->execute());
  return BatchNorm{values_of<float>(*m, 0), values_of<float>(*m, 1), values_of<float>(*m, 2),
                   values_of<float>(*m, 3), values_of<float>(*m, 4), sizes_of(*m, 1)};
}

TEST(UnexportedOps, BatchNormLegitTrainingUsesAndUpdatesBatchStatistics) {
  // out, save_mean, save_invstd = torch.ops.aten._native_batch_norm_legit.default(
  //     x, w, b, rm, rv, True, 0.1, 1e-5), which also updates rm and rv in place.
  auto r = batch_norm(true, 0.1, 1e-5, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near_all(
      r->out,
      {0.07679510116577148f, 0.7696146965026855f, 0.8613258600234985f, 1.693371057510376f,
       0.29776859283447266f, 0.946652889251709f, -2.0016636848449707f, 2.1552538871765137f,
       0.3066290616989136f, 1.138674259185791f, -1.0f, -4.244421482086182f},
      1e-5f);
  expect_near_all(r->save_mean, {1.25f, 0.25f, 2.0f}, 1e-6f);
  expect_near_all(r->save_invstd, {0.4618797302246094f, 1.10939359664917f, 0.6488842964172363f},
                  1e-6f);
  // running = 0.1 * batch + 0.9 * running; the variance unbiased (n / (n - 1)).
  expect_near_all(r->running_mean, {0.574999988079071f, -0.19999998807907104f, 1.100000023841858f},
                  1e-6f);
  expect_near_all(r->running_var, {2.424999952316284f, 0.5583333373069763f, 1.6666666269302368f},
                  1e-6f);
}

TEST(UnexportedOps, BatchNormLegitTrainingWithoutWeightAndBias) {
  // torch.ops.aten._native_batch_norm_legit.default(x, None, None, rm, rv, True, 0.25,
  //     1e-3) (computed in float64 and rounded here to float)
  auto r = batch_norm(true, 0.25, 1e-3, false);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near_all(
      r->out,
      {-0.1154577390025211f, 0.3463732170075632f, 0.2771795785157315f, -1.3858978925786576f,
       0.6487491201346025f, 0.9731236802019038f, -1.5009506070327738f, 1.2700351290277316f,
       1.3858978925786576f, -0.2771795785157315f, 0.0f, -1.6218728003365062f},
      1e-5f);
  expect_near_all(r->running_mean, {0.6875f, -0.125f, 1.25f}, 1e-6f);
  expect_near_all(r->running_var, {3.0625f, 0.6458333333333333f, 1.9166666666666665f}, 1e-6f);
}

TEST(UnexportedOps, BatchNormLegitEvalUsesRunningStatistics) {
  // torch.ops.aten._native_batch_norm_legit.default(x, w, b, rm, rv, False, 0.1, 1e-5):
  // save_mean and save_invstd come back empty, rm and rv unchanged.
  auto r = batch_norm(false, 0.1, 1e-5, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near_all(
      r->out,
      {0.7803287506103516f, 1.8409862518310547f, 0.4696752429008484f, 1.5303246974945068f,
       2.2659754753112793f, 3.0824694633483887f, -2.401643753051758f, 3.962301254272461f,
       -0.23742443323135376f, 0.8232250809669495f, 0.6329877376556396f, -3.44948148727417f},
      1e-5f);
  EXPECT_EQ(r->save_sizes, (std::vector<int32_t>{0}));
  EXPECT_TRUE(r->save_mean.empty());
  EXPECT_EQ(r->running_mean, (std::vector<float>{0.5f, -0.25f, 1.0f}));
  EXPECT_EQ(r->running_var, (std::vector<float>{2.0f, 0.5f, 1.5f}));
}

TEST(UnexportedOps, BatchNormLegitTrainingRefusesConstantRunningStatistics) {
  OneCall p;
  const int input = p.constant<float>(ScalarType::kFloat, {2, 3, 2}, kBnInput);
  const int rm = p.constant<float>(ScalarType::kFloat, {3}, {0, 0, 0});
  const int rv = p.constant<float>(ScalarType::kFloat, {3}, {1, 1, 1});
  const int out = p.planned(ScalarType::kFloat, {2, 3, 2});
  const int save_mean = p.planned(ScalarType::kFloat, {3});
  const int save_invstd = p.planned(ScalarType::kFloat, {3});
  p.call("aten::_native_batch_norm_legit", "out",
         {input, p.b.add_none(), p.b.add_none(), rm, rv, p.b.add_bool(true), p.b.add_double(0.1),
          p.b.add_double(1e-5), out, save_mean, save_invstd});
  auto m = p.load();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  Status s = (*m)->execute();
  EXPECT_NE(s.message().find("program constant"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace et
