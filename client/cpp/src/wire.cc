#include "wire.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace etclient {
namespace {

constexpr size_t kMaxRank = 16;           // the daemon's runtime (runtime/core/tensor.h)
constexpr int64_t kMaxSize = 0x7fffffff;  // sizes are int32 there

pb::DataType to_proto(DType t) { return static_cast<pb::DataType>(static_cast<int>(t) + 1); }
DType from_proto(pb::DataType t) {
  return static_cast<DType>(std::max(0, static_cast<int>(t) - 1));
}

Status invalid_input(size_t index, const std::string& problem) {
  return Status(StatusCode::kInvalidArgument, "input " + std::to_string(index) + ": " + problem);
}

// The element count of a host tensor, or why it is not a tensor one can read.
Result<size_t> checked_numel(size_t index, const HostTensor& h) {
  if (!h.strides.empty() && h.strides.size() != h.sizes.size()) {
    return invalid_input(index, "has " + std::to_string(h.sizes.size()) + " sizes but " +
                                    std::to_string(h.strides.size()) +
                                    " strides; give one stride per dimension or none");
  }
  if (h.sizes.size() > kMaxRank) {
    return invalid_input(index, "has " + std::to_string(h.sizes.size()) +
                                    " dimensions; et-serverd tensors have at most " +
                                    std::to_string(kMaxRank));
  }
  size_t numel = 1;
  for (size_t d = 0; d < h.sizes.size(); ++d) {
    const int64_t s = h.sizes[d];
    if (s < 0) return invalid_input(index, "has a negative size " + std::to_string(s));
    if (s > kMaxSize) {
      return invalid_input(index, "dimension " + std::to_string(d) + " is " + std::to_string(s) +
                                      ", more than a tensor dimension can hold (2^31-1)");
    }
    if (s > 0 && numel > (size_t{1} << 48) / static_cast<size_t>(s)) {
      return invalid_input(index, "has more elements than any tensor can (2^48)");
    }
    numel *= static_cast<size_t>(s);
  }
  if (numel > 0 && h.data == nullptr) return invalid_input(index, "data is null");
  return numel;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * std::max<int64_t>(1, sizes[d]);
  return strides;
}

// The dim order input `index` is declared with, when it is not row-major and has
// `rank` dims; else empty.
std::vector<uint32_t> declared_order(const MethodMeta& meta, size_t index, size_t rank) {
  if (index >= meta.inputs.size() || !meta.inputs[index].tensor) return {};
  const std::vector<uint32_t>& order = meta.inputs[index].tensor->dim_order;
  if (order.size() != rank) return {};
  for (size_t d = 0; d < rank; ++d) {
    if (order[d] != d) return order;
  }
  return {};
}

// A 0-d tensor in a fresh slot holding one scalar output.
template <typename T>
Result<SharedTensor> scalar_tensor(Arena& arena, DType dtype, T value) {
  auto slot = arena.allocate(sizeof(T));
  if (!slot.ok()) return slot.status();
  std::memcpy(slot->first.data, &value, sizeof(T));
  return Wire::make_shared_tensor(std::move(slot).value(), dtype, {});
}

}  // namespace

// The bytes a tensor in a reply describes, once its dtype, rank, dim order and sizes are
// checked (kInternal naming `what` and the problem otherwise).
Result<uint64_t> checked_reply_bytes(const std::string& what, const pb::Tensor& t) {
  auto bad = [&](const std::string& problem) {
    return Status(StatusCode::kInternal, what + ": the daemon's reply " + problem);
  };
  if (t.dtype() <= pb::DATA_TYPE_UNSPECIFIED || t.dtype() > pb::BFLOAT16) {
    return bad("names an unknown dtype");
  }
  if (t.sizes_size() > static_cast<int>(kMaxRank)) return bad("has a rank above 16");
  if (t.dim_order_size() != 0 && t.dim_order_size() != t.sizes_size()) {
    return bad("has a dim order that does not match its sizes");
  }
  std::vector<bool> seen(static_cast<size_t>(t.dim_order_size()), false);
  for (uint32_t d : t.dim_order()) {
    if (d >= seen.size() || seen[d]) return bad("has a dim order that is not a permutation");
    seen[d] = true;
  }
  uint64_t nbytes = element_size(from_proto(t.dtype()));
  for (int64_t size : t.sizes()) {
    if (size < 0 || __builtin_mul_overflow(nbytes, static_cast<uint64_t>(size), &nbytes)) {
      return bad("has an impossible size");
    }
  }
  return nbytes;
}

