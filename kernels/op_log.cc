// aten::log.out(Tensor self, *, Tensor(a!) out)
#include "kernels/unary_op.h"

ET_UNARY_FLOAT_OP(log, "aten::log.out", std::log(x))
