#include "runtime/core/kernel.h"

#include <fmt/format.h>
#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace et {

void TempArena::Free::operator()(void* p) const { std::free(p); }

void* TempArena::allocate(size_t nbytes, size_t alignment) {
  if (nbytes > limit_ - std::min(used_, limit_)) return nullptr;
  const size_t rounded = (nbytes + alignment - 1) / alignment * alignment;
  const size_t size = rounded == 0 ? alignment : rounded;
  // From the kept block when it has room (it is 64-byte aligned: so is any offset
  // rounded to a power of two up to 64).
  const size_t start = (kept_used_ + alignment - 1) / alignment * alignment;
  if (alignment <= 64 && start <= kept_size_ && size <= kept_size_ - start) {
    kept_used_ = start + size;
    used_ += nbytes;
    wanted_ += size;
    uint8_t* p = static_cast<uint8_t*>(kept_.get()) + start;
    ASAN_UNPOISON_MEMORY_REGION(p, nbytes);
    return p;
  }
  blocks_.reserve(blocks_.size() + 1);  // before p exists: nothing leaks if it throws
  void* p = std::aligned_alloc(alignment, size);
  if (p == nullptr) return nullptr;
  blocks_.emplace_back(p);
  used_ += nbytes;
  wanted_ += size + alignment;  // room for the alignment from the kept block next time
  return p;
}

void TempArena::reset() {
  // An instruction that needed more than the kept block: keep one as large as its
  // scratch in all (up to kMostKept), for the next call.
  if (!blocks_.empty() && wanted_ > kept_size_ && wanted_ <= kMostKept) {
    const size_t size = (wanted_ + 63) / 64 * 64;
    kept_.reset();  // before the new one: one block at a time
    kept_size_ = 0;
    if (void* p = std::aligned_alloc(64, size)) {
      kept_.reset(p);
      kept_size_ = size;
    }
  }
  blocks_.clear();
  // Under ASan the kept block's free part is poisoned, so a kernel that reads scratch
  // after its instruction ends is still reported (a no-op elsewhere).
  ASAN_POISON_MEMORY_REGION(kept_.get(), kept_size_);
  kept_used_ = 0;
  wanted_ = 0;
  used_ = 0;
}

Status KernelContext::check_index(size_t i) const {
  if (i >= args_.size()) {
    return invalid_argument(
        fmt::format("{}: argument {} is missing (the call has {})", op_, i, args_.size()));
  }
  return Status();
}

Status KernelContext::wrong_kind(size_t i, std::string_view want) const {
  return invalid_argument(fmt::format("{}: argument {} is {} where {} is required", op_, i,
                                      value_kind_name(args_[i]->kind()), want));
}

Result<const Tensor*> KernelContext::input(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (!args_[i]->is_tensor()) return wrong_kind(i, "a tensor");
  const Tensor* t = &args_[i]->to_tensor();
  if (!t->has_memory()) {
    return invalid_argument(
        fmt::format("{}: argument {} is a tensor with no memory (an unset "
                    "input, or freed)",
                    op_, i));
  }
  return t;
}

Result<const Tensor*> KernelContext::optional_input(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_none()) return static_cast<const Tensor*>(nullptr);
  return input(i);
}

Result<Tensor*> KernelContext::output(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (!args_[i]->is_tensor()) return wrong_kind(i, "an output tensor");
  Tensor* t = &args_[i]->to_tensor();
  if (t->is_constant()) {
    return invalid_argument(
        fmt::format("{}: argument {} is a program constant, which no kernel may write", op_, i));
  }
  if (t->data() == nullptr && t->capacity_nbytes() > 0) {
    return invalid_argument(fmt::format(
        "{}: output argument {} has no memory (an unplanned output with no buffer set)", op_, i));
  }
  return t;
}

Result<Tensor*> KernelContext::view_output(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (!args_[i]->is_tensor()) return wrong_kind(i, "an output tensor");
  Tensor* t = &args_[i]->to_tensor();
  if (rebound_ != nullptr) rebound_->push_back(t);
  return t;
}

Result<Value*> KernelContext::scalar_output(size_t i) const {
  if (i >= args_.size())
    return invalid_argument(fmt::format("{}: the result slot is missing", op_));
  switch (args_[i]->kind()) {
    case ValueKind::kNone:
    case ValueKind::kInt:
    case ValueKind::kDouble:
    case ValueKind::kBool:
      return args_[i];
    default:
      return wrong_kind(i, "a scalar result slot");
  }
}

Result<int64_t> KernelContext::int_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (!args_[i]->is_int()) return wrong_kind(i, "an int");
  return args_[i]->to_int();
}

Result<bool> KernelContext::bool_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (!args_[i]->is_bool()) return wrong_kind(i, "a bool");
  return args_[i]->to_bool();
}

Result<double> KernelContext::double_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_double()) return args_[i]->to_double();
  if (args_[i]->is_int()) return static_cast<double>(args_[i]->to_int());
  return wrong_kind(i, "a float");
}

