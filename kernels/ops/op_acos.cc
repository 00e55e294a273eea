// aten::acos.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(acos, "aten::acos.out", std::acos(x))
