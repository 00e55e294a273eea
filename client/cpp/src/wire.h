// Building requests and reading responses for Method's calls: inputs into protocol
// Values (host memory copied into the arena; shared tensors named by their current
// segment id), output placements (a fresh slot per output per call), results back into
// SharedTensors. A friend of SharedTensor.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "connection.h"

namespace etclient {

using OutputSlots = std::vector<std::pair<Slot, std::shared_ptr<void>>>;

struct Wire {
  // `held` receives the slots the daemon may keep reading (bound inputs). A host tensor
  // is copied into the layout (dim order) the method declares for that input.
  static Status encode_inputs(Arena& arena, const MethodMeta& meta,
                              const std::vector<Input>& inputs,
                              google::protobuf::RepeatedPtrField<pb::Value>& out,
                              std::vector<std::shared_ptr<void>>& held);

  // Copies host tensor `index` of a call into a fresh slot, in the method's layout; or,
  // with `reuse`, into *reuse's slot when it is large enough (and keeps the copy there).
  static Result<SharedTensor> copy_host(Arena& arena, const MethodMeta& meta, size_t index,
                                        const HostTensor& host, SharedTensor* reuse = nullptr);

  // Fresh output slots for every call: results already returned are never rewritten.
  static Result<OutputSlots> place_outputs(
      Arena& arena, const MethodMeta& meta,
      google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements);

  // Placements into tensors the caller gave, one per output (Method::execute with
  // outputs): kInvalidArgument naming the output when one is missing or too small.
  static Status place_into(Arena& arena, const MethodMeta& meta,
                           const std::vector<SharedTensor>& outputs,
                           google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements);
  // Gives each of `outputs` its result's dtype, sizes and dim order (the daemon wrote
  // the bytes into it); a scalar result is written into its tensor as a 0-d tensor.
  static Status decode_into(const google::protobuf::RepeatedPtrField<pb::Value>& values,
                            std::vector<SharedTensor>& outputs);

  // Tensors are views of their slots; an int, float or bool output becomes a 0-d int64,
  // float64 or bool tensor (in its slot); none and other kinds, an empty SharedTensor.
  static Result<std::vector<SharedTensor>> decode_outputs(
      Arena& arena, const google::protobuf::RepeatedPtrField<pb::Value>& values,
      OutputSlots& slots);

  // A copy of an inline tensor the daemon sent (GetAttribute) in a fresh slot;
  // kInternal when the reply carries no tensor or its bytes do not match its sizes.
  static Result<SharedTensor> copy_inline(Arena& arena, const pb::Value& value);

  static void set_dim_order(SharedTensor& tensor, std::vector<uint32_t> order) {
    tensor.dim_order_ = std::move(order);
  }

  // A shared tensor over `slot`, for Client::empty().
  static SharedTensor make_shared_tensor(std::pair<Slot, std::shared_ptr<void>> slot, DType dtype,
                                         std::vector<int64_t> sizes);
};

MethodMeta from_proto(const pb::MethodMeta& meta);

// Ok when what the daemon says it wrote for output `index` (dtype, sizes, dim order,
// offset) lies inside `slot`, the one this client gave it: views are built from these
// numbers, and a peer that is not a correct daemon must not make the client read past
// its slot. Internal naming the mismatch otherwise.
Status check_output_reply(size_t index, const pb::Tensor& t, const Slot& slot);

// Copies a strided tensor of `element_size`-byte elements into row-major `dst`.
void gather_row_major(uint8_t* dst, const uint8_t* src, const std::vector<int64_t>& sizes,
                      const std::vector<int64_t>& strides, size_t element_size);

}  // namespace etclient
