#include "runtime/core/input.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

namespace et {
namespace {

std::string layout_name(std::span<const uint8_t> dim_order) {
  std::string s = dim_order_string(dim_order);
  bool identity = true;
  for (size_t d = 0; d < dim_order.size(); ++d) identity &= dim_order[d] == d;
  if (identity) return s + " (contiguous)";
  static constexpr uint8_t kChannelsLast[] = {0, 2, 3, 1};
  if (dim_order.size() == 4 && std::equal(dim_order.begin(), dim_order.end(), kChannelsLast)) {
    return s + " (channels-last)";
  }
  return s;
}

// True when `strides` equal the strides of `dim_order` on every dim of size > 1.
bool strides_match(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                   std::span<const uint8_t> dim_order) {
  std::array<int64_t, kMaxRank> want{};
  strides_for_dim_order(sizes, dim_order, {want.data(), sizes.size()});
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && strides[d] != want[d]) return false;
  }
  return true;
}

}  // namespace

bool dim_order_from_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides,
                            std::span<uint8_t> dim_order) {
  const size_t rank = sizes.size();
  std::array<uint8_t, kMaxRank> order{};
  std::iota(order.begin(), order.begin() + rank, 0);
  // Outermost first: larger stride first; size-one dims and ties keep index order.
  std::stable_sort(order.begin(), order.begin() + rank, [&](uint8_t a, uint8_t b) {
    const int64_t sa = sizes[a] == 1 ? std::numeric_limits<int64_t>::max() : strides[a];
    const int64_t sb = sizes[b] == 1 ? std::numeric_limits<int64_t>::max() : strides[b];
    return sa > sb;
  });
  if (!strides_match(sizes, strides, {order.data(), rank})) return false;
  std::copy(order.begin(), order.begin() + rank, dim_order.begin());
  return true;
}

Status check_tensor_input(size_t index, const Tensor& declared, const TensorView& view) {
  const size_t rank = view.sizes.size();
  if (rank > kMaxRank) {
    return invalid_argument(fmt::format("input {} has rank {}; the runtime supports at most {}",
                                        index, rank, kMaxRank));
  }
  if (!view.strides.empty() && view.strides.size() != rank) {
    return invalid_argument(
        fmt::format("input {} states {} strides for rank {}", index, view.strides.size(), rank));
  }
  for (size_t d = 0; d < rank; ++d) {
    if (view.sizes[d] < 0 || view.sizes[d] > std::numeric_limits<int32_t>::max()) {
      return invalid_argument(fmt::format(
          "input {} has size {} in dim {}, which does not fit the runtime's 32-bit size type",
          index, view.sizes[d], d));
    }
  }
  if (view.dtype != declared.dtype()) {
    return invalid_argument(
        fmt::format("input {} is {} but the method expects {}: convert it to {}", index,
                    scalar_type_name(view.dtype), scalar_type_name(declared.dtype()),
                    scalar_type_name(declared.dtype())));
  }
  if (view.device != DeviceType::kCpu) {
    return not_supported(fmt::format(
        "input {} is in device memory (device type {}), which this method cannot read: pass "
        "host memory",
        index, static_cast<int>(view.device)));
  }
  if (static_cast<int>(rank) != declared.dim()) {
    return invalid_argument(fmt::format(
        "input {} has shape {} (rank {}); the method expects rank "
        "{}, shape {}",
        index, shape_string(view.sizes), rank, declared.dim(), shape_string(declared.max_sizes())));
  }
  for (size_t d = 0; d < rank; ++d) {
    const int32_t bound = declared.max_sizes()[d];
    if (declared.dynamism() == ShapeDynamism::kStatic ? view.sizes[d] != bound
                                                      : view.sizes[d] > bound) {
      return invalid_argument(fmt::format(
          "input {} has shape {}; the method expects {}{}", index, shape_string(view.sizes),
          declared.dynamism() == ShapeDynamism::kStatic ? "" : "at most ",
          shape_string(declared.max_sizes())));
    }
  }
  if (!view.strides.empty() && !strides_match(view.sizes, view.strides, declared.dim_order())) {
    std::array<uint8_t, kMaxRank> found{};
    if (dim_order_from_strides(view.sizes, view.strides, {found.data(), rank})) {
      return invalid_argument(fmt::format(
          "input {} has layout {} but the method expects {}: convert it to that layout before "
          "passing it (the runtime never reads the wrong order)",
          index, layout_name({found.data(), rank}), layout_name(declared.dim_order())));
    }
    return invalid_argument(fmt::format(
        "input {} has strides {} for shape {}, a layout no dim order describes (a transposed "
        "or strided view): make it contiguous in the method's layout {} first",
        index, shape_string(view.strides), shape_string(view.sizes),
        layout_name(declared.dim_order())));
  }
  uint64_t nbytes = element_size(view.dtype);
  for (size_t d = 0; d < rank; ++d) {
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(view.sizes[d]), &nbytes)) {
      return invalid_argument(
          fmt::format("input {} of shape {} has more bytes than memory can "
                      "address",
                      index, shape_string(view.sizes)));
    }
  }
  if (nbytes > 0 && view.data == nullptr) {
    return invalid_argument(fmt::format("input {} is a tensor with no memory", index));
  }
  if (nbytes > view.nbytes) {
    return invalid_argument(
        fmt::format("input {} of shape {} needs {} bytes but its memory holds {}", index,
                    shape_string(view.sizes), nbytes, view.nbytes));
  }
  return Status();
}

}  // namespace et
