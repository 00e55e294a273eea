// aten::reciprocal.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(reciprocal, "aten::reciprocal.out", 1 / x)
