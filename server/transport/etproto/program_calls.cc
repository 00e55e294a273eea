// The et protocol's calls that manage a session's programs, methods and segments, and
// the daemon's status: each a core call, its answer filled into the response message.
#include "proto/protocol_version.h"
#include "runtime/core/backend.h"
#include "runtime/core/kernel.h"
#include "server/transport/etproto/et_protocol.h"

namespace et::server {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

SegmentRange range_of(const pb::SegmentRange& ref) {
  return {ref.segment_id(), ref.offset(), ref.length()};
}

}  // namespace

Status EtProtocol::fill_program_info(const SessionProgram& sp, pb::ProgramInfo& out) const {
  const SharedProgram& p = *sp.program;
  out.set_program_id(sp.id);
  out.set_sha256(p.sha256);
  out.set_size_bytes(p.size_bytes);
  out.set_data_sha256(p.data_sha256);
  out.set_data_size_bytes(p.data_size_bytes);
  out.set_name(p.name);
  for (const std::string& name : p.program->method_names()) {
    ET_ASSIGN_OR_RETURN(const MethodMeta* meta, p.program->method_meta(name));
    to_proto(*meta, *out.add_methods());
  }
  if (const auto& tests = p.program->bundled_tests()) {
    for (const BundledMethodSuite& suite : tests->suites) {
      pb::BundledSuite& entry = *out.add_bundled_tests();
      entry.set_method_name(suite.method);
      entry.set_cases(static_cast<uint32_t>(suite.cases.size()));
    }
  }
  return Status();
}

Status EtProtocol::load_program(const pb::LoadProgramRequest& req, pb::LoadProgramResponse& resp) {
  ProgramSource source;
  source.sha256 = req.sha256();
  source.data_sha256 = req.data_sha256();
  switch (req.source_case()) {
    case pb::LoadProgramRequest::SOURCE_NOT_SET:
      source.program = ProgramByHash{};
      break;
    case pb::LoadProgramRequest::kPreloadedName:
      source.program = ProgramByName{req.preloaded_name()};
      break;
    case pb::LoadProgramRequest::kProgramBytes:
      source.program = ByteSource(bytes_of(req.program_bytes()));
      break;
    case pb::LoadProgramRequest::kSegment:
      source.program = ByteSource(range_of(req.segment()));
      break;
  }
  switch (req.data_source_case()) {
    case pb::LoadProgramRequest::DATA_SOURCE_NOT_SET:
      break;
    case pb::LoadProgramRequest::kDataBytes:
      source.data = ByteSource(bytes_of(req.data_bytes()));
      break;
    case pb::LoadProgramRequest::kDataSegment:
      source.data = ByteSource(range_of(req.data_segment()));
      break;
  }
  ET_ASSIGN_OR_RETURN(Core::LoadedProgram loaded, core_.load_program(req.session(), source));
  resp.set_program_id(loaded.program.id);
  resp.set_sha256(loaded.program.program->sha256);
  resp.set_already_loaded(loaded.already_loaded);
  return fill_program_info(loaded.program, *resp.mutable_info());
}

Status EtProtocol::list_programs(const pb::ListProgramsRequest& req,
                                 pb::ListProgramsResponse& resp) {
  ET_ASSIGN_OR_RETURN(std::vector<SessionProgram> programs, core_.session_programs(req.session()));
  for (const SessionProgram& p : programs) {
    ET_RETURN_IF_ERROR(fill_program_info(p, *resp.add_loaded()));
  }
  for (const std::string& name : core_.shared_programs().preloaded_names()) {
    resp.add_preloaded_names(name);
  }
  return Status();
}

Status EtProtocol::describe_program(const pb::DescribeProgramRequest& req,
                                    pb::DescribeProgramResponse& resp) {
  ET_ASSIGN_OR_RETURN(SessionProgram p, core_.session_program(req.session(), req.program_id()));
  return fill_program_info(p, *resp.mutable_info());
}

Status EtProtocol::unload_program(const pb::UnloadProgramRequest& req) {
  return core_.unload_program(req.session(), req.program_id());
}

Status EtProtocol::verify_program(const pb::VerifyProgramRequest& req,
                                  pb::VerifyProgramResponse& resp) {
  VerifyOptions options;
  if (req.has_rtol()) options.tolerance.rtol = req.rtol();
  if (req.has_atol()) options.tolerance.atol = req.atol();
  options.method = req.method_name();
  ET_ASSIGN_OR_RETURN(VerifyReport report,
                      core_.verify_program(req.session(), req.program_id(), options));
  resp.set_rtol(report.tolerance.rtol);
  resp.set_atol(report.tolerance.atol);
  resp.set_passed(static_cast<uint32_t>(report.num_passed()));
  for (const CaseResult& c : report.cases) {
    pb::VerifyCase& out = *resp.add_cases();
    out.set_method_name(c.method);
    out.set_case_index(static_cast<uint32_t>(c.case_index));
    out.set_passed(c.passed());
    if (!c.status.ok()) out.set_error(c.status.to_string());
    for (const OutputCheck& o : c.outputs) {
      pb::VerifyOutput& check = *out.add_outputs();
      check.set_index(static_cast<uint32_t>(o.index));
      check.set_passed(o.passed);
      check.set_elements(o.elements);
      check.set_mismatched(o.mismatched);
      check.set_max_abs_error(o.max_abs_error);
      check.set_max_rel_error(o.max_rel_error);
      check.set_problem(o.problem);
    }
  }
  return Status();
}

Status EtProtocol::load_method(const pb::LoadMethodRequest& req, pb::LoadMethodResponse& resp) {
  ET_ASSIGN_OR_RETURN(Core::LoadedMethod loaded,
                      core_.load_method(req.session(), req.program_id(), req.method_name()));
  to_proto(loaded.meta, *resp.mutable_meta());
  resp.set_method_handle(loaded.handle);
  return Status();
}

Status EtProtocol::drop_method(const pb::DropMethodRequest& req) {
  return core_.drop_method(req.session(), req.method_handle());
}

Status EtProtocol::drop_segment(const pb::DropSegmentRequest& req) {
  return core_.drop_segment(req.session(), req.segment_id());
}

Status EtProtocol::server_status(pb::ServerStatusResponse& resp, bool show_counts,
                                 bool with_registry) const {
  resp.set_version(Core::version());
  if (with_registry) {
    for (std::string& name : KernelRegistry::global().names()) resp.add_operators(std::move(name));
    for (std::string& id : BackendRegistry::global().ids()) resp.add_backends(std::move(id));
  }
  resp.set_protocol_version(et::wire::kProtocolVersion);
  resp.set_uptime_seconds(static_cast<uint64_t>(core_.uptime().count()));
  if (!show_counts) return Status();
  const DaemonCounts c = core_.counts();
  resp.set_sessions(c.sessions);
  resp.set_programs(c.programs);
  resp.set_method_instances(c.method_instances);
  resp.set_segments(c.segments);
  resp.set_segment_bytes(c.segment_bytes);
  resp.set_resident_bytes(c.resident_bytes);
  resp.set_threads(static_cast<uint32_t>(c.threads));
  resp.set_executes(c.executes);
  resp.set_program_loads(c.program_loads);
  resp.set_program_loads_shared(c.program_loads_shared);
  resp.set_idle_exit_seconds(static_cast<uint64_t>(core_.limits().idle_exit.count()));
  return Status();
}

}  // namespace et::server
