// aten::atanh.out(Tensor self, *, Tensor(a!) out)
#include "kernels/util/unary_op.h"

ET_UNARY_FLOAT_OP(atanh, "aten::atanh.out", std::atanh(x))
