// aten::sin.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(sin, "aten::sin.out", std::sin(x))
