// aten::atan.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(atan, "aten::atan.out", std::atan(x))
