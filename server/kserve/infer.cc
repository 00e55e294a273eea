#include "server/kserve/infer.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include "kernels/util/copy_util.h"
#include "runtime/core/printable.h"
#include "server/metrics/call_scope.h"

namespace et::server::kserve {
namespace {

using Params = google::protobuf::Map<std::string, inference::InferParameter>;
using Clock = std::chrono::steady_clock;

// Where a tensor's bytes are in a client's shared memory.
struct Placement {
  std::string region;
  uint64_t offset = 0;
  std::optional<uint64_t> byte_size;
};

Result<std::optional<Placement>> placement_of(const Params& params, const std::string& tensor) {
  auto it = params.find("shared_memory_region");
  if (it == params.end()) return std::optional<Placement>();
  if (it->second.parameter_choice_case() != inference::InferParameter::kStringParam) {
    return invalid_argument(fmt::format("{}: shared_memory_region must be a string", tensor));
  }
  Placement p;
  p.region = it->second.string_param();
  for (const char* key : {"shared_memory_offset", "shared_memory_byte_size"}) {
    auto v = params.find(key);
    if (v == params.end()) continue;
    int64_t n = -1;
    if (v->second.parameter_choice_case() == inference::InferParameter::kInt64Param) {
      n = v->second.int64_param();
    } else if (v->second.parameter_choice_case() == inference::InferParameter::kUint64Param &&
               v->second.uint64_param() <= uint64_t{INT64_MAX}) {
      n = static_cast<int64_t>(v->second.uint64_param());
    }
    if (n < 0) return invalid_argument(fmt::format("{}: {} must be an integer >= 0", tensor, key));
    if (std::strcmp(key, "shared_memory_offset") == 0) {
      p.offset = static_cast<uint64_t>(n);
    } else {
      p.byte_size = static_cast<uint64_t>(n);
    }
  }
  return std::optional<Placement>(p);
}

// A client's region, system or CUDA.
struct RegionRef {
  std::shared_ptr<const ShmRegion> system;
  std::shared_ptr<const CudaRegion> cuda;
  Status read(uint64_t at, std::span<uint8_t> out) const {
    return system ? system->read(at, out) : cuda->read(at, out);
  }
  Status write(uint64_t at, std::span<const uint8_t> in) const {
    return system ? system->write(at, in) : cuda->write(at, in);
  }
};

class Regions {
 public:
  explicit Regions(const InferContext& ctx) : ctx_(ctx) {}
  Result<RegionRef> find(const std::string& name) {
    if (!peer_) {
      auto p = ctx_.peer();
      if (!p.ok()) return p.status();
      peer_ = *p;
    }
    auto system = ctx_.system_shm.find(*peer_, name);
    if (system.ok()) return RegionRef{*system, nullptr};
    if (system.status().code() != StatusCode::kNotFound) return system.status();
    if (auto cuda = ctx_.cuda_shm.find(*peer_, name); cuda.ok()) return RegionRef{nullptr, *cuda};
    return system.status();
  }

