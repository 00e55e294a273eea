// aten::sinh.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(sinh, "aten::sinh.out", std::sinh(x))
