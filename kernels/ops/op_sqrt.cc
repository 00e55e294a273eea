// aten::sqrt.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(sqrt, "aten::sqrt.out", std::sqrt(x))
