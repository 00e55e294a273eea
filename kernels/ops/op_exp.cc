// aten::exp.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_ARRAY_OP(exp, "aten::exp.out", exp_array, std::exp(x))
