// aten::expm1.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(expm1, "aten::expm1.out", std::expm1(x))
