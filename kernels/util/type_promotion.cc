#include "kernels/util/type_promotion.h"

namespace et::kernels {
namespace {

int category(ScalarType t) {
  if (t == ScalarType::kBool) return 0;
  if (is_floating(t)) return 2;
  return 1;
}

int int_rank(ScalarType t) {
  switch (t) {
    case ScalarType::kChar:
      return 1;
    case ScalarType::kShort:
      return 2;
    case ScalarType::kInt:
      return 3;
    case ScalarType::kLong:
      return 4;
    default:
      return 0;
  }
}

}  // namespace

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::kBool) return b;
  if (b == ScalarType::kBool) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && fb) {
    if (a == ScalarType::kDouble || b == ScalarType::kDouble) return ScalarType::kDouble;
    return ScalarType::kFloat;  // float32 with a half type, or float16 with bfloat16
  }
  if (fa) return a;
  if (fb) return b;
  // Both integral. uint8 with a signed type: the smallest signed type holding both.
  if (a == ScalarType::kByte || b == ScalarType::kByte) {
    const ScalarType other = a == ScalarType::kByte ? b : a;
    return other == ScalarType::kChar ? ScalarType::kShort : other;
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

ResultType& ResultType::add(const Tensor& t) {
  if (t.dim() > 0) {
    dim_ = has_dim_ ? promote_types(dim_, t.dtype()) : t.dtype();
    has_dim_ = true;
  } else {
    zero_ = has_zero_ ? promote_types(zero_, t.dtype()) : t.dtype();
    has_zero_ = true;
  }
  return *this;
}

ResultType& ResultType::add(const Scalar& s) {
  const ScalarType t = s.kind == ValueKind::kDouble ? ScalarType::kFloat
                       : s.kind == ValueKind::kBool ? ScalarType::kBool
                                                    : ScalarType::kLong;
  scalar_ = has_scalar_ ? promote_types(scalar_, t) : t;
  has_scalar_ = true;
  return *this;
}

ScalarType ResultType::combine(ScalarType higher, ScalarType lower) {
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::kBool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

ScalarType ResultType::get() const {
  // Absent tiers are skipped; a present tier only raises the category of the ones above.
  if (!has_dim_ && !has_zero_) return scalar_;
  if (!has_dim_) return has_scalar_ ? combine(zero_, scalar_) : zero_;
  ScalarType lower = zero_;
  if (!has_zero_) {
    if (!has_scalar_) return dim_;
    lower = scalar_;
  } else if (has_scalar_) {
    lower = combine(zero_, scalar_);
  }
  return combine(dim_, lower);
}

bool can_cast(ScalarType from, ScalarType to) { return category(from) <= category(to); }

}  // namespace et::kernels
