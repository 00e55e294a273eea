// aten::reciprocal.out(Tensor self, *, Tensor(a!) out)
#include "kernels/unary_op.h"

ET_UNARY_FLOAT_OP(reciprocal, "aten::reciprocal.out", 1 / x)
