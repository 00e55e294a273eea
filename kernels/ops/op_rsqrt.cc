// aten::rsqrt.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(rsqrt, "aten::rsqrt.out", 1 / std::sqrt(x))
