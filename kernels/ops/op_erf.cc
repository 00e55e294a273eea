// aten::erf.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(erf, "aten::erf.out", std::erf(x))
