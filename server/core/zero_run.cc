#include "server/core/zero_run.h"

#include <cstdint>
#include <vector>

namespace et::server {

Status run_on_zeros(Method& m, const ExecuteLimits& limits) {
  std::vector<std::vector<uint8_t>> buffers(m.num_inputs() + m.num_outputs());
  std::vector<std::vector<int64_t>> shapes(m.num_inputs());
  std::vector<InputValue> inputs;
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    const ValueMeta& meta = m.meta().inputs[i];
    if (meta.kind != ValueKind::kTensor) {
      inputs.push_back(meta.kind == ValueKind::kInt ? InputValue::of_int(meta.traced.to_int())
                       : meta.kind == ValueKind::kDouble
                           ? InputValue::of_double(meta.traced.to_double())
                           : InputValue::of_bool(meta.traced.to_bool()));
      continue;
    }
    buffers[i].assign(meta.tensor->nbytes, 0);
    shapes[i].assign(meta.tensor->sizes.begin(), meta.tensor->sizes.end());
    TensorView view;
    view.data = buffers[i].data();
    view.nbytes = buffers[i].size();
    view.dtype = meta.tensor->dtype;
    view.sizes = shapes[i];
    inputs.push_back(InputValue::of_tensor(view));
  }
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i)) {
      auto& buffer = buffers[m.num_inputs() + i];
      buffer.resize(o.tensor->nbytes + 1);
      (void)m.set_output_buffer(i, buffer.data(), buffer.size());  // else execute says why
    }
  }
  ET_RETURN_IF_ERROR(m.set_inputs(inputs));
  return m.execute(limits);
}

}  // namespace et::server
