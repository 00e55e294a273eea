// aten::log2.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(log2, "aten::log2.out", std::log2(x))
