// aten::asin.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(asin, "aten::asin.out", std::asin(x))
