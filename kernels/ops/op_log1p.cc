// aten::log1p.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(log1p, "aten::log1p.out", std::log1p(x))
