// The KServe v2 gRPC service (inference.GRPCInferenceService) on Core: the one
// place where the KServe side turns et::Status into gRPC status codes (the same
// mapping as et-serverd's own protocol).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>

#include "kserve_v2.grpc.pb.h"
#include "server/core/core.h"
#include "server/kserve/cuda_shm.h"
#include "server/kserve/model_catalog.h"
#include "server/kserve/shm_registry.h"
#include "server/transport/listener.h"

namespace et::server::kserve {

// What the KServe services share: the models, the clients' regions, and who is
// connected (the listeners).
struct KServeState {
  Core& core;
  ModelCatalog& models;
  ShmRegistry& system_shm;
  CudaShmRegistry& cuda_shm;
  const Listener* listener = nullptr;  // identifies "fd:N" peers
};

class GrpcKServeService final : public inference::GRPCInferenceService::Service {
 public:
  explicit GrpcKServeService(KServeState state) : s_(state) {}
  // Running calls stop at their next instruction (shutdown).
  void cancel_all() { cancelled_ = true; }

  using Ctx = grpc::ServerContext;
  grpc::Status ServerLive(Ctx*, const inference::ServerLiveRequest*,
                          inference::ServerLiveResponse*) override;
  grpc::Status ServerReady(Ctx*, const inference::ServerReadyRequest*,
                           inference::ServerReadyResponse*) override;
  grpc::Status ModelReady(Ctx*, const inference::ModelReadyRequest*,
                          inference::ModelReadyResponse*) override;
  grpc::Status ServerMetadata(Ctx*, const inference::ServerMetadataRequest*,
                              inference::ServerMetadataResponse*) override;
  grpc::Status ModelMetadata(Ctx*, const inference::ModelMetadataRequest*,
                             inference::ModelMetadataResponse*) override;
  grpc::Status ModelConfig(Ctx*, const inference::ModelConfigRequest*,
                           inference::ModelConfigResponse*) override;
  grpc::Status ModelInfer(Ctx*, const inference::ModelInferRequest*,
                          inference::ModelInferResponse*) override;
  grpc::Status ModelStreamInfer(
      Ctx*,
      grpc::ServerReaderWriter<inference::ModelStreamInferResponse, inference::ModelInferRequest>*
          stream) override;
  grpc::Status ModelStatistics(Ctx*, const inference::ModelStatisticsRequest*,
                               inference::ModelStatisticsResponse*) override;
  grpc::Status RepositoryIndex(Ctx*, const inference::RepositoryIndexRequest*,
                               inference::RepositoryIndexResponse*) override;
  grpc::Status RepositoryModelLoad(Ctx*, const inference::RepositoryModelLoadRequest*,
                                   inference::RepositoryModelLoadResponse*) override;
  grpc::Status RepositoryModelUnload(Ctx*, const inference::RepositoryModelUnloadRequest*,
                                     inference::RepositoryModelUnloadResponse*) override;
  grpc::Status SystemSharedMemoryStatus(Ctx*, const inference::SystemSharedMemoryStatusRequest*,
                                        inference::SystemSharedMemoryStatusResponse*) override;
  grpc::Status SystemSharedMemoryRegister(Ctx*, const inference::SystemSharedMemoryRegisterRequest*,
                                          inference::SystemSharedMemoryRegisterResponse*) override;
  grpc::Status SystemSharedMemoryUnregister(
      Ctx*, const inference::SystemSharedMemoryUnregisterRequest*,
      inference::SystemSharedMemoryUnregisterResponse*) override;
  grpc::Status CudaSharedMemoryStatus(Ctx*, const inference::CudaSharedMemoryStatusRequest*,
                                      inference::CudaSharedMemoryStatusResponse*) override;
  grpc::Status CudaSharedMemoryRegister(Ctx*, const inference::CudaSharedMemoryRegisterRequest*,
                                        inference::CudaSharedMemoryRegisterResponse*) override;
  grpc::Status CudaSharedMemoryUnregister(Ctx*, const inference::CudaSharedMemoryUnregisterRequest*,
                                          inference::CudaSharedMemoryUnregisterResponse*) override;

 private:
  Result<Peer> peer_of(const Ctx* ctx) const;
  // PermissionDenied unless the caller is on this machine (repository changes).
  Status local_only(const Ctx* ctx, const char* call) const;
  KServeState s_;
  std::atomic<bool> cancelled_{false};
};

// The ModelMetadata and ModelConfig of `model` (shared with the HTTP service).
void describe(const Model& model, inference::ModelMetadataResponse& out);
void configure(const Model& model, inference::ModelConfig& out);
void fill_statistics(const Model& model, inference::ModelStatistics& out);

}  // namespace et::server::kserve
