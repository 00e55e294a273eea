// aten::tanh.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_ARRAY_OP(tanh, "aten::tanh.out", tanh_array, std::tanh(x))
