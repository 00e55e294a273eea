// Float sums and means, whose common case (every reduced dim after every kept one, a
// contiguous float32 input) reads the input in place (sum_contiguous_runs) and whose
// other cases take the general path: both against sums worked out here in double.
#include "kernels/util/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/testing/one_call.h"

namespace et::kernels {
namespace {

using et::testing::OneCall;

struct Reduction {
  const char* op;                 // "aten::mean" or "aten::sum"
  const char* overload;           // "out" or "IntList_out"
  std::vector<int32_t> in_sizes;  // float32, contiguous, values in [-1, 1)
  std::vector<int64_t> dims;
  bool keepdim;
  ScalarType out_dtype;
  std::vector<int32_t> out_sizes;
};

// Runs the reduction on seeded values; returns them and the output as doubles.
Result<std::vector<double>> run(const Reduction& r, std::vector<float>& values) {
  size_t n = 1;
  for (int32_t s : r.in_sizes) n *= static_cast<size_t>(s);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  values.resize(n);
  for (float& v : values) v = uniform(gen);
  OneCall p;
  const int self = p.constant<float>(ScalarType::kFloat, r.in_sizes, values);
  std::vector<int64_t> dim_values;  // an int list holds the indices of int values
  for (int64_t d : r.dims) dim_values.push_back(p.b.add_int(d));
  const int dims = p.b.add_int_list(dim_values);
  const int keepdim = p.b.add_bool(r.keepdim);
  const int dtype = r.out_dtype == ScalarType::kFloat ? p.b.add_none()
                                                      : p.b.add_int(static_cast<int>(r.out_dtype));
  const int out = p.planned(r.out_dtype, r.out_sizes);
  p.call(r.op, r.overload, {self, dims, keepdim, dtype, out});
  p.b.set_outputs({out});
  ET_ASSIGN_OR_RETURN(std::unique_ptr<Method> m, p.load());
  ET_RETURN_IF_ERROR(m->execute());
  const Tensor& t = (*m->output(0))->to_tensor();
  std::vector<int32_t> sizes(t.sizes().begin(), t.sizes().end());
  if (sizes != r.out_sizes) return invalid_argument("the output has the wrong shape");
  std::vector<double> got;
  for (int64_t i = 0; i < t.numel(); ++i)
    got.push_back(r.out_dtype == ScalarType::kFloat ? t.data_as<float>()[i]
                                                    : t.data_as<double>()[i]);
  return got;
}

// The sum (or mean) of each output element by the definition: every input element's
// index, with the reduced dims dropped (or kept as size one), names its output.
std::vector<double> reference(const Reduction& r, const std::vector<float>& values) {
  const int rank = static_cast<int>(r.in_sizes.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t d : r.dims) reduced[(d + rank) % rank] = true;
  size_t out_n = 1, count = 1;
  for (int d = 0; d < rank; ++d) (reduced[d] ? count : out_n) *= r.in_sizes[d];
  std::vector<double> sums(out_n, 0.0);
  std::vector<int32_t> index(rank, 0);
  for (float v : values) {
    size_t o = 0;
    for (int d = 0; d < rank; ++d)
      if (!reduced[d]) o = o * r.in_sizes[d] + index[d];
    sums[o] += v;
    for (int d = rank - 1; d >= 0 && ++index[d] == r.in_sizes[d]; --d) index[d] = 0;
  }
  if (std::string(r.op) == "aten::mean")
    for (double& s : sums) s /= static_cast<double>(count);
  return sums;
}

class Reductions : public ::testing::TestWithParam<Reduction> {};

TEST_P(Reductions, MatchTheDefinition) {
  const Reduction& r = GetParam();
  std::vector<float> values;
  auto got = run(r, values);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const std::vector<double> want = reference(r, values);
  ASSERT_EQ(got->size(), want.size());
  const double tol = r.out_dtype == ScalarType::kFloat ? 1e-5 : 1e-12;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR((*got)[i], want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, Reductions,
    ::testing::Values(
        // In place: trailing dims (a mean over H and W), runs of 20 (8-lane body and tail).
        Reduction{"aten::mean", "out", {2, 3, 4, 5}, {2, 3}, false, ScalarType::kFloat, {2, 3}},
        // In place: runs shorter than the 8 partial sums, kept as size one.
        Reduction{"aten::mean", "out", {3, 1, 7}, {-1}, true, ScalarType::kFloat, {3, 1, 1}},
        // In place: a size-one kept dim after a reduced one does not change the layout.
        Reduction{"aten::mean", "out", {4, 1, 13}, {0, 2}, true, ScalarType::kFloat, {1, 1, 1}},
        // In place, into float64 (sum's dtype argument), every dim.
        Reduction{"aten::sum", "IntList_out", {5, 33}, {0, 1}, false, ScalarType::kDouble, {}},
        Reduction{"aten::sum", "IntList_out", {6, 17}, {1}, false, ScalarType::kFloat, {6}},
        // General path: a kept dim after a reduced one (strided runs).
        Reduction{"aten::sum", "IntList_out", {9, 4}, {0}, false, ScalarType::kFloat, {4}},
        Reduction{"aten::mean", "out", {3, 10, 2}, {1}, true, ScalarType::kFloat, {3, 1, 2}}),
    [](const auto& param_info) { return "case" + std::to_string(param_info.index); });

}  // namespace
}  // namespace et::kernels
