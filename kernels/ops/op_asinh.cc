// aten::asinh.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(asinh, "aten::asinh.out", std::asinh(x))
