#include "runtime/core/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

namespace et {

Tensor::Tensor(ScalarType dtype, std::span<const int32_t> sizes, std::span<const uint8_t> dim_order,
               ShapeDynamism dynamism)
    : dtype_(dtype), rank_(static_cast<uint8_t>(sizes.size())), dynamism_(dynamism) {
  for (int d = 0; d < rank_; ++d) {
    sizes_[d] = max_sizes_[d] = sizes[d];
    dim_order_[d] = dim_order[d];
  }
  update_strides();
}

Status Tensor::validate_shape(std::span<const int32_t> sizes, std::span<const uint8_t> dim_order) {
  if (sizes.size() > kMaxRank) {
    return invalid_argument(
        fmt::format("rank {} is above the maximum of {}", sizes.size(), kMaxRank));
  }
  if (dim_order.size() != sizes.size()) {
    return invalid_argument(fmt::format("dim order {} has {} entries for a rank-{} tensor",
                                        dim_order_string(dim_order), dim_order.size(),
                                        sizes.size()));
  }
  std::array<bool, kMaxRank> seen{};
  for (uint8_t d : dim_order) {
    if (d >= sizes.size() || seen[d]) {
      return invalid_argument(fmt::format("dim order {} is not a permutation of 0..{}",
                                          dim_order_string(dim_order), sizes.size() - 1));
    }
    seen[d] = true;
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) {
      return invalid_argument(fmt::format("size {} of dim {} is negative", sizes[d], d));
    }
  }
  return Status();
}

void strides_for_dim_order(std::span<const int64_t> sizes, std::span<const uint8_t> dim_order,
                           std::span<int64_t> strides) {
  int64_t stride = 1;
  for (size_t k = dim_order.size(); k-- > 0;) {
    const uint8_t d = dim_order[k];
    strides[d] = stride;
    stride *= sizes[d] > 0 ? sizes[d] : 1;
  }
}

void Tensor::update_strides() {
  std::array<int64_t, kMaxRank> sizes64{};
  numel_ = 1;
  for (int d = 0; d < rank_; ++d) {
    sizes64[d] = sizes_[d];
    numel_ *= sizes_[d];
  }
  strides_for_dim_order({sizes64.data(), rank_}, dim_order(), {strides_.data(), rank_});
}

size_t Tensor::capacity_nbytes() const {
  size_t n = element_size();
  for (int d = 0; d < rank_; ++d) n *= static_cast<size_t>(max_sizes_[d]);
  return n;
}

bool Tensor::is_contiguous() const {
  for (int d = 0; d < rank_; ++d) {
    if (dim_order_[d] != d) return false;
  }
  return true;
}

void Tensor::set_data(void* data, size_t capacity) {
  if (data == nullptr || nbytes() > capacity) {
    data_ = nullptr;
    capacity_ = 0;
    return;
  }
  data_ = data;
  capacity_ = capacity;
}

Result<size_t> Tensor::check_sizes(std::span<const int64_t> sizes) const {
  if (sizes.size() != rank_) {
    return invalid_argument(fmt::format("cannot resize a rank-{} tensor to rank {} ({})", rank_,
                                        sizes.size(), shape_string(sizes)));
  }
  size_t nbytes = element_size();
  for (int d = 0; d < rank_; ++d) {
    if (sizes[d] != sizes_[d]) {
      if (dynamism_ == ShapeDynamism::kStatic) {
        return invalid_argument(fmt::format("shape {} differs from the static shape {}",
                                            shape_string(sizes), shape_string(this->sizes())));
      }
      if (sizes[d] < 0 || sizes[d] > max_sizes_[d]) {
        return invalid_argument(fmt::format("shape {} exceeds the upper bounds {}",
                                            shape_string(sizes), shape_string(max_sizes())));
      }
    }
    // Within the upper bounds, whose byte count the verifier proved fits in int64.
    nbytes *= static_cast<size_t>(sizes[d]);
  }
  return nbytes;
}

Status Tensor::bind(void* data, size_t capacity, std::span<const int64_t> sizes) {
  ET_ASSIGN_OR_RETURN(size_t need, check_sizes(sizes));
  if (need > 0 && (data == nullptr || need > capacity)) {
    return invalid_argument(fmt::format("shape {} needs {} bytes, but {} back it",
                                        shape_string(sizes), need, data ? capacity : 0));
  }
  for (int d = 0; d < rank_; ++d) sizes_[d] = static_cast<int32_t>(sizes[d]);
  update_strides();
  data_ = data;
  capacity_ = data ? capacity : 0;
  return Status();
}

Status Tensor::resize(std::span<const int64_t> sizes) {
  ET_ASSIGN_OR_RETURN(size_t need, check_sizes(sizes));
  if (need > capacity_) {
    return invalid_argument(fmt::format("shape {} needs {} bytes, but only {} back this tensor{}",
                                        shape_string(sizes), need, capacity_,
                                        data_ ? "" : " (it has no memory)"));
  }
  for (int d = 0; d < rank_; ++d) sizes_[d] = static_cast<int32_t>(sizes[d]);
  update_strides();
  return Status();
}

Status Tensor::resize(std::span<const int32_t> sizes) {
  std::array<int64_t, kMaxRank> wide{};
  if (sizes.size() > kMaxRank) {
    return invalid_argument(
        fmt::format("rank {} is above the maximum of {}", sizes.size(), kMaxRank));
  }
  for (size_t d = 0; d < sizes.size(); ++d) wide[d] = sizes[d];
  return resize(std::span<const int64_t>(wide.data(), sizes.size()));
}

std::string shape_string(std::span<const int32_t> sizes) {
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}
std::string shape_string(std::span<const int64_t> sizes) {
  return fmt::format("[{}]", fmt::join(sizes, ", "));
}
std::string dim_order_string(std::span<const uint8_t> dim_order) {
  return fmt::format("({})", fmt::join(dim_order, ", "));
}

}  // namespace et
