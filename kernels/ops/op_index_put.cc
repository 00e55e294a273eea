// aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False,
//     *, Tensor(a!) out)
// aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)
//     -> Tensor(a!)
// out (or self) = self with self[indices] = values: advanced indexing as in
// advanced_index.h (None, integer tensors, bool masks), values broadcast to the
// indexed shape. Where indices repeat, the last write wins; accumulate adds them all.
// Decoder KV caches are written this way (`cache[:, :, pos] = k`).
#include <fmt/format.h>

#include "kernels/util/advanced_index.h"
#include "kernels/util/convert.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/dense.h"
#include "kernels/util/integer_math.h"

namespace et::kernels {
namespace {

Status index_put_into(const KernelContext& ctx, const Tensor& self, std::span<Tensor* const> list,
                      const Tensor& values, bool accumulate, Tensor& out) {
  if (self.dtype() != out.dtype() || values.dtype() != self.dtype()) {
    return ctx.fail(fmt::format("values are {}, the tensor {}: index_put needs one dtype",
                                scalar_type_name(values.dtype()), scalar_type_name(self.dtype())));
  }
  if (&out != &self) {
    ET_RETURN_IF_ERROR(resize_output(ctx, out, shape_of(self)));
    ET_RETURN_IF_ERROR(copy_logical(ctx, self, out));
  }
  ET_ASSIGN_OR_RETURN(AdvancedIndex plan, plan_advanced_index(ctx, self, list, out.strides()));
  int64_t total = 1;
  for (int d = 0; d < plan.result.rank; ++d) total *= plan.result.sizes[d];
  if (total == 0) return Status();
  return dispatch_compute(ctx, self.dtype(), [&](auto zero) -> Status {
    using C = decltype(zero);
    ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp_product({total}, sizeof(C)));
    C* v = static_cast<C*>(scratch);
    const std::array<int64_t, kMaxRank> dense = row_major_strides(plan.result);
    ET_RETURN_IF_ERROR(gather_as<C>(ctx, values, plan.result,
                                    {dense.data(), static_cast<size_t>(plan.result.rank)}, v));
    const bool ok = visit_dtype(out.dtype(), [&](auto out_zero) {
      using T = decltype(out_zero);
      T* o = out.data_as<T>();
      for (int64_t n = 0; n < total; ++n) {
        T& dst = o[plan.offsets[n]];
        dst = accumulate ? convert_value<T>(wrapping_add(convert_value<C>(dst), v[n]))
                         : convert_value<T>(v[n]);
      }
    });
    return ok ? Status() : ctx.unsupported("dtype is not supported");
  });
}

Status index_put_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto list, ctx.tensor_list_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* values, ctx.input(2));
  ET_ASSIGN_OR_RETURN(bool accumulate, ctx.bool_arg(3));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(4));
  return index_put_into(ctx, *self, list, *values, accumulate, *out);
}

Status index_put_inplace(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(Tensor * self, ctx.output(0));
  ET_ASSIGN_OR_RETURN(auto list, ctx.tensor_list_arg(1));
  ET_ASSIGN_OR_RETURN(const Tensor* values, ctx.input(2));
  ET_ASSIGN_OR_RETURN(bool accumulate, ctx.bool_arg(3));
  return index_put_into(ctx, *self, list, *values, accumulate, *self);
}

ET_REGISTER_KERNEL("aten::index_put.out", index_put_out);
ET_REGISTER_KERNEL("aten::index_put_", index_put_inplace);

}  // namespace
}  // namespace et::kernels
