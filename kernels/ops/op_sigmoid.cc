// aten::sigmoid.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_ARRAY_OP(sigmoid, "aten::sigmoid.out", sigmoid_array, 1 / (1 + std::exp(-x)))
