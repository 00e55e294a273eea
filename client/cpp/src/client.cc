#include "etclient/client.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "arena.h"
#include "et_serverd.grpc.pb.h"
#include "proto/fd_protocol.h"
#include "proto/sha256.h"

namespace etclient {

namespace pb = ::etserver::v1;

// The connection, the session (held open by its stream) and the shared-memory arena.
class ClientImpl {
 public:
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::EtServer::Stub> stub;
  grpc::ClientContext session_ctx;
  std::unique_ptr<grpc::ClientReaderWriter<pb::SessionClientMessage, pb::SessionServerMessage>>
      stream;
  std::string session, fd_socket;
  std::shared_ptr<Arena> arena;

  ~ClientImpl() {
    if (stream) {
      stream->WritesDone();
      (void)stream->Finish();
    }
  }
};

namespace {

constexpr size_t kInlineProgramBytes = size_t{1} << 20;  // larger programs go through shm

Status from_grpc(const grpc::Status& s) {
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
      return Status();
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status(StatusCode::kInvalidArgument, s.error_message());
    case grpc::StatusCode::NOT_FOUND:
      return Status(StatusCode::kNotFound, s.error_message());
    case grpc::StatusCode::UNIMPLEMENTED:
      return Status(StatusCode::kUnimplemented, s.error_message());
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Status(StatusCode::kResourceExhausted, s.error_message());
    case grpc::StatusCode::OUT_OF_RANGE:
      return Status(StatusCode::kOutOfRange, s.error_message());
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Status(StatusCode::kFailedPrecondition, s.error_message());
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status(StatusCode::kDeadlineExceeded, s.error_message());
    case grpc::StatusCode::UNAVAILABLE:
      return Status(StatusCode::kUnavailable, "et-serverd is unavailable: " + s.error_message());
    default:
      return Status(StatusCode::kInternal, s.error_message());
  }
}

pb::DataType to_proto(DType t) { return static_cast<pb::DataType>(static_cast<int>(t) + 1); }
DType from_proto(pb::DataType t) {
  return static_cast<DType>(std::max(0, static_cast<int>(t) - 1));
}

MethodMeta from_proto(const pb::MethodMeta& m) {
  MethodMeta out;
  out.name = m.name();
  auto values = [](const auto& list, std::vector<ValueMeta>& dst) {
    for (const pb::ValueMeta& v : list) {
      ValueMeta meta;
      meta.kind = v.kind();
      if (v.has_tensor()) {
        TensorMeta t;
        t.dtype = from_proto(v.tensor().dtype());
        t.sizes.assign(v.tensor().sizes().begin(), v.tensor().sizes().end());
        t.dim_order.assign(v.tensor().dim_order().begin(), v.tensor().dim_order().end());
        t.nbytes = v.tensor().nbytes();
        t.memory_planned = v.tensor().memory_planned();
        t.dynamic = v.tensor().dynamic();
        meta.tensor = std::move(t);
      }
      dst.push_back(std::move(meta));
    }
  };
  values(m.inputs(), out.inputs);
  values(m.outputs(), out.outputs);
  out.operators.assign(m.operators().begin(), m.operators().end());
  out.backends.assign(m.backends().begin(), m.backends().end());
  return out;
}

std::string default_socket() {
  if (const char* env = std::getenv("ETSERVER_SOCKET"); env && *env) return env;
  if (const char* dir = std::getenv("XDG_RUNTIME_DIR"); dir && *dir) {
    return std::string(dir) + "/et-serverd.sock";
  }
  return "/tmp/et-serverd-" + std::to_string(getuid()) + ".sock";
}

}  // namespace

size_t element_size(DType type) {
  switch (type) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
  }
  return 1;
}

const char* dtype_name(DType type) {
  static const char* kNames[] = {"uint8",   "int8",    "int16",   "int32", "int64",
                                 "float16", "float32", "float64", "bool",  "bfloat16"};
  return kNames[static_cast<int>(type)];
}

size_t SharedTensor::numel() const {
  size_t n = 1;
  for (int64_t s : sizes_) n *= static_cast<size_t>(s);
  return n;
}

std::vector<int64_t> SharedTensor::strides() const {
  std::vector<int64_t> strides(sizes_.size(), 1);
  std::vector<uint32_t> order = dim_order_;
  if (order.size() != sizes_.size()) {
    order.resize(sizes_.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint32_t>(d);
  }
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = stride;
    stride *= std::max<int64_t>(1, sizes_[order[i]]);
  }
  return strides;
}

std::vector<int64_t> SharedTensor::byte_strides() const {
  std::vector<int64_t> s = strides();
  for (int64_t& x : s) x *= static_cast<int64_t>(element_size(dtype_));
  return s;
}