Result<Scalar> KernelContext::scalar_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  const Value& v = *args_[i];
  Scalar s;
  s.kind = v.kind();
  switch (v.kind()) {
    case ValueKind::kInt:
      s.i = v.to_int();
      return s;
    case ValueKind::kDouble:
      s.d = v.to_double();
      return s;
    case ValueKind::kBool:
      s.b = v.to_bool();
      return s;
    default:
      return wrong_kind(i, "a scalar (int, float or bool)");
  }
}

Result<std::optional<Scalar>> KernelContext::optional_scalar_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_none()) return std::optional<Scalar>();
  ET_ASSIGN_OR_RETURN(Scalar s, scalar_arg(i));
  return std::optional<Scalar>(s);
}

Result<std::optional<int64_t>> KernelContext::optional_int_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_none()) return std::optional<int64_t>();
  ET_ASSIGN_OR_RETURN(int64_t v, int_arg(i));
  return std::optional<int64_t>(v);
}

Result<std::optional<double>> KernelContext::optional_double_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_none()) return std::optional<double>();
  ET_ASSIGN_OR_RETURN(double v, double_arg(i));
  return std::optional<double>(v);
}

Result<std::span<const int64_t>> KernelContext::int_list_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->kind() != ValueKind::kIntList) return wrong_kind(i, "an int list");
  return args_[i]->int_list();
}

Result<std::optional<std::span<const int64_t>>> KernelContext::optional_int_list_arg(
    size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_none()) return std::optional<std::span<const int64_t>>();
  ET_ASSIGN_OR_RETURN(auto list, int_list_arg(i));
  return std::optional<std::span<const int64_t>>(list);
}

Result<std::span<const bool>> KernelContext::bool_list_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->kind() != ValueKind::kBoolList) return wrong_kind(i, "a bool list");
  return args_[i]->bool_list();
}

Result<std::span<Tensor* const>> KernelContext::tensor_list_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  const ValueKind k = args_[i]->kind();
  if (k != ValueKind::kTensorList && k != ValueKind::kOptionalTensorList) {
    return wrong_kind(i, "a tensor list");
  }
  std::span<Tensor* const> items = args_[i]->tensor_list();
  for (size_t item = 0; item < items.size(); ++item) {
    if (items[item] != nullptr && !items[item]->has_memory()) {
      return invalid_argument(
          fmt::format("{}: item {} of argument {} is a tensor with no memory (an unset input, "
                      "or freed)",
                      op_, item, i));
    }
  }
  return items;
}

Result<std::optional<std::string_view>> KernelContext::optional_string_arg(size_t i) const {
  ET_RETURN_IF_ERROR(check_index(i));
  if (args_[i]->is_none()) return std::optional<std::string_view>();
  if (args_[i]->kind() != ValueKind::kString) return wrong_kind(i, "a string");
  return std::optional<std::string_view>(args_[i]->to_string());
}

Result<void*> KernelContext::temp(size_t nbytes) const {
  void* p = temp_ != nullptr ? temp_->allocate(nbytes) : nullptr;
  if (p == nullptr) {
    return resource_exhausted(fmt::format(
        "{}: cannot allocate {} bytes of scratch memory (the limit per instruction is {})", op_,
        nbytes, temp_ != nullptr ? temp_->limit() : 0));
  }
  return p;
}

Result<void*> KernelContext::temp_product(std::initializer_list<int64_t> counts,
                                          size_t element_size) const {
  uint64_t bytes = element_size;
  for (int64_t c : counts) {
    if (c < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(c), &bytes)) {
      return resource_exhausted(
          fmt::format("{}: the scratch memory it needs overflows 64 bits", op_));
    }
  }
  return temp(static_cast<size_t>(bytes));
}

Status KernelContext::fail(std::string message) const {
  return invalid_argument(fmt::format("{}: {}", op_, message));
}

Status KernelContext::unsupported(std::string message) const {
  return not_supported(fmt::format("{}: {}", op_, message));
}

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry* registry = new KernelRegistry();  // never destroyed: used at exit
  return *registry;
}

Status KernelRegistry::add(std::string name, KernelFn fn) {
  MutexLock lock(mu_);
  if (!kernels_.emplace(name, fn).second) {
    return invalid_argument(fmt::format("kernel '{}' is registered twice", name));
  }
  return Status();
}

KernelFn KernelRegistry::find(std::string_view name) const {
  MutexLock lock(mu_);
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : it->second;
}

std::vector<std::string> KernelRegistry::names() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, fn] : kernels_) out.push_back(name);
  return out;
}

size_t KernelRegistry::size() const {
  MutexLock lock(mu_);
  return kernels_.size();
}

KernelRegistration::KernelRegistration(const char* name, KernelFn fn) {
  if (Status s = KernelRegistry::global().add(name, fn); !s.ok()) {
    std::fprintf(stderr, "et: %s\n", s.message().c_str());
    std::abort();
  }
}

}  // namespace et