Status check_output_reply(size_t index, const pb::Tensor& t, const Slot& slot) {
  auto bad = [&](const std::string& problem) {
    return Status(StatusCode::kInternal,
                  "output " + std::to_string(index) + ": the daemon's reply " + problem);
  };
  Result<uint64_t> checked = checked_reply_bytes("output " + std::to_string(index), t);
  if (!checked.ok()) return checked.status();
  const uint64_t nbytes = *checked;
  if (nbytes > slot.size || t.segment().offset() != slot.offset ||
      t.segment().length() > slot.size) {
    return bad("describes " + std::to_string(nbytes) + " bytes at offset " +
               std::to_string(t.segment().offset()) + ", outside the " + std::to_string(slot.size) +
               "-byte slot at offset " + std::to_string(slot.offset) + " it was given");
  }
  return Status();
}

void gather_row_major(uint8_t* dst, const uint8_t* src, const std::vector<int64_t>& sizes,
                      const std::vector<int64_t>& strides, size_t element_size) {
  const size_t rank = sizes.size();
  if (rank == 0) {
    std::memcpy(dst, src, element_size);
    return;
  }
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  // The innermost dimension is copied in a loop; outer indices count like an odometer.
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = sizes[rank - 1];
  const int64_t inner_step = strides[rank - 1] * static_cast<int64_t>(element_size);
  while (true) {
    int64_t offset = 0;
    for (size_t d = 0; d + 1 < rank; ++d) offset += index[d] * strides[d];
    const uint8_t* p = src + offset * static_cast<int64_t>(element_size);
    if (inner_step == static_cast<int64_t>(element_size)) {
      std::memcpy(dst, p, static_cast<size_t>(inner) * element_size);
      dst += static_cast<size_t>(inner) * element_size;
    } else {
      for (int64_t i = 0; i < inner; ++i, dst += element_size, p += inner_step) {
        std::memcpy(dst, p, element_size);
      }
    }
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

Status Wire::encode_inputs(Arena& arena, const MethodMeta& meta, const std::vector<Input>& inputs,
                           google::protobuf::RepeatedPtrField<pb::Value>& out,
                           std::vector<std::shared_ptr<void>>& held) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    pb::Value* v = out.Add();
    if (const auto* x = std::get_if<int64_t>(&inputs[i])) {
      v->set_int_value(*x);
      continue;
    }
    if (const auto* d = std::get_if<double>(&inputs[i])) {
      v->set_double_value(*d);
      continue;
    }
    if (const auto* b = std::get_if<bool>(&inputs[i])) {
      v->set_bool_value(*b);
      continue;
    }
    SharedTensor shared;
    if (const auto* h = std::get_if<HostTensor>(&inputs[i])) {
      auto copied = copy_host(arena, meta, i, *h);
      if (!copied.ok()) return copied.status();
      shared = std::move(copied).value();
    } else {
      shared = std::get<SharedTensor>(inputs[i]);
      if (shared.data_ == nullptr)
        return invalid_input(i, "is an empty SharedTensor (make one with empty())");
    }
    held.push_back(shared.slot_);  // the daemon may keep pointing at it
    pb::Tensor* t = v->mutable_tensor();
    t->set_dtype(to_proto(shared.dtype_));
    for (int64_t s : shared.sizes_) t->add_sizes(s);
    for (uint32_t axis : shared.dim_order_) t->add_dim_order(axis);
    t->mutable_segment()->set_segment_id(arena.wire_id(shared.segment_));
    t->mutable_segment()->set_offset(shared.offset_);
    t->mutable_segment()->set_length(shared.nbytes());
  }
  return Status();
}

Result<SharedTensor> Wire::copy_host(Arena& arena, const MethodMeta& meta, size_t i,
                                     const HostTensor& host, SharedTensor* reuse) {
  auto numel = checked_numel(i, host);
  if (!numel.ok()) return numel.status();
  const size_t esize = element_size(host.dtype), nbytes = *numel * esize;
  SharedTensor shared;
  if (reuse && reuse->data_ != nullptr && reuse->capacity_ >= nbytes) {
    shared = *reuse;
  } else {
    auto slot = arena.allocate(nbytes);
    if (!slot.ok()) return slot.status();
    shared = make_shared_tensor(std::move(slot).value(), host.dtype, {});
  }
  auto* dst = static_cast<uint8_t*>(shared.data_);
  const auto* src = static_cast<const uint8_t*>(host.data);
  std::vector<uint32_t> order = declared_order(meta, i, host.sizes.size());
  if (*numel && host.strides.empty() && order.empty()) {
    std::memcpy(dst, src, nbytes);
  } else if (*numel) {
    // Visiting dims in the method's order over the source yields the method's layout.
    const std::vector<int64_t> strides =
        host.strides.empty() ? row_major_strides(host.sizes) : host.strides;
    std::vector<int64_t> sizes_in_order = host.sizes, strides_in_order = strides;
    for (size_t k = 0; k < order.size(); ++k) {
      sizes_in_order[k] = host.sizes[order[k]];
      strides_in_order[k] = strides[order[k]];
    }
    gather_row_major(dst, src, sizes_in_order, strides_in_order, esize);
  }
  shared.dtype_ = host.dtype;
  shared.sizes_ = host.sizes;
  shared.dim_order_ = std::move(order);
  if (reuse) *reuse = shared;
  return shared;
}