Result<std::shared_ptr<Client>> Client::connect(const Options& options) {
  auto impl = std::make_shared<ClientImpl>();
  const std::string socket = options.socket.empty() ? default_socket() : options.socket;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  impl->channel =
      grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
  impl->stub = pb::EtServer::NewStub(impl->channel);
  impl->stream = impl->stub->OpenSession(&impl->session_ctx);
  pb::SessionClientMessage hello;
  hello.set_client_name(options.client_name);
  pb::SessionServerMessage welcome;
  if (!impl->stream->Write(hello) || !impl->stream->Read(&welcome)) {
    grpc::Status s = impl->stream->Finish();
    impl->stream.reset();
    return Status(StatusCode::kUnavailable,
                  "cannot open a session with et-serverd on " + socket + ": " + s.error_message() +
                      " (is the daemon running? start it with et-serverd --socket " + socket + ")");
  }
  impl->session = welcome.session();
  impl->fd_socket = welcome.fd_socket();
  impl->arena = std::make_shared<Arena>(impl->fd_socket, impl->session);
  return std::shared_ptr<Client>(new Client(std::move(impl)));
}

Client::~Client() = default;

Result<std::shared_ptr<Program>> Client::load_program(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "cannot read " + path);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return load_program_bytes(bytes);
}

Result<std::shared_ptr<Program>> Client::load_program_bytes(std::span<const uint8_t> bytes) {
  pb::LoadProgramRequest req;
  req.set_session(impl_->session);
  req.set_sha256(etserver::sha256_hex(bytes));
  pb::LoadProgramResponse resp;
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    s = impl_->stub->LoadProgram(&ctx, req, &resp);
  }
  std::shared_ptr<void> slot_handle;
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
    if (bytes.size() <= kInlineProgramBytes) {
      req.set_program_bytes(bytes.data(), bytes.size());
    } else {
      auto slot = impl_->arena->allocate(bytes.size());
      if (!slot.ok()) return slot.status();
      std::memcpy(slot->first.data, bytes.data(), bytes.size());
      req.mutable_segment()->set_segment_id(slot->first.segment_id);
      req.mutable_segment()->set_offset(slot->first.offset);
      req.mutable_segment()->set_length(bytes.size());
      slot_handle = slot->second;
    }
    grpc::ClientContext ctx;
    s = impl_->stub->LoadProgram(&ctx, req, &resp);
  }
  if (!s.ok()) return from_grpc(s);
  auto program = std::make_shared<Program>();
  program->client_ = impl_;
  program->id_ = resp.program_id();
  program->sha256_ = resp.sha256();
  for (const pb::MethodMeta& m : resp.info().methods()) program->methods_.push_back(from_proto(m));
  return program;
}

Result<SharedTensor> Client::empty(DType dtype, std::vector<int64_t> sizes) {
  size_t numel = 1;
  for (int64_t s : sizes) {
    if (s < 0) return Status(StatusCode::kInvalidArgument, "empty: negative size");
    numel *= static_cast<size_t>(s);
  }
  auto slot = impl_->arena->allocate(numel * element_size(dtype));
  if (!slot.ok()) return slot.status();
  SharedTensor t;
  t.slot_ = slot->second;
  t.data_ = slot->first.data;
  t.segment_id_ = slot->first.segment_id;
  t.offset_ = slot->first.offset;
  t.capacity_ = slot->first.size;
  t.dtype_ = dtype;
  t.sizes_ = std::move(sizes);
  return t;
}

Result<std::unique_ptr<Method>> Program::load_method(const std::string& name) {
  pb::LoadMethodRequest req;
  req.set_session(client_->session);
  req.set_program_id(id_);
  req.set_method_name(name);
  pb::LoadMethodResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = client_->stub->LoadMethod(&ctx, req, &resp);
  if (!s.ok()) return from_grpc(s);
  return std::unique_ptr<Method>(
      new Method(client_, resp.method_handle(), from_proto(resp.meta())));
}

Method::~Method() {
  pb::DropMethodRequest req;
  req.set_session(client_->session);
  req.set_method_handle(handle_);
  pb::DropMethodResponse resp;
  grpc::ClientContext ctx;
  (void)client_->stub->DropMethod(&ctx, req, &resp);
}

using OutputSlots = std::vector<std::pair<Slot, std::shared_ptr<void>>>;

