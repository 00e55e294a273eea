#include "server/transport/etproto/value_codec.h"

#include <fmt/format.h>

#include <cstring>

#include "runtime/core/tensor.h"

namespace et::server {
namespace {

constexpr int kMaxRank = 16;

Status bad_input(size_t index, std::string message) {
  return invalid_argument(fmt::format("inputs[{}]: {}", index, message));
}

bool is_integral(ScalarType t) {
  switch (t) {
    case ScalarType::kFloat:
    case ScalarType::kDouble:
    case ScalarType::kHalf:
    case ScalarType::kBFloat16:
      return false;
    default:
      return true;
  }
}

}  // namespace

Result<ScalarType> from_proto(pb::DataType type) {
  switch (type) {
    case pb::UINT8:
      return ScalarType::kByte;
    case pb::INT8:
      return ScalarType::kChar;
    case pb::INT16:
      return ScalarType::kShort;
    case pb::INT32:
      return ScalarType::kInt;
    case pb::INT64:
      return ScalarType::kLong;
    case pb::FLOAT16:
      return ScalarType::kHalf;
    case pb::FLOAT32:
      return ScalarType::kFloat;
    case pb::FLOAT64:
      return ScalarType::kDouble;
    case pb::BOOL:
      return ScalarType::kBool;
    case pb::BFLOAT16:
      return ScalarType::kBFloat16;
    default:
      return invalid_argument(
          fmt::format("dtype {} is not a known data type (set dtype)", static_cast<int>(type)));
  }
}

pb::DataType to_proto(ScalarType type) {
  switch (type) {
    case ScalarType::kByte:
      return pb::UINT8;
    case ScalarType::kChar:
      return pb::INT8;
    case ScalarType::kShort:
      return pb::INT16;
    case ScalarType::kInt:
      return pb::INT32;
    case ScalarType::kLong:
      return pb::INT64;
    case ScalarType::kHalf:
      return pb::FLOAT16;
    case ScalarType::kFloat:
      return pb::FLOAT32;
    case ScalarType::kDouble:
      return pb::FLOAT64;
    case ScalarType::kBool:
      return pb::BOOL;
    case ScalarType::kBFloat16:
      return pb::BFLOAT16;
    default:
      return pb::DATA_TYPE_UNSPECIFIED;
  }
}

namespace {

void value_meta_to_proto(const ValueMeta& v, pb::ValueMeta& out) {
  out.set_kind(std::string(value_kind_name(v.kind)));
  if (!v.tensor) return;
  pb::TensorMeta& t = *out.mutable_tensor();
  t.set_dtype(to_proto(v.tensor->dtype));
  for (int32_t s : v.tensor->sizes) t.add_sizes(s);
  for (uint8_t d : v.tensor->dim_order) t.add_dim_order(d);
  t.set_nbytes(v.tensor->nbytes);
  t.set_memory_planned(v.tensor->is_memory_planned);
  t.set_dynamic(v.tensor->is_dynamic);
  t.set_device(v.tensor->device == DeviceType::kCpu ? pb::CPU : pb::CUDA);
}

}  // namespace

void to_proto(const MethodMeta& meta, pb::MethodMeta& out) {
  out.set_name(meta.name);
  for (const ValueMeta& v : meta.inputs) value_meta_to_proto(v, *out.add_inputs());
  for (const ValueMeta& v : meta.outputs) value_meta_to_proto(v, *out.add_outputs());
  for (const std::string& op : meta.operators) out.add_operators(op);
  for (const std::string& b : meta.backends) out.add_backends(b);
  for (int64_t b : meta.planned_buffer_sizes)
    out.add_planned_buffer_bytes(static_cast<uint64_t>(b));
  out.set_input_spec(meta.input_spec);
  out.set_output_spec(meta.output_spec);
  for (const AttributeMeta& a : meta.attributes) {
    pb::AttributeMeta& attribute = *out.add_attributes();
    attribute.set_name(a.name);
    ValueMeta v;
    v.kind = ValueKind::kTensor;
    v.tensor = a.tensor;
    pb::ValueMeta tmp;
    value_meta_to_proto(v, tmp);
    *attribute.mutable_tensor() = std::move(*tmp.mutable_tensor());
  }
}

Status decode_input(size_t index, const pb::Value& in, const SegmentLookup& segments,
                    bool copy_inline, DecodedInput& out) {
  switch (in.kind_case()) {
    case pb::Value::kIntValue:
      out.value = InputValue::of_int(in.int_value());
      return Status();
    case pb::Value::kDoubleValue:
      out.value = InputValue::of_double(in.double_value());
      return Status();
    case pb::Value::kBoolValue:
      out.value = InputValue::of_bool(in.bool_value());
      return Status();
    case pb::Value::kTensor:
      break;
    case pb::Value::KIND_NOT_SET:
      return bad_input(index, "no value given (set tensor, int_value, double_value or bool_value)");
    default:
      return bad_input(index, "this kind of value cannot be an input");
  }
  const pb::Tensor& t = in.tensor();
  if (t.sizes_size() > kMaxRank) {
    return bad_input(index,
                     fmt::format("rank {} is above the maximum of {}", t.sizes_size(), kMaxRank));
  }
  auto dtype_or = from_proto(t.dtype());
  if (!dtype_or.ok()) return dtype_or.status().with_context(fmt::format("inputs[{}]", index));
  const ScalarType dtype = *dtype_or;
  if (t.device() != pb::CPU) {
    return not_supported(
        fmt::format("inputs[{}]: device {} cannot be reached by this daemon (send CPU memory)",
                    index, pb::Device_Name(t.device())));
  }
  out.sizes.assign(t.sizes().begin(), t.sizes().end());
  const ElementCount count = count_elements(out.sizes);
  if (count.bad_size) {
    return bad_input(
        index, fmt::format("size {} does not fit the runtime's 32-bit sizes", *count.bad_size));
  }
  if (count.too_many) {
    return bad_input(index, fmt::format("sizes {} hold more than 2^40 elements",
                                        shape_string(std::span<const int64_t>(out.sizes))));
  }
  const uint64_t numel = count.elements;
  if (t.strides_size() && t.dim_order_size()) {
    return bad_input(index, "give strides or dim_order, not both");
  }
  if (t.strides_size()) {
    if (t.strides_size() != t.sizes_size()) {
      return bad_input(index,
                       fmt::format("{} strides for {} sizes", t.strides_size(), t.sizes_size()));
    }
    out.strides.assign(t.strides().begin(), t.strides().end());
  } else if (t.dim_order_size()) {
    if (t.dim_order_size() != t.sizes_size()) {
      return bad_input(index, fmt::format("dim_order has {} entries for {} sizes",
                                          t.dim_order_size(), t.sizes_size()));
    }
    std::vector<bool> seen(out.sizes.size(), false);
    for (uint32_t d : t.dim_order()) {
      if (d >= seen.size() || seen[d]) return bad_input(index, "dim_order is not a permutation");
      seen[d] = true;
    }
    // Strides of a dense tensor in that dim order.
    out.strides.assign(out.sizes.size(), 0);
    int64_t stride = 1;
    for (int i = t.dim_order_size() - 1; i >= 0; --i) {
      out.strides[t.dim_order(i)] = stride;
      if (__builtin_mul_overflow(stride, std::max<int64_t>(1, out.sizes[t.dim_order(i)]),
                                 &stride)) {
        return bad_input(index, fmt::format("sizes {} overflow a 64-bit stride",
                                            shape_string(std::span<const int64_t>(out.sizes))));
      }
    }
  }
  const uint64_t want = numel * element_size(dtype);
  std::span<uint8_t> bytes;
  if (t.data_case() == pb::Tensor::kInlineData) {
    const std::string& data = t.inline_data();
    if (data.size() != want) {
      return bad_input(index, fmt::format("inline_data has {} bytes, {} elements of {} need {}",
                                          data.size(), numel, scalar_type_name(dtype), want));
    }
    if (copy_inline) {
      out.copy.assign(data.begin(), data.end());
      bytes = out.copy;
    } else {
      bytes = {reinterpret_cast<uint8_t*>(const_cast<char*>(data.data())), data.size()};
    }
  } else if (t.data_case() == pb::Tensor::kSegment) {
    const pb::SegmentRange& r = t.segment();
    auto segment = segments(r.segment_id());
    if (!segment.ok())
      return segment.status().with_context(fmt::format("inputs[{}].segment", index));
    auto range = (*segment)->range(r.offset(), r.length());
    if (!range.ok()) return range.status().with_context(fmt::format("inputs[{}].segment", index));
    if (range->size() < want) {
      return bad_input(index, fmt::format("segment range holds {} bytes, {} elements of {} need {}",
                                          range->size(), numel, scalar_type_name(dtype), want));
    }
    if (is_integral(dtype)) {
      out.copy.assign(range->begin(), range->begin() + static_cast<long>(want));
      bytes = out.copy;
    } else {
      bytes = range->subspan(0, want);
      out.segment = std::move(segment).value();
    }
  } else {
    return bad_input(index, "the tensor has no data (set inline_data or segment)");
  }
  TensorView view;
  view.data = bytes.empty() ? out.copy.data() : bytes.data();
  view.nbytes = bytes.size();
  view.dtype = dtype;
  view.sizes = out.sizes;
  view.strides = out.strides;
  out.value = InputValue::of_tensor(view);
  return Status();
}

Status encode_output(size_t index, const Value& value, const pb::OutputPlacement* placement,
                     const SegmentLookup& segments, pb::Value& out) {
  switch (value.kind()) {
    case ValueKind::kInt:
      out.set_int_value(value.to_int());
      return Status();
    case ValueKind::kDouble:
      out.set_double_value(value.to_double());
      return Status();
    case ValueKind::kBool:
      out.set_bool_value(value.to_bool());
      return Status();
    case ValueKind::kNone:
      out.set_none(true);
      return Status();
    case ValueKind::kTensor:
      break;
    default:
      return not_supported(fmt::format("outputs[{}]: a {} cannot be returned", index,
                                       value_kind_name(value.kind())));
  }
  const Tensor& t = value.to_tensor();
  if (!t.has_memory()) {
    return failed_precondition(
        fmt::format("outputs[{}]: the program left this output with no memory (it freed or "
                    "never wrote it); the program is faulty, re-export it",
                    index));
  }
  pb::Tensor& o = *out.mutable_tensor();
  o.set_dtype(to_proto(t.dtype()));
  for (int32_t s : t.sizes()) o.add_sizes(s);
  for (uint8_t d : t.dim_order()) o.add_dim_order(d);
  const auto* data = static_cast<const uint8_t*>(t.data());
  if (placement && placement->where_case() == pb::OutputPlacement::kSegment) {
    const pb::SegmentRange& r = placement->segment();
    auto segment = segments(r.segment_id());
    if (!segment.ok())
      return segment.status().with_context(fmt::format("placements[{}].segment", index));
    auto range = (*segment)->range(r.offset(), r.length());
    if (!range.ok())
      return range.status().with_context(fmt::format("placements[{}].segment", index));
    if (range->size() < t.nbytes()) {
      return invalid_argument(
          fmt::format("placements[{}]: the range holds {} bytes, the output needs {}", index,
                      range->size(), t.nbytes()));
    }
    // memmove: an output that is an input may already lie in (part of) this range.
    if (t.nbytes() && range->data() != data) std::memmove(range->data(), data, t.nbytes());
    pb::SegmentRange& where = *o.mutable_segment();
    where = r;
    where.set_length(t.nbytes());
    return Status();
  }
  o.set_inline_data(data, t.nbytes());
  return Status();
}

}  // namespace et::server
