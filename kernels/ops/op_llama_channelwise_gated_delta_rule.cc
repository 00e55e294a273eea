// llama::channelwise_gated_delta_rule.out(Tensor query, Tensor key, Tensor value, Tensor decay,
// Tensor beta,
//     Tensor initial_state, *, Tensor(a!) out, Tensor(b!) final_state_out)
//     -> (Tensor(a!), Tensor(b!))
// The gated delta rule (kernels/util/gated_delta_rule.h).
#include "kernels/util/gated_delta_rule.h"

namespace et::kernels {
namespace {

Status channelwise_gated_delta_rule_out(KernelContext& ctx) { return gated_delta_rule(ctx); }

ET_REGISTER_KERNEL("llama::channelwise_gated_delta_rule.out", channelwise_gated_delta_rule_out);

}  // namespace
}  // namespace et::kernels
