// aten::roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out)
// Elements move `shift` places along each dim, wrapping around. With no dims, the
// tensor rolls as if flattened (one shift).
#include <fmt/format.h>

#include <cstring>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

// shift mod n in [0, n) for any int64 shift. REQUIRES: n > 0.
int64_t wrap_shift(int64_t shift, int64_t n) {
  const int64_t r = shift % n;
  return r < 0 ? r + n : r;
}

Status roll_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto shifts, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(auto dims, ctx.int_list_arg(2));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.output(3));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (shifts.empty()) return ctx.fail("shifts must not be empty");
  if (dims.empty() ? shifts.size() != 1 : shifts.size() != dims.size()) {
    return ctx.fail(fmt::format("shifts and dimensions must align. shifts: {}, dims: {}",
                                shifts.size(), dims.size()));
  }
  const Shape shape = shape_of(*self);
  std::array<int64_t, kMaxRank> shift_by{};
  for (size_t k = 0; k < dims.size(); ++k) {
    if (self->dim() == 0) return ctx.fail("cannot roll a 0-d tensor along a dim");
    ET_ASSIGN_OR_RETURN(int d, wrap_dim(ctx, dims[k], self->dim()));
    if (shape.sizes[d] > 0)
      shift_by[d] = wrap_shift(shift_by[d] + wrap_shift(shifts[k], shape.sizes[d]), shape.sizes[d]);
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
  const int64_t numel = self->numel();
  if (numel == 0) return Status();
  const size_t elsize = self->element_size();
  const auto* in = static_cast<const uint8_t*>(self->data());
  auto* o = static_cast<uint8_t*>(out->mutable_data());
  const int64_t flat_shift = dims.empty() ? wrap_shift(shifts[0], numel) : 0;
  // Output element at position pos reads the input at pos - shift along each dim (or
  // at flat index - shift in row-major order when flattened).
  std::array<int64_t, kMaxRank> pos{};
  for (int64_t n = 0; n < numel; ++n) {
    int64_t src = 0, dst = 0;
    if (dims.empty()) {
      int64_t flat = n - flat_shift;
      if (flat < 0) flat += numel;
      for (int d = shape.rank - 1; d >= 0; --d) {
        src += (flat % shape.sizes[d]) * self->stride(d);
        flat /= shape.sizes[d];
      }
    } else {
      for (int d = 0; d < shape.rank; ++d) {
        int64_t i = pos[d] - shift_by[d];
        if (i < 0) i += shape.sizes[d];
        src += i * self->stride(d);
      }
    }
    for (int d = 0; d < shape.rank; ++d) dst += pos[d] * out->stride(d);
    std::memmove(o + dst * static_cast<int64_t>(elsize), in + src * static_cast<int64_t>(elsize),
                 elsize);
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (++pos[d] < shape.sizes[d]) break;
      pos[d] = 0;
    }
  }
  return Status();
}

ET_REGISTER_KERNEL("aten::roll.out", roll_out);

}  // namespace
}  // namespace et::kernels