Result<OutputSlots> Wire::place_outputs(
    Arena& arena, const MethodMeta& meta,
    google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements) {
  OutputSlots outs;
  for (const ValueMeta& o : meta.outputs) {
    pb::OutputPlacement* p = placements.Add();
    if (!o.tensor) {
      p->set_inline_data(true);
      outs.emplace_back();
      continue;
    }
    auto slot = arena.allocate(o.tensor->nbytes);
    if (!slot.ok()) return slot.status();
    p->mutable_segment()->set_segment_id(arena.wire_id(slot->first.segment));
    p->mutable_segment()->set_offset(slot->first.offset);
    p->mutable_segment()->set_length(slot->first.size);
    outs.push_back(std::move(slot).value());
  }
  return outs;
}

Status Wire::place_into(Arena& arena, const MethodMeta& meta,
                        const std::vector<SharedTensor>& outputs,
                        google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements) {
  if (outputs.size() != meta.outputs.size()) {
    return Status(StatusCode::kInvalidArgument, "outputs: " + std::to_string(outputs.size()) +
                                                    " tensors given, method '" + meta.name +
                                                    "' has " + std::to_string(meta.outputs.size()) +
                                                    " outputs (make them with output_buffers())");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const SharedTensor& t = outputs[i];
    const ValueMeta& o = meta.outputs[i];
    const uint64_t need = o.tensor ? o.tensor->nbytes : sizeof(int64_t);
    if (t.data_ == nullptr || t.capacity_ < need) {
      return Status(StatusCode::kInvalidArgument,
                    "outputs[" + std::to_string(i) + "]: " +
                        (t.data_ == nullptr ? std::string("an empty tensor")
                                            : std::to_string(t.capacity_) + " bytes") +
                        ", the output may need " + std::to_string(need) +
                        " (make it with output_buffers())");
    }
    pb::OutputPlacement* p = placements.Add();
    if (!o.tensor) {
      p->set_inline_data(true);
      continue;
    }
    p->mutable_segment()->set_segment_id(arena.wire_id(t.segment_));
    p->mutable_segment()->set_offset(t.offset_);
    p->mutable_segment()->set_length(t.capacity_);
  }
  return Status();
}