 private:
  const InferContext& ctx_;
  std::optional<Peer> peer_;
};

Status bad(const std::string& tensor, const std::string& what) {
  return invalid_argument(fmt::format("{}: {}", tensor, what));
}

// Typed contents as bytes of `dtype`; InvalidArgument when the list for the datatype
// is not the one given or has the wrong count.
template <typename To, typename List>
Status convert(const List& list, uint64_t numel, const std::string& tensor, const char* field,
               std::vector<uint8_t>& out) {
  if (static_cast<uint64_t>(list.size()) != numel) {
    return bad(tensor, fmt::format("contents.{} holds {} elements, the shape needs {}", field,
                                   list.size(), numel));
  }
  out.resize(numel * sizeof(To));
  auto* dst = reinterpret_cast<To*>(out.data());
  for (int i = 0; i < list.size(); ++i) dst[i] = static_cast<To>(list[i]);
  return Status();
}

Status typed_contents(const inference::InferTensorContents& c, ScalarType dtype, uint64_t numel,
                      const std::string& tensor, std::vector<uint8_t>& out) {
  switch (dtype) {
    case ScalarType::kBool:
      return convert<bool>(c.bool_contents(), numel, tensor, "bool_contents", out);
    case ScalarType::kChar:
      return convert<int8_t>(c.int_contents(), numel, tensor, "int_contents", out);
    case ScalarType::kShort:
      return convert<int16_t>(c.int_contents(), numel, tensor, "int_contents", out);
    case ScalarType::kInt:
      return convert<int32_t>(c.int_contents(), numel, tensor, "int_contents", out);
    case ScalarType::kLong:
      return convert<int64_t>(c.int64_contents(), numel, tensor, "int64_contents", out);
    case ScalarType::kByte:
      return convert<uint8_t>(c.uint_contents(), numel, tensor, "uint_contents", out);
    case ScalarType::kUInt16:
      return convert<uint16_t>(c.uint_contents(), numel, tensor, "uint_contents", out);
    case ScalarType::kUInt32:
      return convert<uint32_t>(c.uint_contents(), numel, tensor, "uint_contents", out);
    case ScalarType::kUInt64:
      return convert<uint64_t>(c.uint64_contents(), numel, tensor, "uint64_contents", out);
    case ScalarType::kFloat:
      return convert<float>(c.fp32_contents(), numel, tensor, "fp32_contents", out);
    case ScalarType::kDouble:
      return convert<double>(c.fp64_contents(), numel, tensor, "fp64_contents", out);
    default:
      return bad(tensor, fmt::format("{} has no typed contents in the protocol; send it as raw "
                                     "bytes (raw_input_contents)",
                                     datatype_name(dtype)));
  }
}

// Checks a given shape for `spec`: its element count, or InvalidArgument.
Result<uint64_t> element_count(const TensorSpec& spec,
                               const google::protobuf::RepeatedField<int64_t>& shape) {
  if (spec.kind != ValueKind::kTensor) {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    if (n != 1 || shape.size() > 1) {
      return bad(spec.name,
                 fmt::format("the program takes one {} here; send shape [1]", spec.datatype));
    }
    return 1;
  }
  if (static_cast<size_t>(shape.size()) != spec.max_shape.size()) {
    return bad(spec.name, fmt::format("shape has {} dims, the model's has {} ({})", shape.size(),
                                      spec.max_shape.size(),
                                      shape_string(std::span<const int64_t>(spec.shape))));
  }
  const std::vector<int64_t> given(shape.begin(), shape.end());
  for (size_t i = 0; i < given.size(); ++i) {
    if (spec.shape[i] >= 0 && given[i] != spec.shape[i]) {
      return bad(spec.name, fmt::format("shape {} given, the model takes {}", shape_string(given),
                                        shape_string(std::span<const int64_t>(spec.shape))));
    }
    if (given[i] > spec.max_shape[i]) {
      return bad(spec.name, fmt::format("shape {}: dim {} is above the model's bound {} "
                                        "(max_shape.{} in its config: {})",
                                        shape_string(given), i, spec.max_shape[i], spec.name,
                                        shape_string(std::span<const int64_t>(spec.max_shape))));
    }
  }
  const ElementCount count = count_elements(given);
  if (count.bad_size) {
    return bad(spec.name, fmt::format("dim {} is not a size (0 to 2^31-1); give the actual "
                                      "shape, -1 is only for metadata",
                                      *count.bad_size));
  }
  if (count.too_many) return bad(spec.name, "the shape has too many elements");
  return count.elements;
}

DecodedInput as_input(const TensorSpec& spec, std::vector<uint8_t> bytes,
                      const google::protobuf::RepeatedField<int64_t>& shape) {
  DecodedInput d;
  d.copy = std::move(bytes);
  switch (spec.kind) {
    case ValueKind::kInt: {
      int64_t v;
      std::memcpy(&v, d.copy.data(), sizeof(v));
      d.value = InputValue::of_int(v);
      return d;
    }
    case ValueKind::kDouble: {
      double v;
      std::memcpy(&v, d.copy.data(), sizeof(v));
      d.value = InputValue::of_double(v);
      return d;
    }
    case ValueKind::kBool:
      d.value = InputValue::of_bool(d.copy[0] != 0);
      return d;
    default:
      break;
  }
  d.sizes.assign(shape.begin(), shape.end());
  // KServe tensors are row-major; a program declaring another layout (channels last)
  // gets the elements rearranged into it.
  bool row_major = true;
  for (size_t i = 0; i < spec.dim_order.size(); ++i) row_major &= spec.dim_order[i] == i;
  if (!row_major && spec.dim_order.size() == d.sizes.size() && !d.copy.empty()) {
    kernels::Shape logical;
    logical.rank = static_cast<int>(d.sizes.size());
    std::copy(d.sizes.begin(), d.sizes.end(), logical.sizes.begin());
    const auto src = kernels::row_major_strides(logical);
    d.strides.resize(d.sizes.size());
    strides_for_dim_order(d.sizes, spec.dim_order, d.strides);
    std::vector<uint8_t> laid_out(d.copy.size());
    kernels::strided_copy(logical, d.copy.data(), src.data(), laid_out.data(), d.strides.data(),
                          element_size(spec.dtype));
    d.copy = std::move(laid_out);
  }
  TensorView view;
  view.data = d.copy.data();
  view.nbytes = d.copy.size();
  view.dtype = spec.dtype;
  view.sizes = d.sizes;
  view.strides = d.strides;
  d.value = InputValue::of_tensor(view);
  return d;
}

// An output's elements in row-major order.
Status row_major_bytes(const Value& v, const TensorSpec& spec, std::string& out,
                       std::vector<int64_t>& shape) {
  switch (v.kind()) {
    case ValueKind::kInt: {
      const int64_t x = v.to_int();
      out.assign(reinterpret_cast<const char*>(&x), sizeof(x));
      shape = {1};
      return Status();
    }
    case ValueKind::kDouble: {
      const double x = v.to_double();
      out.assign(reinterpret_cast<const char*>(&x), sizeof(x));
      shape = {1};
      return Status();
    }
    case ValueKind::kBool:
      out.assign(1, v.to_bool() ? 1 : 0);
      shape = {1};
      return Status();
    case ValueKind::kTensor:
      break;
    default:
      return not_supported(
          fmt::format("{}: a {} cannot be returned", spec.name, value_kind_name(v.kind())));
  }
  const Tensor& t = v.to_tensor();
  if (!t.has_memory()) {
    return failed_precondition(fmt::format(
        "{}: the program left this output with no memory; the program is faulty, re-export it",
        spec.name));
  }
  shape.assign(t.sizes().begin(), t.sizes().end());
  out.resize(t.nbytes());
  bool row_major = true;
  for (size_t i = 0; i < t.dim_order().size(); ++i) row_major &= t.dim_order()[i] == i;
  if (row_major || t.nbytes() == 0) {
    if (t.nbytes()) std::memcpy(out.data(), t.data(), t.nbytes());
    return Status();
  }
  std::vector<int64_t> dense(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    dense[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  kernels::strided_copy(kernels::shape_of(t), t.data(), t.strides().data(), out.data(),
                        dense.data(), t.element_size());
  return Status();
}

}  // namespace

Status infer(const InferContext& ctx, const inference::ModelInferRequest& req,
             inference::ModelInferResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Model> model,
                      ctx.models.find(req.model_name(), req.model_version()));
  metrics::CallScope::note_target(model->program()->name, model->program()->sha256,
                                  model->method());
  const auto started = Clock::now();
  CallBounds bounds = ctx.bounds;
  if (auto t = req.parameters().find("timeout"); t != req.parameters().end()) {
    if (t->second.parameter_choice_case() != inference::InferParameter::kInt64Param ||
        t->second.int64_param() < 0) {
      return invalid_argument(
          "parameter 'timeout': give the call's timeout in microseconds, an int64 of at least 0 "
          "(0: none)");
    }
    // At most 2^40 us (12 days): a later deadline is none, and no sum overflows.
    if (const int64_t us = std::min<int64_t>(t->second.int64_param(), int64_t{1} << 40); us > 0) {
      bounds.deadline = std::min(bounds.deadline, started + std::chrono::microseconds(us));
    }
  }
  Regions regions(ctx);

  // Inputs, by the model's names.
  std::map<std::string, const TensorSpec*> by_name;
  for (const TensorSpec& s : model->inputs()) by_name[s.name] = &s;
  std::vector<DecodedInput> decoded(model->method_inputs());
  std::vector<bool> given(model->method_inputs(), false);
  int raw_used = 0;
  bool any_typed = false;
  for (const auto& in : req.inputs()) {
    auto it = by_name.find(in.name());
    if (it == by_name.end()) {
      std::string names;
      for (const TensorSpec& s : model->inputs()) names += (names.empty() ? "" : ", ") + s.name;
      return invalid_argument(
          fmt::format("input '{}': model '{}' has no such input (its inputs: {})",
                      printable(in.name()), model->name(), names));
    }
    const TensorSpec& spec = *it->second;
    if (given[spec.index]) return bad(spec.name, "given twice");
    given[spec.index] = true;
    if (in.datatype() != spec.datatype) {
      return bad(spec.name, fmt::format("datatype {} given, the model takes {}",
                                        printable(in.datatype()), spec.datatype));
    }
    ET_ASSIGN_OR_RETURN(uint64_t numel, element_count(spec, in.shape()));
    const uint64_t nbytes = numel * element_size(spec.dtype);
    std::vector<uint8_t> bytes;
    ET_ASSIGN_OR_RETURN(std::optional<Placement> where, placement_of(in.parameters(), spec.name));
    if (where) {
      if (where->byte_size && *where->byte_size != nbytes) {
        return bad(spec.name, fmt::format("shared_memory_byte_size is {}, the shape and datatype "
                                          "make {} bytes",
                                          *where->byte_size, nbytes));
      }
      auto region = regions.find(where->region);
      if (!region.ok()) return region.status().with_context(spec.name);
      bytes.resize(nbytes);
      ET_RETURN_IF_ERROR(region->read(where->offset, bytes).with_context(spec.name));
    } else if (raw_used < req.raw_input_contents_size()) {
      const std::string& raw = req.raw_input_contents(raw_used++);
      if (raw.size() != nbytes) {
        return bad(spec.name, fmt::format("raw_input_contents holds {} bytes, the shape and "
                                          "datatype make {}",
                                          raw.size(), nbytes));
      }
      bytes.assign(raw.begin(), raw.end());
    } else {
      any_typed = true;
      ET_RETURN_IF_ERROR(typed_contents(in.contents(), spec.dtype, numel, spec.name, bytes));
    }
    decoded[spec.index] = as_input(spec, std::move(bytes), in.shape());
  }
  if (raw_used != req.raw_input_contents_size() || (any_typed && raw_used > 0)) {
    return invalid_argument(fmt::format(
        "raw_input_contents: {} given for {} inputs sent in the request; give one per input "
        "not in shared memory, or typed contents for all of them",
        req.raw_input_contents_size(), raw_used + (any_typed ? 1 : 0)));
  }
  for (const TensorSpec& s : model->inputs()) {
    if (!given[s.index]) {
      return invalid_argument(fmt::format("{}: missing; model '{}' takes {} inputs", s.name,
                                          model->name(), model->inputs().size()));
    }
  }

  // Requested outputs (none: all, returned raw).
  struct Wanted {
    const TensorSpec* spec;
    std::optional<Placement> where;
  };
  std::vector<Wanted> wanted;
  if (req.outputs().empty()) {
    for (const TensorSpec& s : model->outputs()) wanted.push_back({&s, std::nullopt});
  }
  for (const auto& o : req.outputs()) {
    const TensorSpec* spec = nullptr;
    for (const TensorSpec& s : model->outputs()) spec = s.name == o.name() ? &s : spec;
    if (!spec) {
      return invalid_argument(
          fmt::format("output '{}': model '{}' has outputs output__0 to "
                      "output__{}",
                      printable(o.name()), model->name(), model->outputs().size() - 1));
    }
    if (o.parameters().count("classification")) {
      return not_supported(fmt::format("{}: classification outputs are not supported", spec->name));
    }
    ET_ASSIGN_OR_RETURN(std::optional<Placement> where, placement_of(o.parameters(), spec->name));
    wanted.push_back({spec, where});
  }

  ET_ASSIGN_OR_RETURN(Model::Lease lease, model->lease());
  auto read_outputs = [&](const Method& m) -> Status {
    for (const Wanted& w : wanted) {
      ET_ASSIGN_OR_RETURN(const Value* v, m.output(w.spec->index));
      auto& out = *resp.add_outputs();
      out.set_name(w.spec->name);
      out.set_datatype(w.spec->datatype);
      std::string* raw = resp.add_raw_output_contents();
      std::vector<int64_t> shape;
      ET_RETURN_IF_ERROR(row_major_bytes(*v, *w.spec, *raw, shape));
      for (int64_t d : shape) out.add_shape(d);
      if (!w.where) continue;
      const uint64_t size = w.where->byte_size.value_or(raw->size());
      if (size < raw->size()) {
        return bad(w.spec->name, fmt::format("shared_memory_byte_size {} is too small: the "
                                             "output has {} bytes",
                                             size, raw->size()));
      }
      auto region = regions.find(w.where->region);
      if (!region.ok()) return region.status().with_context(w.spec->name);
      ET_RETURN_IF_ERROR(
          region
              ->write(w.where->offset, {reinterpret_cast<const uint8_t*>(raw->data()), raw->size()})
              .with_context(w.spec->name));
      auto& params = *out.mutable_parameters();
      params["shared_memory_region"].set_string_param(w.where->region);
      params["shared_memory_byte_size"].set_int64_param(static_cast<int64_t>(raw->size()));
      if (w.where->offset) {
        params["shared_memory_offset"].set_int64_param(static_cast<int64_t>(w.where->offset));
      }
      raw->clear();
    }
    return Status();
  };
  RunWork work;
  work.bind = [&decoded](const Method&, const SegmentLookup&, std::vector<DecodedInput>& out) {
    out = std::move(decoded);
    return Status();
  };
  work.read = [&](const Method& m, const SegmentLookup&) { return read_outputs(m); };
  CallRequest call(HeldInstance{&lease.slot(), &ctx.cancelled}, std::move(work), bounds);
  Status st = ctx.core.call(call);
  const CallTimes& times = call.times;
  const uint64_t total = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - started).count());
  model->record(st.ok(), times, total);
  if (!st.ok()) return st.with_context(fmt::format("model '{}'", model->name()));
  resp.set_model_name(model->name());
  resp.set_model_version(model->version());
  resp.set_id(req.id());
  return Status();
}

}  // namespace et::server::kserve
