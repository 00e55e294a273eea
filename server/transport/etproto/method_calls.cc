// The et protocol's calls of a method instance: each one Core::call, with the request's
// inputs decoded for it and its outputs encoded into the response.
#include <fmt/format.h>

#include "runtime/core/printable.h"
#include "runtime/devtools/chrome_trace.h"
#include "runtime/devtools/etdump.h"
#include "server/transport/etproto/et_protocol.h"

namespace et::server {
namespace {

using Values = google::protobuf::RepeatedPtrField<pb::Value>;
using Placements = google::protobuf::RepeatedPtrField<pb::OutputPlacement>;

// Decodes a request's inputs: their count first, then each. A planned input is copied
// into the method's memory by set_inputs(), so its inline bytes need no copy of their
// own; an unplanned one stays bound to its bytes after the call, so they are copied.
InputDecoder decoder_of(const Values& inputs) {
  return [&inputs](const Method& m, const SegmentLookup& segments,
                   std::vector<DecodedInput>& out) -> Status {
    if (static_cast<size_t>(inputs.size()) != m.num_inputs()) {
      return invalid_argument(
          fmt::format("inputs: {} given, the method takes {}", inputs.size(), m.num_inputs()));
    }
    out.resize(m.num_inputs());
    for (size_t i = 0; i < out.size(); ++i) {
      const std::optional<TensorMeta>& declared = m.meta().inputs[i].tensor;
      const bool planned = declared && declared->is_memory_planned;
      ET_RETURN_IF_ERROR(decode_input(i, inputs[static_cast<int>(i)], segments, !planned, out[i]));
    }
    return Status();
  };
}

// Encodes the method's outputs into `out`: inline, or into the placements' segment
// ranges (none, or one per output).
OutputReader reader_of(const Placements& placements, Values& out) {
  return [&placements, &out](const Method& m, const SegmentLookup& segments) -> Status {
    if (!placements.empty() && static_cast<size_t>(placements.size()) != m.num_outputs()) {
      return invalid_argument(
          fmt::format("placements: {} given for {} outputs (give none, or one "
                      "per output)",
                      placements.size(), m.num_outputs()));
    }
    for (size_t i = 0; i < m.num_outputs(); ++i) {
      ET_ASSIGN_OR_RETURN(const et::Value* v, m.output(i));
      const pb::OutputPlacement* where =
          placements.empty() ? nullptr : &placements[static_cast<int>(i)];
      ET_RETURN_IF_ERROR(encode_output(i, *v, where, segments, *out.Add()));
    }
    return Status();
  };
}

}  // namespace

Status EtProtocol::run(const pb::RunRequest& req, pb::RunResponse& resp, const CallBounds& bounds) {
  RunWork work;
  work.bind = decoder_of(req.inputs());
  work.bind_context = "inputs";
  work.read = reader_of(req.placements(), *resp.mutable_outputs());
  CallRequest call(SessionMethod{req.session(), req.method_handle()}, std::move(work), bounds);
  Status st = core_.call(call);
  resp.set_execution_micros(call.times.infer_ns / 1000);
  return st;
}

Status EtProtocol::set_inputs(const pb::SetInputsRequest& req, const CallBounds& bounds) {
  RunWork work;
  work.bind = decoder_of(req.inputs());
  work.bind_context = "inputs";
  work.execute = false;
  CallRequest call(SessionMethod{req.session(), req.method_handle()}, std::move(work), bounds);
  return core_.call(call);
}

Status EtProtocol::execute(const pb::ExecuteRequest& req, pb::ExecuteResponse& resp,
                           const CallBounds& bounds) {
  CallRequest call(SessionMethod{req.session(), req.method_handle()}, RunWork{}, bounds);
  Status st = core_.call(call);
  resp.set_execution_micros(call.times.infer_ns / 1000);
  return st;
}

Status EtProtocol::get_outputs(const pb::GetOutputsRequest& req, pb::GetOutputsResponse& resp,
                               const CallBounds& bounds) {
  RunWork work;
  work.execute = false;
  work.read = reader_of(req.placements(), *resp.mutable_outputs());
  CallRequest call(SessionMethod{req.session(), req.method_handle()}, std::move(work), bounds);
  return core_.call(call);
}

Status EtProtocol::get_attribute(const pb::GetAttributeRequest& req, pb::GetAttributeResponse& resp,
                                 const CallBounds& bounds) {
  CallRequest call(
      SessionMethod{req.session(), req.method_handle()},
      HoldWork{[&](MethodSlot& slot, const SegmentLookup& segments) -> Status {
        ET_ASSIGN_OR_RETURN(const Tensor* tensor, slot.method->attribute(req.name()));
        // Inline, in one reply: refused before any copy when the reply could not carry it.
        constexpr size_t kMostAttributeBytes = size_t{128} << 20;
        if (tensor->nbytes() > kMostAttributeBytes) {
          return resource_exhausted(fmt::format(
              "attribute '{}' holds {} bytes; GetAttribute returns at most {} in one reply",
              printable(req.name()), tensor->nbytes(), kMostAttributeBytes));
        }
        const et::Value value = et::Value::from_tensor(const_cast<Tensor*>(tensor));  // only read
        return encode_output(0, value, nullptr, segments, *resp.mutable_value());
      }},
      bounds);
  return core_.call(call);
}

Status EtProtocol::generate(const pb::GenerateRequest& req,
                            const std::function<bool(const pb::GenerateResponse&)>& write) {
  GenerateWork work;
  GenerationOptions& o = work.options;
  o.prompt.assign(req.prompt().begin(), req.prompt().end());
  o.start_pos = req.start_pos();
  o.max_new_tokens = req.max_new_tokens();
  o.stop_tokens.assign(req.stop_tokens().begin(), req.stop_tokens().end());
  o.temperature = req.temperature();
  o.top_p = req.top_p() == 0 ? 1.0f : req.top_p();
  o.seed = req.seed();
  o.max_context = req.max_context();
  work.write = [&write](std::span<const int64_t> tokens) {
    pb::GenerateResponse reply;
    reply.mutable_tokens()->Add(tokens.begin(), tokens.end());
    return write(reply);
  };
  CallRequest call(SessionMethod{req.session(), req.method_handle()}, std::move(work));
  ET_RETURN_IF_ERROR(core_.call(call));
  const GenerationStats& stats = std::get<GenerateWork>(call.work).stats;
  pb::GenerateResponse last;
  last.set_done(true);
  last.set_stop_reason(stats.stop_reason);
  last.set_prompt_tokens(stats.prompt_tokens);
  last.set_generated(stats.generated);
  last.set_prefill_micros(stats.prefill_ns / 1000);
  last.set_decode_micros(stats.decode_ns / 1000);
  last.set_next_pos(stats.next_pos);
  write(last);
  return Status();
}

Status EtProtocol::start_profile(const pb::StartProfileRequest& req) {
  constexpr uint32_t kDefaultExecutes = 1000, kMostExecutes = 100'000;
  if (req.max_executes() > kMostExecutes) {
    return invalid_argument(fmt::format("max_executes: {} is above the most a profile keeps, {}",
                                        req.max_executes(), kMostExecutes));
  }
  const uint32_t keep = req.max_executes() == 0 ? kDefaultExecutes : req.max_executes();
  CallRequest call(SessionMethod{req.session(), req.method_handle()},
                   HoldWork{[keep](MethodSlot& slot, const SegmentLookup&) {
                     slot.profiling = std::make_unique<MethodSlot::Profiling>();
                     slot.profiling->max_executes = keep;
                     return Status();
                   }});
  return core_.call(call);
}

Status EtProtocol::stop_profile(const pb::StopProfileRequest& req, pb::StopProfileResponse& resp) {
  std::vector<uint64_t> handles{req.method_handle()};
  handles.insert(handles.end(), req.more_method_handles().begin(), req.more_method_handles().end());
  ET_ASSIGN_OR_RETURN(std::unique_ptr<MethodSlot::Profiling> profiling,
                      core_.take_profiles(req.session(), handles, req.etdump()));
  const ProfileSummary summary = ProfileSummary::of(profiling->executes);
  resp.set_executes(summary.executes);
  resp.set_dropped(profiling->dropped);
  resp.set_execute_ns(static_cast<uint64_t>(summary.execute_ns));
  for (const ProfileRow& row : summary.rows) {
    pb::ProfileRow& out = *resp.add_rows();
    out.set_kind(profile_event_kind_name(row.kind));
    out.set_name(row.name);
    out.set_args(row.args);
    out.set_calls(row.calls);
    out.set_total_ns(static_cast<uint64_t>(row.total_ns));
    out.set_min_ns(static_cast<uint64_t>(row.min_ns));
    out.set_max_ns(static_cast<uint64_t>(row.max_ns));
  }
  resp.set_table(summary.table());
  if (req.etdump()) {
    ET_ASSIGN_OR_RETURN(const std::vector<uint8_t> etdump, etdump_bytes(profiling->executes));
    resp.set_etdump(etdump.data(), etdump.size());
  }
  if (req.chrome_trace()) resp.set_chrome_trace(chrome_trace_json(profiling->executes));
  return Status();
}

}  // namespace et::server
