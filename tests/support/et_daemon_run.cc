// et-daemon-run: runs one method of a program through a running et-serverd, like
// et-run does in-process. A test tool (the client issues bring the real clients).
//
//   et-daemon-run --socket PATH MODEL.pte [--data FILE.ptd] [--method NAME] [--input FILE.npy]...
//                 [--output-dir DIR] [--calls N] [--via-segments]
//
// Outputs land in DIR/0.npy, ... (after the last call). --via-segments passes inputs
// and receives outputs through a registered memfd segment instead of inline bytes.
// Exit status: 0 on success, 1 on an error (printed on stderr), 2 on bad usage.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/daemon.h"
#include "tools/layout.h"
#include "tools/npy.h"

namespace {

namespace pb = ::etserver::v1;

int fail(const std::string& what, const grpc::Status& s) {
  std::fprintf(stderr, "et-daemon-run: %s: %s (%d)\n", what.c_str(), s.error_message().c_str(),
               static_cast<int>(s.error_code()));
  return 1;
}

et::ScalarType scalar_type(pb::DataType t) {
  switch (t) {
    case pb::UINT8:
      return et::ScalarType::kByte;
    case pb::INT8:
      return et::ScalarType::kChar;
    case pb::INT16:
      return et::ScalarType::kShort;
    case pb::INT32:
      return et::ScalarType::kInt;
    case pb::INT64:
      return et::ScalarType::kLong;
    case pb::FLOAT16:
      return et::ScalarType::kHalf;
    case pb::FLOAT64:
      return et::ScalarType::kDouble;
    case pb::BOOL:
      return et::ScalarType::kBool;
    case pb::BFLOAT16:
      return et::ScalarType::kBFloat16;
    default:
      return et::ScalarType::kFloat;
  }
}

// Element strides of a dense tensor of `sizes` laid out in `order` (outermost first).
std::vector<int64_t> strides_for(const std::vector<int64_t>& sizes,
                                 const std::vector<uint8_t>& order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = stride;
    stride *= std::max<int64_t>(1, sizes[order[i]]);
  }
  return strides;
}

std::vector<uint8_t> identity(size_t rank) {
  std::vector<uint8_t> order(rank);
  for (size_t d = 0; d < rank; ++d) order[d] = static_cast<uint8_t>(d);
  return order;
}

