// aten::repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size=None,
//     Tensor(a!) out)
// For a 1-d integer tensor of counts: index i repeated repeats[i] times, in repeats'
// dtype. The output's size depends on the data: out is resized within its capacity;
// output_size, when given, must be that size.
#include <fmt/format.h>

#include "kernels/util/convert.h"
#include "kernels/util/dense.h"

namespace et::kernels {
namespace {

bool is_integer(ScalarType t) {
  return t == ScalarType::kByte || t == ScalarType::kChar || t == ScalarType::kShort ||
         t == ScalarType::kInt || t == ScalarType::kLong;
}

Status repeat_interleave_tensor_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* repeats, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto output_size, ctx.optional_int_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(2));
  if (repeats->dim() != 1) return ctx.fail("repeats must be a 1-d tensor");
  if (!is_integer(repeats->dtype())) {
    return ctx.fail(
        fmt::format("repeats must be integers, not {}", scalar_type_name(repeats->dtype())));
  }
  if (out->dtype() != repeats->dtype()) return ctx.fail("repeats and output dtypes differ");
  ET_ASSIGN_OR_RETURN(const int64_t* counts, dense_as<int64_t>(ctx, *repeats));
  int64_t total = 0;
  for (int64_t i = 0; i < repeats->numel(); ++i) {
    if (counts[i] < 0)
      return ctx.fail(fmt::format("repeats can not be negative, got {}", counts[i]));
    if (__builtin_add_overflow(total, counts[i], &total)) return ctx.fail("repeats overflow");
  }
  if (output_size.has_value() && *output_size != total) {
    return ctx.fail(
        fmt::format("output_size {} does not match the sum of repeats {}", *output_size, total));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, Shape{{total}, 1}));
  if (total == 0) return Status();
  const int64_t stride = out->stride(0);
  visit_dtype(out->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) {
      T* o = out->data_as<T>();
      int64_t k = 0;
      for (int64_t i = 0; i < repeats->numel(); ++i) {
        // A narrow dtype wraps an index it cannot hold, as PyTorch's conversion does.
        const T v = static_cast<T>(i);
        for (int64_t r = 0; r < counts[i]; ++r) o[stride * k++] = v;
      }
    }
  });
  return Status();
}

ET_REGISTER_KERNEL("aten::repeat_interleave.Tensor_out", repeat_interleave_tensor_out);

}  // namespace
}  // namespace et::kernels
