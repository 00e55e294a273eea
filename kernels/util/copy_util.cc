#include "kernels/util/copy_util.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "kernels/math/transpose.h"

namespace et::kernels {

Shape shape_of(const Tensor& t) {
  Shape s;
  s.rank = t.dim();
  for (int d = 0; d < s.rank; ++d) s.sizes[d] = t.size(d);
  return s;
}

namespace {

// One line of n elements of type T between two element strides.
template <typename T>
void copy_line(const uint8_t* in, int64_t in_stride, uint8_t* out, int64_t out_stride, int64_t n) {
  const auto* i = reinterpret_cast<const T*>(in);
  auto* o = reinterpret_cast<T*>(out);
  for (int64_t j = 0; j < n; ++j) o[j * out_stride] = i[j * in_stride];
}

// When the output runs along the innermost dim and the input along another one (`b`),
// copies it as planes transposed (transpose.h) and returns true.
bool copy_as_transpose(const Shape& s, const std::array<int64_t, kMaxRank>& ss,
                       const std::array<int64_t, kMaxRank>& ds, const uint8_t* in, uint8_t* out,
                       size_t elsize) {
  const int inner = s.rank - 1;
  if (ds[inner] != 1 || ss[inner] == 1) return false;
  int b = -1;
  for (int d = 0; d < inner; ++d) {
    if (ss[d] == 1) b = d;
  }
  if (b < 0 || (elsize != 1 && elsize != 2 && elsize != 4 && elsize != 8)) return false;
  Shape outer = s;
  outer.sizes[inner] = 1;
  outer.sizes[b] = 1;
  const std::array<const int64_t*, 2> strides = {ss.data(), ds.data()};
  const auto el = static_cast<int64_t>(elsize);
  const int64_t na = s.sizes[inner], nb = s.sizes[b];
  for_each_index<2>(outer, strides, [&](const std::array<int64_t, 2>& o) {
    const uint8_t* from = in + o[0] * el;
    uint8_t* to = out + o[1] * el;
    transpose_plane(from, ss[inner], to, ds[b], na, nb, elsize);
  });
  return true;
}

}  // namespace

void strided_copy(const Shape& shape, const void* src, const int64_t* src_strides, void* dst,
                  const int64_t* dst_strides, size_t elsize) {
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  // Size-one dims dropped, and neighbours merged where both layouts run one into the
  // other: a permute that keeps the last dims in place copies long runs.
  Shape s;
  std::array<int64_t, kMaxRank> ss{}, ds{};
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.sizes[d] == 0) return;
    if (shape.sizes[d] == 1) continue;
    if (s.rank > 0) {
      const int last = s.rank - 1;
      if (ss[last] == src_strides[d] * shape.sizes[d] &&
          ds[last] == dst_strides[d] * shape.sizes[d]) {
        s.sizes[last] *= shape.sizes[d];
        ss[last] = src_strides[d];
        ds[last] = dst_strides[d];
        continue;
      }
    }
    s.sizes[s.rank] = shape.sizes[d];
    ss[s.rank] = src_strides[d];
    ds[s.rank] = dst_strides[d];
    ++s.rank;
  }
  if (s.rank == 0) {
    std::memmove(out, in, elsize);
    return;
  }
  const int inner = s.rank - 1;
  const int64_t n = s.sizes[inner];
  const bool runs = ss[inner] == 1 && ds[inner] == 1;
  if (!runs && copy_as_transpose(s, ss, ds, in, out, elsize)) return;
  Shape outer = s;
  outer.sizes[inner] = 1;
  const std::array<const int64_t*, 2> strides = {ss.data(), ds.data()};
  const auto el = static_cast<int64_t>(elsize);
  for_each_index<2>(outer, strides, [&](const std::array<int64_t, 2>& o) {
    const uint8_t* from = in + o[0] * el;
    uint8_t* to = out + o[1] * el;
    if (runs) {
      std::memmove(to, from, static_cast<size_t>(n) * elsize);
      return;
    }
    switch (elsize) {
      case 1:
        return copy_line<uint8_t>(from, ss[inner], to, ds[inner], n);
      case 2:
        return copy_line<uint16_t>(from, ss[inner], to, ds[inner], n);
      case 4:
        return copy_line<uint32_t>(from, ss[inner], to, ds[inner], n);
      case 8:
        return copy_line<uint64_t>(from, ss[inner], to, ds[inner], n);
      default:
        for (int64_t j = 0; j < n; ++j) {
          std::memmove(to + j * ds[inner] * el, from + j * ss[inner] * el, elsize);
        }
    }
  });
}

