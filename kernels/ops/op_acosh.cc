// aten::acosh.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(acosh, "aten::acosh.out", std::acosh(x))
