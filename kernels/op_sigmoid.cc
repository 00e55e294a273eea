// aten::sigmoid.out(Tensor self, *, Tensor(a!) out)
#include "kernels/unary_op.h"

ET_UNARY_FLOAT_OP(sigmoid, "aten::sigmoid.out", 1 / (1 + std::exp(-x)))
