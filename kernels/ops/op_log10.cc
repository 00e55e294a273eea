// aten::log10.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(log10, "aten::log10.out", std::log10(x))