Status Wire::decode_into(const google::protobuf::RepeatedPtrField<pb::Value>& values,
                         std::vector<SharedTensor>& outputs) {
  if (static_cast<size_t>(values.size()) != outputs.size()) {
    return Status(StatusCode::kInternal, "the daemon's reply has " + std::to_string(values.size()) +
                                             " outputs, not " + std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const pb::Value& v = values[static_cast<int>(i)];
    SharedTensor& out = outputs[i];
    if (v.has_tensor() && v.tensor().has_segment()) {
      const pb::Tensor& t = v.tensor();
      const Slot slot{out.segment_, out.offset_, out.capacity_, static_cast<uint8_t*>(out.data_)};
      if (Status s = check_output_reply(i, t, slot); !s.ok()) return s;
      out.dtype_ = from_proto(t.dtype());
      out.sizes_.assign(t.sizes().begin(), t.sizes().end());
      out.dim_order_.assign(t.dim_order().begin(), t.dim_order().end());
      continue;
    }
    out.sizes_.clear();
    out.dim_order_.clear();
    if (v.kind_case() != pb::Value::KIND_NOT_SET && !v.has_tensor() && out.capacity_ < 8) {
      return Status(StatusCode::kInternal, "output " + std::to_string(i) +
                                               ": the daemon's reply is a scalar where a "
                                               "tensor of under 8 bytes was placed");
    }
    if (v.kind_case() == pb::Value::kIntValue) {
      const int64_t x = v.int_value();
      std::memcpy(out.data_, &x, sizeof(x));
      out.dtype_ = DType::kInt64;
    } else if (v.kind_case() == pb::Value::kDoubleValue) {
      const double x = v.double_value();
      std::memcpy(out.data_, &x, sizeof(x));
      out.dtype_ = DType::kFloat64;
    } else if (v.kind_case() == pb::Value::kBoolValue) {
      const bool x = v.bool_value();
      std::memcpy(out.data_, &x, sizeof(x));
      out.dtype_ = DType::kBool;
    } else if (v.has_tensor()) {
      return Status(StatusCode::kInternal, "output " + std::to_string(i) +
                                               ": the daemon's reply is not written into the "
                                               "given buffer");
    }  // a None output leaves its tensor's bytes as they were
  }
  return Status();
}

Result<std::vector<SharedTensor>> Wire::decode_outputs(
    Arena& arena, const google::protobuf::RepeatedPtrField<pb::Value>& values, OutputSlots& slots) {
  std::vector<SharedTensor> results;
  for (int i = 0; i < values.size(); ++i) {
    const pb::Value& v = values[i];
    Result<SharedTensor> r = SharedTensor();
    if (v.has_tensor() && v.tensor().has_segment() && static_cast<size_t>(i) < slots.size()) {
      const pb::Tensor& t = v.tensor();
      if (Status s =
              check_output_reply(static_cast<size_t>(i), t, slots[static_cast<size_t>(i)].first);
          !s.ok()) {
        return s;
      }
      SharedTensor view =
          make_shared_tensor(std::move(slots[static_cast<size_t>(i)]), from_proto(t.dtype()),
                             {t.sizes().begin(), t.sizes().end()});
      view.dim_order_.assign(t.dim_order().begin(), t.dim_order().end());
      r = std::move(view);
    } else if (v.kind_case() == pb::Value::kIntValue) {
      r = scalar_tensor<int64_t>(arena, DType::kInt64, v.int_value());
    } else if (v.kind_case() == pb::Value::kDoubleValue) {
      r = scalar_tensor<double>(arena, DType::kFloat64, v.double_value());
    } else if (v.kind_case() == pb::Value::kBoolValue) {
      r = scalar_tensor<bool>(arena, DType::kBool, v.bool_value());
    }
    if (!r.ok()) return r.status();
    results.push_back(std::move(r).value());
  }
  return results;
}

SharedTensor Wire::make_shared_tensor(std::pair<Slot, std::shared_ptr<void>> slot, DType dtype,
                                      std::vector<int64_t> sizes) {
  SharedTensor t;
  t.slot_ = std::move(slot.second);
  t.data_ = slot.first.data;
  t.segment_ = slot.first.segment;
  t.offset_ = slot.first.offset;
  t.capacity_ = slot.first.size;
  t.dtype_ = dtype;
  t.sizes_ = std::move(sizes);
  return t;
}

Result<SharedTensor> Wire::copy_inline(Arena& arena, const pb::Value& value) {
  const pb::Tensor& t = value.tensor();
  if (!value.has_tensor() || !t.has_inline_data()) {
    return Status(StatusCode::kInternal, "the daemon's reply holds no tensor");
  }
  Result<uint64_t> nbytes = checked_reply_bytes("the tensor", t);
  if (!nbytes.ok()) return nbytes.status();
  if (t.inline_data().size() != *nbytes) {
    return Status(StatusCode::kInternal, "the daemon's reply holds " +
                                             std::to_string(t.inline_data().size()) +
                                             " bytes for a tensor of " + std::to_string(*nbytes));
  }
  const DType dtype = from_proto(t.dtype());
  auto slot = arena.allocate(t.inline_data().size());
  if (!slot.ok()) return slot.status();
  std::memcpy(slot->first.data, t.inline_data().data(), t.inline_data().size());
  SharedTensor out =
      make_shared_tensor(std::move(slot).value(), dtype, {t.sizes().begin(), t.sizes().end()});
  out.dim_order_.assign(t.dim_order().begin(), t.dim_order().end());
  return out;
}

MethodMeta from_proto(const pb::MethodMeta& m) {
  MethodMeta out;
  out.name = m.name();
  auto tensor = [](const pb::TensorMeta& pt) {
    TensorMeta t;
    t.dtype = from_proto(pt.dtype());
    t.sizes.assign(pt.sizes().begin(), pt.sizes().end());
    t.dim_order.assign(pt.dim_order().begin(), pt.dim_order().end());
    t.nbytes = pt.nbytes();
    t.memory_planned = pt.memory_planned();
    t.dynamic = pt.dynamic();
    return t;
  };
  auto values = [&](const auto& list, std::vector<ValueMeta>& dst) {
    for (const pb::ValueMeta& v : list) {
      ValueMeta meta;
      meta.kind = v.kind();
      if (v.has_tensor()) meta.tensor = tensor(v.tensor());
      dst.push_back(std::move(meta));
    }
  };
  values(m.inputs(), out.inputs);
  values(m.outputs(), out.outputs);
  out.operators.assign(m.operators().begin(), m.operators().end());
  out.backends.assign(m.backends().begin(), m.backends().end());
  for (const pb::AttributeMeta& a : m.attributes()) {
    out.attributes.push_back(AttributeMeta{a.name(), tensor(a.tensor())});
  }
  return out;
}

}  // namespace etclient
