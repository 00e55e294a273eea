// aten::tan.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(tan, "aten::tan.out", std::tan(x))