StridedWalk StridedWalk::leading(const Tensor& self, const Tensor& out, int dims) {
  StridedWalk walk;
  for (int d = 0; d < dims; ++d) walk.add(self.size(d), self.stride(d), out.stride(d));
  return walk;
}

void StridedWalk::add(int64_t size, int64_t src_stride, int64_t dst_stride) {
  src[shape.rank] = src_stride;
  dst[shape.rank] = dst_stride;
  shape.sizes[shape.rank++] = size;
}

void StridedWalk::copy(const Tensor& self, Tensor& out) const {
  strided_copy(shape, self.data(), src.data(), out.mutable_data(), dst.data(), self.element_size());
}

Status copy_chunks(const KernelContext& ctx, const Tensor& self, int dim,
                   std::span<const int64_t> sizes, std::span<Tensor* const> outs) {
  int64_t offset = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor* out = outs[k];
    if (out == nullptr || out->is_constant())
      return ctx.fail(fmt::format("output {} is not writable", k));
    if (out->dtype() != self.dtype()) return ctx.fail("input and output dtypes differ");
    Shape shape = shape_of(self);
    shape.sizes[dim] = sizes[k];
    ET_RETURN_IF_ERROR(resize_output(ctx, *out, shape));
    if (out->numel() > 0) {
      if (out->data() == nullptr) return ctx.fail(fmt::format("output {} has no memory", k));
      const auto* src = static_cast<const uint8_t*>(self.data()) +
                        offset * self.stride(dim) * static_cast<int64_t>(self.element_size());
      strided_copy(shape, src, self.strides().data(), out->mutable_data(), out->strides().data(),
                   self.element_size());
    }
    offset += sizes[k];
  }
  return Status();
}

Status copy_logical(const KernelContext& ctx, const Tensor& src, Tensor& out) {
  if (src.numel() != out.numel()) {
    return ctx.fail(fmt::format("cannot copy {} elements into {}", src.numel(), out.numel()));
  }
  if (src.numel() == 0) return Status();
  const size_t elsize = src.element_size();
  const bool same_shape = src.dim() == out.dim() &&
                          std::equal(src.sizes().begin(), src.sizes().end(), out.sizes().begin());
  if (same_shape) {
    strided_copy(shape_of(src), src.data(), src.strides().data(), out.mutable_data(),
                 out.strides().data(), elsize);
    return Status();
  }
  if (src.is_contiguous() && out.is_contiguous()) {
    std::memmove(out.mutable_data(), src.data(), src.nbytes());
    return Status();
  }
  // A reshape across dim orders: through a row-major scratch copy.
  ET_ASSIGN_OR_RETURN(void* scratch, ctx.temp(src.nbytes()));
  const Shape s = shape_of(src), o = shape_of(out);
  strided_copy(s, src.data(), src.strides().data(), scratch, row_major_strides(s).data(), elsize);
  strided_copy(o, scratch, row_major_strides(o).data(), out.mutable_data(), out.strides().data(),
               elsize);
  return Status();
}

Result<int> wrap_dim(const KernelContext& ctx, int64_t dim, int rank) {
  const int64_t r = rank == 0 ? 1 : rank;  // a 0-d tensor accepts dim 0 and -1
  if (dim < -r || dim >= r) {
    return ctx.fail(fmt::format("dim {} is out of range for a rank-{} tensor", dim, rank));
  }
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

Result<Shape> resolve_view_shape(const KernelContext& ctx, std::span<const int64_t> sizes,
                                 int64_t numel) {
  if (sizes.size() > kMaxRank) return ctx.fail(fmt::format("rank {} is above 16", sizes.size()));
  Shape s;
  s.rank = static_cast<int>(sizes.size());
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < s.rank; ++d) {
    if (sizes[d] == -1) {
      if (infer >= 0) return ctx.fail("only one dimension can be -1");
      infer = d;
      continue;
    }
    if (sizes[d] < 0) return ctx.fail(fmt::format("size {} is invalid", sizes[d]));
    s.sizes[d] = sizes[d];
    if (__builtin_mul_overflow(known, sizes[d], &known)) return ctx.fail("shape overflows");
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      return ctx.fail(
          fmt::format("shape {} is invalid for {} elements", shape_string(sizes), numel));
    }
    s.sizes[infer] = numel / known;
  } else if (known != numel) {
    return ctx.fail(fmt::format("shape {} is invalid for {} elements", shape_string(sizes), numel));
  }
  return s;
}

}  // namespace et::kernels