// Request and response encoding shared by the calls of Method (friend of SharedTensor).
struct Wire {
  static Status encode_inputs(ClientImpl& client, const std::vector<Input>& inputs,
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
        if (!h->strides.empty()) {
          return Status(StatusCode::kInvalidArgument,
                        "inputs[" + std::to_string(i) +
                            "]: strided host tensors are not supported yet; pass a contiguous one");
        }
        size_t numel = 1;
        for (int64_t s : h->sizes) numel *= static_cast<size_t>(std::max<int64_t>(0, s));
        // Copied once into shared memory; the daemon reads it there.
        auto slot = client.arena->allocate(numel * element_size(h->dtype));
        if (!slot.ok()) return slot.status();
        if (numel) std::memcpy(slot->first.data, h->data, numel * element_size(h->dtype));
        held.push_back(slot->second);
        shared.segment_id_ = slot->first.segment_id;
        shared.offset_ = slot->first.offset;
        shared.dtype_ = h->dtype;
        shared.sizes_ = h->sizes;
      } else {
        shared = std::get<SharedTensor>(inputs[i]);
        held.push_back(shared.slot_);  // the daemon may keep pointing at it
      }
      pb::Tensor* t = v->mutable_tensor();
      t->set_dtype(to_proto(shared.dtype_));
      for (int64_t s : shared.sizes_) t->add_sizes(s);
      for (uint32_t axis : shared.dim_order_) t->add_dim_order(axis);
      t->mutable_segment()->set_segment_id(shared.segment_id_);
      t->mutable_segment()->set_offset(shared.offset_);
      t->mutable_segment()->set_length(shared.nbytes());
    }
    return Status();
  }

  // Fresh output slots for every call: results already returned are never rewritten.
  static Result<OutputSlots> place_outputs(
      ClientImpl& client, const MethodMeta& meta,
      google::protobuf::RepeatedPtrField<pb::OutputPlacement>& placements) {
    OutputSlots outs;
    for (const ValueMeta& o : meta.outputs) {
      pb::OutputPlacement* p = placements.Add();
      if (!o.tensor) {
        p->set_inline_data(true);
        outs.emplace_back();
        continue;
      }
      auto slot = client.arena->allocate(o.tensor->nbytes);
      if (!slot.ok()) return slot.status();
      p->mutable_segment()->set_segment_id(slot->first.segment_id);
      p->mutable_segment()->set_offset(slot->first.offset);
      p->mutable_segment()->set_length(slot->first.size);
      outs.push_back(std::move(slot).value());
    }
    return outs;
  }

  static std::vector<SharedTensor> decode_outputs(
      const google::protobuf::RepeatedPtrField<pb::Value>& values, OutputSlots& outs) {
    std::vector<SharedTensor> results;
    for (int i = 0; i < values.size(); ++i) {
      const pb::Value& v = values[i];
      SharedTensor r;
      if (v.has_tensor() && v.tensor().has_segment()) {
        auto& [slot, handle] = outs[static_cast<size_t>(i)];
        r.slot_ = handle;
        r.data_ = slot.data;
        r.segment_id_ = v.tensor().segment().segment_id();
        r.offset_ = v.tensor().segment().offset();
        r.capacity_ = slot.size;
        r.dtype_ = from_proto(v.tensor().dtype());
        r.sizes_.assign(v.tensor().sizes().begin(), v.tensor().sizes().end());
        r.dim_order_.assign(v.tensor().dim_order().begin(), v.tensor().dim_order().end());
      }
      results.push_back(std::move(r));
    }
    return results;
  }
};

Result<std::vector<SharedTensor>> Method::execute(const std::vector<Input>& inputs) {
  pb::RunRequest req;
  req.set_session(client_->session);
  req.set_method_handle(handle_);
  std::vector<std::shared_ptr<void>> held;
  if (Status s = Wire::encode_inputs(*client_, inputs, *req.mutable_inputs(), held); !s.ok()) {
    return s;
  }
  auto outs = Wire::place_outputs(*client_, meta_, *req.mutable_placements());
  if (!outs.ok()) return outs.status();
  pb::RunResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = client_->stub->Run(&ctx, req, &resp);
  if (!s.ok()) return from_grpc(s);
  held_inputs_ = std::move(held);  // an unplanned input stays bound to its slot
  return Wire::decode_outputs(resp.outputs(), *outs);
}

Status Method::set_inputs(const std::vector<Input>& inputs) {
  pb::SetInputsRequest req;
  req.set_session(client_->session);
  req.set_method_handle(handle_);
  std::vector<std::shared_ptr<void>> held;
  if (Status s = Wire::encode_inputs(*client_, inputs, *req.mutable_inputs(), held); !s.ok()) {
    return s;
  }
  pb::SetInputsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = client_->stub->SetInputs(&ctx, req, &resp);
  held_inputs_ = std::move(held);
  return from_grpc(s);
}

Status Method::execute() {
  pb::ExecuteRequest req;
  req.set_session(client_->session);
  req.set_method_handle(handle_);
  pb::ExecuteResponse resp;
  grpc::ClientContext ctx;
  return from_grpc(client_->stub->Execute(&ctx, req, &resp));
}

Result<std::vector<SharedTensor>> Method::outputs() {
  pb::GetOutputsRequest req;
  req.set_session(client_->session);
  req.set_method_handle(handle_);
  auto outs = Wire::place_outputs(*client_, meta_, *req.mutable_placements());
  if (!outs.ok()) return outs.status();
  pb::GetOutputsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = client_->stub->GetOutputs(&ctx, req, &resp);
  if (!s.ok()) return from_grpc(s);
  return Wire::decode_outputs(resp.outputs(), *outs);
}

}  // namespace etclient
