// aten::cos.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(cos, "aten::cos.out", std::cos(x))
