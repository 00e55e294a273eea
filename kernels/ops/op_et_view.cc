// executorch_prim::et_view.default(Tensor self, SymInt[] size) -> Tensor
// A true view: the output shares self's memory (the exporter emits it where a view
// cannot be planned statically). Only valid for a contiguous self.
#include <fmt/format.h>

#include "kernels/util/copy_util.h"

namespace et::kernels {
namespace {

Status et_view(KernelContext& ctx) {
  ET_ASSIGN_OR_RETURN(const Tensor* self, ctx.input(0));
  ET_ASSIGN_OR_RETURN(auto sizes, ctx.int_list_arg(1));
  ET_ASSIGN_OR_RETURN(Tensor * out, ctx.view_output(2));
  if (self->dtype() != out->dtype()) return ctx.fail("input and output dtypes differ");
  if (!self->is_contiguous() || !out->is_contiguous()) {
    return ctx.unsupported("a view of a tensor that is not contiguous");
  }
  ET_ASSIGN_OR_RETURN(Shape shape, resolve_view_shape(ctx, sizes, self->numel()));
  // The view is backed by self's memory and no more: a later kernel resizing it is held
  // to self's bytes, not to the view's own upper bounds. The method undoes the alias
  // before its next execute.
  if (Status s = out->bind(self->mutable_data(), self->capacity(), shape.view()); !s.ok()) {
    return ctx.fail(fmt::format("output: {}", s.message()));
  }
  out->set_constant(self->is_constant());
  return Status();
}

ET_REGISTER_KERNEL("executorch_prim::et_view.default", et_view);

}  // namespace
}  // namespace et::kernels