// Copies `data` (a tensor of `sizes` in layout `from`) into layout `to`.
std::vector<uint8_t> relayout(const uint8_t* data, size_t nbytes, size_t element_size,
                              const std::vector<int64_t>& sizes, const std::vector<uint8_t>& from,
                              const std::vector<uint8_t>& to) {
  std::vector<uint8_t> out(nbytes);
  const auto src = strides_for(sizes, from), dst = strides_for(sizes, to);
  et::tools::copy_strided(data, src, out.data(), dst, sizes, element_size);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket, model, data_path, method = "forward", out_dir = ".";
  std::vector<std::string> inputs;
  int calls = 1;
  bool via_segments = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--socket")
      socket = next();
    else if (a == "--method")
      method = next();
    else if (a == "--data")
      data_path = next();
    else if (a == "--input")
      inputs.push_back(next());
    else if (a == "--output-dir")
      out_dir = next();
    else if (a == "--calls")
      calls = std::stoi(next());
    else if (a == "--via-segments")
      via_segments = true;
    else
      model = a;
  }
  if (socket.empty() || model.empty()) {
    std::fprintf(stderr,
                 "usage: et-daemon-run --socket PATH MODEL.pte [--data FILE.ptd] [--method NAME] "
                 "[--input FILE.npy]... [--output-dir DIR] [--calls N] [--via-segments]\n");
    return 2;
  }
  et::testing::TestClient client(socket);
  if (!client.connected()) {
    std::fprintf(stderr, "et-daemon-run: cannot open a session on %s\n", socket.c_str());
    return 1;
  }
  std::fprintf(stderr, "et-daemon-run: transport %s\n", client.uses_fast_path() ? "fast" : "grpc");
  std::string error;
  const uint64_t program = client.load_program_file(model, &error, data_path);
  if (!program) {
    std::fprintf(stderr, "et-daemon-run: LoadProgram: %s\n", error.c_str());
    return 1;
  }
  pb::LoadMethodRequest lm;
  lm.set_session(client.session());
  lm.set_program_id(program);
  lm.set_method_name(method);
  pb::LoadMethodResponse meta;
  {
    grpc::ClientContext ctx;
    grpc::Status s = client.stub().LoadMethod(&ctx, lm, &meta);
    if (!s.ok()) return fail("LoadMethod", s);
  }
  pb::RunRequest run;
  run.set_session(client.session());
  run.set_method_handle(meta.method_handle());
  size_t segment_bytes = 1 << 12;
  for (const auto& in : inputs)
    segment_bytes += 64 + static_cast<size_t>(std::max<int64_t>(0, [&] {
                       auto a = et::tools::read_npy(in);
                       return a.ok() ? static_cast<int64_t>(a->data.size()) : 0;
                     }()));
  for (const auto& o : meta.meta().outputs()) segment_bytes += 64 + o.tensor().nbytes();
  et::testing::TestClient::Segment seg;
  if (via_segments) {
    seg = client.create_segment(segment_bytes);
    if (!seg.id) {
      std::fprintf(stderr, "et-daemon-run: segment: %s\n", seg.error.c_str());
      return 1;
    }
  }
  size_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto a = et::tools::read_npy(inputs[i]);
    if (!a.ok()) {
      std::fprintf(stderr, "et-daemon-run: %s\n", a.status().to_string().c_str());
      return 1;
    }
    pb::Value* v = run.add_inputs();
    const std::string& kind = meta.meta().inputs(static_cast<int>(i)).kind();
    if (a->shape.empty() && kind != "tensor") {  // a 0-d array: a scalar input
      if (kind == "int")
        v->set_int_value(a->dtype == et::ScalarType::kLong
                             ? *reinterpret_cast<const int64_t*>(a->data.data())
                             : *reinterpret_cast<const int32_t*>(a->data.data()));
      else if (kind == "float")
        v->set_double_value(a->dtype == et::ScalarType::kDouble
                                ? *reinterpret_cast<const double*>(a->data.data())
                                : *reinterpret_cast<const float*>(a->data.data()));
      else
        v->set_bool_value(a->data[0] != 0);
      continue;
    }
    *v->mutable_tensor() = et::testing::npy_tensor(inputs[i]);
    const auto& declared = meta.meta().inputs(static_cast<int>(i)).tensor();
    if (declared.dtype() == pb::BFLOAT16) v->mutable_tensor()->set_dtype(pb::BFLOAT16);
    // The method's dim order (the .npy is C order): copy into that layout.
    bool contiguous = true;
    for (int d = 0; d < declared.dim_order_size(); ++d)
      contiguous &= declared.dim_order(d) == static_cast<uint32_t>(d);
    if (!contiguous) {
      std::vector<uint8_t> dim_order(declared.dim_order().begin(), declared.dim_order().end());
      const std::vector<uint8_t> moved =
          relayout(a->data.data(), a->data.size(), et::element_size(a->dtype), a->shape,
                   identity(a->shape.size()), dim_order);
      v->mutable_tensor()->set_inline_data(moved.data(), moved.size());
      for (uint8_t d : dim_order) v->mutable_tensor()->add_dim_order(d);
    }
    if (via_segments) {
      const std::string bytes = v->tensor().inline_data();
      std::memcpy(seg.data + offset, bytes.data(), bytes.size());
      pb::SegmentRange* r = v->mutable_tensor()->mutable_segment();
      r->set_segment_id(seg.id);
      r->set_offset(offset);
      r->set_length(bytes.size());
      offset += (bytes.size() + 63) / 64 * 64;
    }
  }
  if (via_segments) {
    for (const auto& o : meta.meta().outputs()) {
      pb::OutputPlacement* p = run.add_placements();
      if (o.kind() != "tensor") {
        p->set_inline_data(true);
        continue;
      }
      pb::SegmentRange* r = p->mutable_segment();
      r->set_segment_id(seg.id);
      r->set_offset(offset);
      r->set_length(o.tensor().nbytes());
      offset += (o.tensor().nbytes() + 63) / 64 * 64;
    }
  }
  pb::RunResponse resp;
  for (int c = 0; c < calls; ++c) {
    resp.Clear();
    grpc::Status s = client.run(run, &resp);
    if (!s.ok()) return fail("Run", s);
  }
  for (int i = 0; i < resp.outputs_size(); ++i) {
    const pb::Value& v = resp.outputs(i);
    const std::string path = out_dir + "/" + std::to_string(i) + ".npy";
    et::Status st;
    if (v.has_tensor()) {
      const pb::Tensor& t = v.tensor();
      std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
      const uint8_t* data = t.has_segment()
                                ? seg.data + t.segment().offset()
                                : reinterpret_cast<const uint8_t*>(t.inline_data().data());
      const size_t nbytes = t.has_segment() ? t.segment().length() : t.inline_data().size();
      std::vector<uint8_t> dim_order(t.dim_order().begin(), t.dim_order().end());
      if (dim_order.size() != sizes.size()) dim_order = identity(sizes.size());
      const std::vector<uint8_t> c_order =
          relayout(data, nbytes, et::element_size(scalar_type(t.dtype())), sizes, dim_order,
                   identity(sizes.size()));
      st = et::tools::write_npy(path, scalar_type(t.dtype()), sizes, c_order.data());
    } else if (v.kind_case() == pb::Value::kIntValue) {
      const int64_t x = v.int_value();
      st = et::tools::write_npy(path, et::ScalarType::kLong, {}, &x);
    } else if (v.kind_case() == pb::Value::kDoubleValue) {
      const double x = v.double_value();
      st = et::tools::write_npy(path, et::ScalarType::kDouble, {}, &x);
    } else if (v.kind_case() == pb::Value::kBoolValue) {
      const bool x = v.bool_value();
      st = et::tools::write_npy(path, et::ScalarType::kBool, {}, &x);
    }
    if (!st.ok()) {
      std::fprintf(stderr, "et-daemon-run: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "et-daemon-run: %d output(s) written to %s\n", resp.outputs_size(),
               out_dir.c_str());
  return 0;
}
