// aten::exp.out(Tensor self, *, Tensor(a!) out)
#include "kernels/unary_op.h"

ET_UNARY_FLOAT_OP(exp, "aten::exp.out", std::exp(x))
