// Kernels: how an operator is implemented, looked up and called.
//
// A kernel is a function `Status fn(KernelContext& ctx)`. It reads its arguments
// through the context, which checks each argument's kind and names the operator and
// argument in every error, and it writes only tensors it obtained through output(),
// which refuses constants. Kernels never throw and never abort.
//
// Registration: ET_REGISTER_KERNEL("aten::add.out", op_add_out) in the op's own file.
// Link kernel libraries whole (CMake: WHOLE_ARCHIVE) so the registrations are kept.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/value.h"

namespace et {

// A number passed where the schema says Scalar: an int, a float or a bool.
struct Scalar {
  ValueKind kind = ValueKind::kInt;  // kInt, kDouble or kBool
  int64_t i = 0;
  double d = 0;
  bool b = false;

  double to_double() const {
    return kind == ValueKind::kDouble ? d : kind == ValueKind::kInt ? static_cast<double>(i) : b;
  }
  // A float is truncated; NaN or a value outside int64 gives INT64_MIN (what x86's
  // conversion instruction, and so PyTorch, produces) without undefined behaviour.
  int64_t to_int() const {
    if (kind == ValueKind::kInt) return i;
    if (kind == ValueKind::kBool) return b;
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
    return static_cast<int64_t>(d);
  }
  bool is_floating() const { return kind == ValueKind::kDouble; }
};

// Scratch memory for one instruction, charged to a limit per instruction (the program
// chooses the sizes). Scratch is given out from a block the arena keeps between
// instructions, grown to the most one instruction has needed up to kMostKept bytes
// (a daemon holds one per method instance of every session, so the bound is small),
// so a kernel that asks for the same scratch every call (attention over a KV cache)
// does not map and fault in fresh pages each time; anything beyond comes from the
// allocator and is freed by reset().
class TempArena {
 public:
  static constexpr size_t kDefaultLimit = size_t{4} << 30;
  static constexpr size_t kMostKept = size_t{4} << 20;
  explicit TempArena(size_t limit = kDefaultLimit) : limit_(limit) {}

  // nullptr when the limit would be passed or memory is short. REQUIRES: alignment is
  // a power of two.
  void* allocate(size_t nbytes, size_t alignment = 64);
  // Ends the instruction: its scratch is no longer in use.
  void reset();
  size_t limit() const { return limit_; }
  // The bytes kept between instructions.
  size_t kept() const { return kept_size_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> kept_;  // kept_size_ bytes, 64-byte aligned
  size_t kept_size_ = 0;
  size_t kept_used_ = 0;  // this instruction's, from kept_
  size_t wanted_ = 0;     // this instruction's scratch in all, rounded as allocated
  std::vector<std::unique_ptr<void, Free>> blocks_;  // this instruction's beyond kept_
  size_t limit_;
  size_t used_ = 0;
};

class KernelContext {
 public:
  // `op` names the operator in messages; `args` are the instruction's arguments.
  // `rebound`, when given, collects every tensor view_output() hands out (its memory
  // changes until the method undoes it).
  KernelContext(std::string_view op, std::span<Value* const> args, TempArena* temp,
                std::vector<Tensor*>* rebound = nullptr)
      : op_(op), args_(args), temp_(temp), rebound_(rebound) {}

  std::string_view op() const { return op_; }
  size_t num_args() const { return args_.size(); }
  Value& arg(size_t i) const { return *args_[i]; }

  // Each accessor fails with InvalidArgument naming op, argument index and the kind
  // found, when the argument is missing or of another kind.
  Result<const Tensor*> input(size_t i) const;
  Result<const Tensor*> optional_input(size_t i) const;  // nullptr for None
  // A tensor the kernel writes. Refuses program constants.
  Result<Tensor*> output(size_t i) const;
  // A tensor the kernel makes a view of another: it sets the data pointer and the
  // capacity (the source's: a view never reaches past its source's memory) and
  // carries over the source's constness. Refuses nothing but a non-tensor.
  Result<Tensor*> view_output(size_t i) const;
  // The value a scalar op writes its result into: None, an int, a float or a bool.
  // Refuses a tensor or list, so no op turns one of those into a number.
  Result<Value*> scalar_output(size_t i) const;
  Result<int64_t> int_arg(size_t i) const;
  Result<bool> bool_arg(size_t i) const;
  Result<double> double_arg(size_t i) const;  // a float, or an int read as a float
  Result<Scalar> scalar_arg(size_t i) const;
  Result<std::optional<Scalar>> optional_scalar_arg(size_t i) const;
  Result<std::optional<int64_t>> optional_int_arg(size_t i) const;
  Result<std::optional<double>> optional_double_arg(size_t i) const;
  Result<std::span<const int64_t>> int_list_arg(size_t i) const;
  Result<std::optional<std::span<const int64_t>>> optional_int_list_arg(size_t i) const;
  Result<std::span<const bool>> bool_list_arg(size_t i) const;
  // Every item that is not None has memory for its shape (Tensor::has_memory()).
  Result<std::span<Tensor* const>> tensor_list_arg(size_t i) const;
  Result<std::optional<std::string_view>> optional_string_arg(size_t i) const;

  // Scratch memory valid until this instruction finishes; ResourceExhausted on failure
  // or past the arena's limit (the message gives both).
  Result<void*> temp(size_t nbytes) const;
  // Scratch for the product of `counts` times `element_size` bytes, computed with
  // overflow checks (a negative count or an overflow is ResourceExhausted).
  Result<void*> temp_product(std::initializer_list<int64_t> counts, size_t element_size) const;

  // InvalidArgument "<op>: <message>", for the kernel's own checks.
  Status fail(std::string message) const;
  // NotSupported "<op>: <message>".
  Status unsupported(std::string message) const;

 private:
  Status wrong_kind(size_t i, std::string_view want) const;
  Status check_index(size_t i) const;

  std::string_view op_;
  std::span<Value* const> args_;
  TempArena* temp_;
  std::vector<Tensor*>* rebound_;
};

using KernelFn = Status (*)(KernelContext& ctx);

// Operators by "name.overload". Thread-safe.
class KernelRegistry {
 public:
  // The process-wide registry that ET_REGISTER_KERNEL fills.
  static KernelRegistry& global();

  // AlreadyExists-style InvalidArgument when `name` is registered already.
  Status add(std::string name, KernelFn fn);
  KernelFn find(std::string_view name) const;  // nullptr when missing
  std::vector<std::string> names() const;      // sorted
  size_t size() const;

 private:
  mutable Mutex mu_;
  std::map<std::string, KernelFn, std::less<>> kernels_ ET_GUARDED_BY(mu_);
};

// Registers at static initialisation; a duplicate name is a build bug and aborts
// start-up with a message naming it.
struct KernelRegistration {
  KernelRegistration(const char* name, KernelFn fn);
};

}  // namespace et

#define ET_REGISTER_KERNEL(name, fn)                                                               \
  static const ::et::KernelRegistration ET_STATUS_CONCAT_(et_kernel_registration_, __LINE__)(name, \
                                                                                             fn)
