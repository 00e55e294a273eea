// aten::cosh.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(cosh, "aten::cosh.out", std::cosh(x))
