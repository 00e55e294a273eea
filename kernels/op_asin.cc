// aten::asin.out(Tensor self, *, Tensor(a!) out)
#include "kernels/unary_op.h"

ET_UNARY_FLOAT_OP(asin, "aten::asin.out", std::asin(x))
