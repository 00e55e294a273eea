#include "server/kserve/grpc_service.h"

#include <fmt/format.h>

#include "server/kserve/infer.h"
#include "server/metrics/call_scope.h"
#include "server/transport/grpc/call_bounds.h"
#include "server/transport/grpc/et_service.h"

namespace et::server::kserve {
namespace {

// The config's name of a datatype: "TYPE_" and its KServe name ("TYPE_FP32").
inference::DataType config_type(const TensorSpec& t) {
  inference::DataType type = inference::TYPE_INVALID;
  (void)inference::DataType_Parse("TYPE_" + t.datatype, &type);
  return type;
}

void set(inference::StatisticDuration& out, const DurationStat& d) {
  out.set_count(d.count);
  out.set_ns(d.ns);
}

}  // namespace

void describe(const Model& model, inference::ModelMetadataResponse& out) {
  out.set_name(model.name());
  out.add_versions(model.version());
  out.set_platform("executorch_pte");
  for (const TensorSpec& t : model.inputs()) {
    auto& m = *out.add_inputs();
    m.set_name(t.name);
    m.set_datatype(t.datatype);
    for (int64_t d : t.shape) m.add_shape(d);
  }
  for (const TensorSpec& t : model.outputs()) {
    auto& m = *out.add_outputs();
    m.set_name(t.name);
    m.set_datatype(t.datatype);
    for (int64_t d : t.shape) m.add_shape(d);
  }
}

void configure(const Model& model, inference::ModelConfig& out) {
  out.set_name(model.name());
  out.set_platform("executorch_pte");
  out.set_backend("et-serverd");
  out.set_max_batch_size(0);
  // The file the program came from: NAME.pte (flat layout) or model.pte (Triton's).
  const std::string& file = model.program()->name;
  out.set_default_model_filename(file.ends_with(".pte") || file.ends_with(".bpte") ? file
                                                                                   : "model.pte");
  for (const TensorSpec& t : model.inputs()) {
    auto& m = *out.add_input();
    m.set_name(t.name);
    m.set_data_type(config_type(t));
    for (int64_t d : t.shape) m.add_dims(d);
  }
  for (const TensorSpec& t : model.outputs()) {
    auto& m = *out.add_output();
    m.set_name(t.name);
    m.set_data_type(config_type(t));
    for (int64_t d : t.shape) m.add_dims(d);
  }
  auto& group = *out.add_instance_group();
  group.set_name(model.name());
  group.set_count(1);
  group.set_kind(inference::ModelInstanceGroup::KIND_CPU);
  auto& params = *out.mutable_parameters();
  params["method"].set_string_value(model.method());
  params["program_sha256"].set_string_value(model.program()->sha256);
  // The upper bounds of dynamically shaped tensors, which -1 stands for in the dims.
  for (const auto* list : {&model.inputs(), &model.outputs()}) {
    for (const TensorSpec& t : *list) {
      if (t.shape == t.max_shape) continue;
      std::string bounds;
      for (int64_t d : t.max_shape) bounds += (bounds.empty() ? "" : ",") + std::to_string(d);
      params["max_shape." + t.name].set_string_value(bounds);
    }
  }
}

void fill_statistics(const Model& model, inference::ModelStatistics& out) {
  const ModelStats st = model.stats();
  out.set_name(model.name());
  out.set_version(model.version());
  out.set_last_inference(st.last_inference_ms);
  out.set_inference_count(st.inference_count);
  out.set_execution_count(st.execution_count);
  auto& s = *out.mutable_inference_stats();
  set(*s.mutable_success(), st.success);
  set(*s.mutable_fail(), st.fail);
  set(*s.mutable_queue(), st.queue);
  set(*s.mutable_compute_input(), st.compute_input);
  set(*s.mutable_compute_infer(), st.compute_infer);
  set(*s.mutable_compute_output(), st.compute_output);
}

Result<Peer> GrpcKServeService::peer_of(const Ctx* ctx) const {
  if (!s_.listener) return permission_denied("this transport cannot tell who is calling");
  return s_.listener->identify(ctx->peer());
}

grpc::Status GrpcKServeService::ServerLive(Ctx*, const inference::ServerLiveRequest*,
                                           inference::ServerLiveResponse* resp) {
  resp->set_live(true);
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ServerReady(Ctx*, const inference::ServerReadyRequest*,
                                            inference::ServerReadyResponse* resp) {
  resp->set_ready(s_.core.ready());
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ModelReady(Ctx*, const inference::ModelReadyRequest* req,
                                           inference::ModelReadyResponse* resp) {
  resp->set_ready(s_.models.find(req->name(), req->version()).ok());
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ServerMetadata(Ctx*, const inference::ServerMetadataRequest*,
                                               inference::ServerMetadataResponse* resp) {
  resp->set_name("et-serverd");
  resp->set_version(Core::version());
  for (const char* e : {"model_repository", "schedule_policy", "model_configuration",
                        "system_shared_memory", "cuda_shared_memory", "statistics"}) {
    resp->add_extensions(e);
  }
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ModelMetadata(Ctx*, const inference::ModelMetadataRequest* req,
                                              inference::ModelMetadataResponse* resp) {
  auto model = s_.models.find(req->name(), req->version());
  if (!model.ok()) return to_grpc(model.status());
  describe(**model, *resp);
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ModelConfig(Ctx*, const inference::ModelConfigRequest* req,
                                            inference::ModelConfigResponse* resp) {
  auto model = s_.models.find(req->name(), req->version());
  if (!model.ok()) return to_grpc(model.status());
  configure(**model, *resp->mutable_config());
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ModelInfer(Ctx* ctx, const inference::ModelInferRequest* req,
                                           inference::ModelInferResponse* resp) {
  // Who is calling, asked now: once this connection closes, its descriptor number may
  // go to a later connection of someone else.
  metrics::CallScope scope(&s_.core.metrics(), metrics::Transport::kKServeGrpc);
  const Result<Peer> peer = peer_of(ctx);
  InferContext ic{
      s_.core,    s_.models,           s_.system_shm, s_.cuda_shm, [&peer] { return peer; },
      cancelled_, call_bounds_of(*ctx)};
  grpc::Status answer = to_grpc(infer(ic, *req, *resp));
  scope.set_code(answer.error_code());
  return answer;
}

grpc::Status GrpcKServeService::ModelStreamInfer(
    Ctx* ctx,
    grpc::ServerReaderWriter<inference::ModelStreamInferResponse, inference::ModelInferRequest>*
        stream) {
  const Result<Peer> peer = peer_of(ctx);  // now (see ModelInfer)
  InferContext ic{
      s_.core,    s_.models,           s_.system_shm, s_.cuda_shm, [&peer] { return peer; },
      cancelled_, call_bounds_of(*ctx)};
  inference::ModelInferRequest req;
  while (!cancelled_ && stream->Read(&req)) {
    inference::ModelStreamInferResponse out;
    metrics::CallScope scope(&s_.core.metrics(), metrics::Transport::kKServeGrpc);
    Status st = infer(ic, req, *out.mutable_infer_response());
    scope.set_code(to_grpc(st).error_code());
    if (!st.ok()) {
      // The stream goes on: the error answers this request only (as Triton does).
      out.Clear();
      out.set_error_message(st.to_string());
      out.mutable_infer_response()->set_id(req.id());
      out.mutable_infer_response()->set_model_name(req.model_name());
      out.mutable_infer_response()->set_model_version(req.model_version());
    }
    if (!stream->Write(out)) break;
  }
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::ModelStatistics(Ctx*, const inference::ModelStatisticsRequest* req,
                                                inference::ModelStatisticsResponse* resp) {
  if (!req->name().empty()) {
    auto model = s_.models.find(req->name(), req->version());
    if (!model.ok()) return to_grpc(model.status());
    fill_statistics(**model, *resp->add_model_stats());
    return grpc::Status::OK;
  }
  for (const auto& m : s_.models.ready()) fill_statistics(*m, *resp->add_model_stats());
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::RepositoryIndex(Ctx*, const inference::RepositoryIndexRequest* req,
                                                inference::RepositoryIndexResponse* resp) {
  for (const auto& e : s_.models.index()) {
    if (req->ready() && e.state != "READY") continue;
    auto& m = *resp->add_models();
    m.set_name(e.name);
    m.set_version(e.version);
    m.set_state(e.state);
    m.set_reason(e.reason);
  }
  return grpc::Status::OK;
}

Status GrpcKServeService::local_only(const Ctx* ctx, const char* call) const {
  auto peer = peer_of(ctx);
  if (peer.ok() && peer->local) return Status();
  return permission_denied(
      fmt::format("{}: only clients on this machine may load and unload models", call));
}

grpc::Status GrpcKServeService::RepositoryModelLoad(
    Ctx* ctx, const inference::RepositoryModelLoadRequest* req,
    inference::RepositoryModelLoadResponse*) {
  if (Status st = local_only(ctx, "RepositoryModelLoad"); !st.ok()) return to_grpc(st);
  if (!req->parameters().empty()) {
    return to_grpc(not_supported(
        "RepositoryModelLoad: parameters (a config or files sent with the request) are not "
        "supported; put NAME.pte in the --models directory and load it by name"));
  }
  return to_grpc(s_.models.load(req->model_name()));
}

grpc::Status GrpcKServeService::RepositoryModelUnload(
    Ctx* ctx, const inference::RepositoryModelUnloadRequest* req,
    inference::RepositoryModelUnloadResponse*) {
  if (Status st = local_only(ctx, "RepositoryModelUnload"); !st.ok()) return to_grpc(st);
  return to_grpc(s_.models.unload(req->model_name()));
}

grpc::Status GrpcKServeService::SystemSharedMemoryStatus(
    Ctx* ctx, const inference::SystemSharedMemoryStatusRequest* req,
    inference::SystemSharedMemoryStatusResponse* resp) {
  auto peer = peer_of(ctx);
  if (!peer.ok()) return to_grpc(peer.status());
  auto regions = s_.system_shm.list(*peer, req->name());
  if (!regions.ok()) return to_grpc(regions.status());
  for (const auto& r : *regions) {
    auto& out = (*resp->mutable_regions())[r->name()];
    out.set_name(r->name());
    out.set_key(r->key());
    out.set_offset(r->offset());
    out.set_byte_size(r->byte_size());
  }
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::SystemSharedMemoryRegister(
    Ctx* ctx, const inference::SystemSharedMemoryRegisterRequest* req,
    inference::SystemSharedMemoryRegisterResponse*) {
  auto peer = peer_of(ctx);
  if (!peer.ok()) return to_grpc(peer.status());
  return to_grpc(
      s_.system_shm.add(*peer, req->name(), req->key(), req->offset(), req->byte_size()));
}

grpc::Status GrpcKServeService::SystemSharedMemoryUnregister(
    Ctx* ctx, const inference::SystemSharedMemoryUnregisterRequest* req,
    inference::SystemSharedMemoryUnregisterResponse*) {
  auto peer = peer_of(ctx);
  if (!peer.ok()) return to_grpc(peer.status());
  return to_grpc(s_.system_shm.remove(*peer, req->name()));
}

grpc::Status GrpcKServeService::CudaSharedMemoryStatus(
    Ctx* ctx, const inference::CudaSharedMemoryStatusRequest* req,
    inference::CudaSharedMemoryStatusResponse* resp) {
  auto peer = peer_of(ctx);
  if (!peer.ok()) return to_grpc(peer.status());
  auto regions = s_.cuda_shm.list(*peer, req->name());
  if (!regions.ok()) return to_grpc(regions.status());
  for (const auto& r : *regions) {
    auto& out = (*resp->mutable_regions())[r->name()];
    out.set_name(r->name());
    out.set_device_id(static_cast<uint64_t>(r->device_id));
    out.set_byte_size(r->byte_size());
  }
  return grpc::Status::OK;
}

grpc::Status GrpcKServeService::CudaSharedMemoryRegister(
    Ctx* ctx, const inference::CudaSharedMemoryRegisterRequest* req,
    inference::CudaSharedMemoryRegisterResponse*) {
  auto peer = peer_of(ctx);
  if (!peer.ok()) return to_grpc(peer.status());
  return to_grpc(
      s_.cuda_shm.add(*peer, req->name(), req->raw_handle(), req->device_id(), req->byte_size()));
}

grpc::Status GrpcKServeService::CudaSharedMemoryUnregister(
    Ctx* ctx, const inference::CudaSharedMemoryUnregisterRequest* req,
    inference::CudaSharedMemoryUnregisterResponse*) {
  auto peer = peer_of(ctx);
  if (!peer.ok()) return to_grpc(peer.status());
  return to_grpc(s_.cuda_shm.remove(*peer, req->name()));
}

}  // namespace et::server::kserve
