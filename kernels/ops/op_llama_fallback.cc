// llama::fallback.out(Tensor input, *, Tensor(a!) output) -> Tensor(a!)
// A placeholder ExecuTorch's LLM flow leaves where a graph falls back: output takes
// input's shape and a copy of its values (same dtype).
#include "kernels/util/quantize.h"

namespace et::kernels {
namespace {

Status fallback_out(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* input, ctx.input(0));
  ET_ASSIGN_OR_RETURN(Tensor * output, ctx.output(1));
  if (output->dtype() != input->dtype()) {
    return ctx.fail(fmt::format("output is {}, input {}: fallback copies, the dtypes must agree",
                                scalar_type_name(output->dtype()),
                                scalar_type_name(input->dtype())));
  }
  ET_RETURN_IF_ERROR(resize_output(ctx, *output, shape_of(*input)));
  return copy_convert(ctx, *input, *output);
}

ET_REGISTER_KERNEL("llama::fallback.out", fallback_out);

}  // namespace
}  // namespace et::kernels
