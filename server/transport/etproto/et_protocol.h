// The et protocol (proto/et_serverd.proto) over the core: each call's request message
// decoded into the core's types, its answer encoded into the response message. Both of
// the protocol's transports go through it, so they check and fail alike: gRPC
// (server/transport/grpc/et_service.cc) and the fast path's shared-memory channels
// (server/transport/ring/).
//
// Thread-safety: as the core's; it keeps no state of its own.
#pragma once

#include <functional>

#include "et_serverd.pb.h"
#include "server/core/core.h"
#include "server/transport/etproto/value_codec.h"

namespace et::server {

class EtProtocol {
 public:
  explicit EtProtocol(Core& core) : core_(core) {}

  Core& core() { return core_; }

  // The calls of the protocol (proto/et_serverd.proto documents each).
  Status load_program(const pb::LoadProgramRequest& req, pb::LoadProgramResponse& resp);
  Status list_programs(const pb::ListProgramsRequest& req, pb::ListProgramsResponse& resp);
  Status describe_program(const pb::DescribeProgramRequest& req, pb::DescribeProgramResponse& resp);
  Status unload_program(const pb::UnloadProgramRequest& req);
  // Runs a bundled program's test cases (Core::verify_program).
  Status verify_program(const pb::VerifyProgramRequest& req, pb::VerifyProgramResponse& resp);
  Status load_method(const pb::LoadMethodRequest& req, pb::LoadMethodResponse& resp);
  Status drop_method(const pb::DropMethodRequest& req);
  // A method's calls, bounded by the caller's deadline and presence when the transport
  // knows them (CallBounds in server/core/call.h).
  Status set_inputs(const pb::SetInputsRequest& req, const CallBounds& bounds = {});
  Status execute(const pb::ExecuteRequest& req, pb::ExecuteResponse& resp,
                 const CallBounds& bounds = {});
  Status get_outputs(const pb::GetOutputsRequest& req, pb::GetOutputsResponse& resp,
                     const CallBounds& bounds = {});
  Status run(const pb::RunRequest& req, pb::RunResponse& resp, const CallBounds& bounds = {});
  // Prefill and decode (GenerateWork in server/core/call.h); `write` sends each reply
  // (the tokens chosen since the last one, then the stats) and returns false when the
  // caller went away, which stops the generation.
  Status generate(const pb::GenerateRequest& req,
                  const std::function<bool(const pb::GenerateResponse&)>& write);
  // NotFound naming the method's attributes when it has no attribute of that name.
  Status get_attribute(const pb::GetAttributeRequest& req, pb::GetAttributeResponse& resp,
                       const CallBounds& bounds = {});
  // Profiles the method's executes from now on (InvalidArgument for max_executes above
  // 100000); starting again discards what was recorded.
  Status start_profile(const pb::StartProfileRequest& req);
  // FailedPrecondition when the method is not being profiled.
  Status stop_profile(const pb::StopProfileRequest& req, pb::StopProfileResponse& resp);
  Status drop_segment(const pb::DropSegmentRequest& req);
  // `show_counts` false (a TCP peer, or a local user the daemon does not serve): the
  // version and uptime only, not the counts of everyone's sessions and memory.
  // `with_registry`: also the operators and backends it registers (for anyone).
  Status server_status(pb::ServerStatusResponse& resp, bool show_counts = true,
                       bool with_registry = false) const;

 private:
  Status fill_program_info(const SessionProgram& p, pb::ProgramInfo& out) const;

  Core& core_;
};

}  // namespace et::server
