// The runtime's tensor: dtype, sizes, dim order, and a data pointer it does not own
// together with the number of bytes that back it (its capacity).
//
// Strides are derived from sizes and dim order, never stored independently, so a
// tensor's layout is always one that a dim order describes. Sizes use the format's
// size type (int32); element counts and strides are int64.
//
// Memory invariant: a tensor never claims more bytes than back its data. Either it
// has no memory (data() == nullptr, capacity() == 0) or nbytes() <= capacity().
// resize() refuses a shape beyond the capacity, and set_data()/bind() take the
// capacity with the pointer, so a kernel that writes nbytes() after a successful
// resize stays inside the memory, wherever it came from (plan, constant, client
// segment, copy, view alias).
//
// Ownership: the data belongs to whoever set it (a method's planned memory, the
// program's constant bytes, or a caller's buffer bound as an input).
// Thread-safety: none; a tensor belongs to one method instance.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"

namespace et {

inline constexpr int kMaxRank = 16;

enum class ShapeDynamism : uint8_t {
  kStatic = 0,        // sizes never change
  kDynamicBound = 1,  // sizes may shrink below the planned upper bounds
};

enum class DeviceType : int8_t { kCpu = 0, kCuda = 1 };

class Tensor {
 public:
  Tensor() = default;

  // REQUIRES: sizes.size() == dim_order.size() <= kMaxRank, dim_order a permutation of
  // 0..rank-1, sizes non-negative. The program verifier guarantees this for tensors
  // read from a .pte; other callers check with validate_shape() first.
  // `sizes` are also the upper bounds a dynamic tensor may be resized within. The
  // tensor starts with no memory (set_data() gives it some).
  Tensor(ScalarType dtype, std::span<const int32_t> sizes, std::span<const uint8_t> dim_order,
         ShapeDynamism dynamism);

  // InvalidArgument unless the shape could build a Tensor (rank, permutation, sizes).
  static Status validate_shape(std::span<const int32_t> sizes, std::span<const uint8_t> dim_order);

  ScalarType dtype() const { return dtype_; }
  int dim() const { return rank_; }
  std::span<const int32_t> sizes() const { return {sizes_.data(), rank_}; }
  int32_t size(int d) const { return sizes_[d]; }
  std::span<const uint8_t> dim_order() const { return {dim_order_.data(), rank_}; }
  // Element strides, derived from sizes and dim order.
  std::span<const int64_t> strides() const { return {strides_.data(), rank_}; }
  int64_t stride(int d) const { return strides_[d]; }
  std::span<const int32_t> max_sizes() const { return {max_sizes_.data(), rank_}; }
  ShapeDynamism dynamism() const { return dynamism_; }

  int64_t numel() const { return numel_; }
  size_t element_size() const { return et::element_size(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size(); }
  // Bytes at the upper-bound sizes: what planned memory holds for this tensor.
  size_t capacity_nbytes() const;
  bool is_contiguous() const;  // dim order is 0, 1, ..., rank-1

  // A constant's data belongs to the program and is shared by every method instance;
  // kernels refuse to write it (KernelContext::output()).
  bool is_constant() const { return constant_; }
  void set_constant(bool constant) { constant_ = constant; }

  void* mutable_data() const { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  // Bytes that back data() (0 when there is none).
  size_t capacity() const { return capacity_; }
  // True when every byte of the current shape is backed: data present, or no bytes.
  bool has_memory() const { return data_ != nullptr || numel_ == 0; }

  // Points the tensor at `capacity` bytes at `data` (nullptr: no memory). When the
  // current shape needs more than `capacity`, the tensor is left with no memory
  // instead, so the invariant holds whatever the caller passes.
  void set_data(void* data, size_t capacity);
  // Points the tensor at `capacity` bytes at `data` AND gives it `sizes`, as one step:
  // InvalidArgument (tensor unchanged) when `sizes` break the rules of resize() or
  // need more than `capacity` bytes.
  Status bind(void* data, size_t capacity, std::span<const int64_t> sizes);

  // Changes the sizes, keeping dtype and dim order.
  // Errors: InvalidArgument when the rank differs, a static tensor's sizes change, a
  // dynamic tensor's size exceeds its upper bound (the message gives both shapes), or
  // the new shape needs more bytes than back the tensor (capacity()).
  Status resize(std::span<const int32_t> sizes);
  Status resize(std::span<const int64_t> sizes);

 private:
  void update_strides();
  // The checks of resize(): rank, static sizes, upper bounds; the bytes `sizes` need.
  Result<size_t> check_sizes(std::span<const int64_t> sizes) const;

  ScalarType dtype_ = ScalarType::kFloat;
  uint8_t rank_ = 0;
  ShapeDynamism dynamism_ = ShapeDynamism::kStatic;
  std::array<int32_t, kMaxRank> sizes_{};
  std::array<int32_t, kMaxRank> max_sizes_{};
  std::array<uint8_t, kMaxRank> dim_order_{};
  std::array<int64_t, kMaxRank> strides_{};
  int64_t numel_ = 1;
  bool constant_ = false;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Element strides of a tensor with `sizes` laid out in `dim_order`.
// REQUIRES: same lengths, at most kMaxRank, dim_order a permutation.
void strides_for_dim_order(std::span<const int64_t> sizes, std::span<const uint8_t> dim_order,
                           std::span<int64_t> strides);

// "[2, 3, 4]" for messages.
std::string shape_string(std::span<const int32_t> sizes);
std::string shape_string(std::span<const int64_t> sizes);
std::string dim_order_string(std::span<const uint8_t> dim_order);

}  // namespace et
