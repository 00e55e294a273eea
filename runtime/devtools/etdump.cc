#include "runtime/devtools/etdump.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <string>

#include "runtime/schema/etdump_generated.h"

namespace et {
namespace {

namespace fb = et::etdump;

uint64_t ns(int64_t t) { return t < 0 ? 0 : static_cast<uint64_t>(t); }

// One run data entry: the execute's events, then the execute as a whole.
flatbuffers::Offset<fb::RunData> write_run(flatbuffers::FlatBufferBuilder& b,
                                           const ExecuteProfile& p) {
  std::vector<flatbuffers::Offset<fb::Event>> events;
  uint32_t steps_in_call = 0;
  for (const ProfileEvent& e : p.events) {
    flatbuffers::Offset<flatbuffers::String> name, debug_id;
    switch (e.kind) {
      case ProfileEvent::Kind::kOperator:
        name = b.CreateString(e.name);
        break;
      case ProfileEvent::Kind::kDelegate:
        // ExecuTorch's name for a whole delegate call; its devtools know it.
        name = b.CreateString("DELEGATE_CALL");
        steps_in_call = 0;
        break;
      case ProfileEvent::Kind::kDelegateStep:
        // A delegate event is named by its id; numbered within the call so that two
        // steps of one kind stay two rows (the devtools key events by it).
        debug_id = b.CreateString(fmt::format("{} #{}", e.name, ++steps_in_call));
        break;
    }
    fb::ProfileEventBuilder pe(b);
    if (!name.IsNull()) pe.add_name(name);
    if (!debug_id.IsNull()) pe.add_delegate_debug_id_str(debug_id);
    pe.add_chain_index(static_cast<int32_t>(e.chain));
    pe.add_instruction_id(static_cast<int32_t>(e.instruction));
    pe.add_start_time(ns(e.start_ns));
    pe.add_end_time(ns(e.end_ns));
    const auto profile_event = pe.Finish();
    events.push_back(fb::CreateEvent(b, profile_event));
  }
  const auto whole_name = b.CreateString("Method::execute");
  fb::ProfileEventBuilder whole(b);
  whole.add_name(whole_name);
  whole.add_chain_index(-1);
  whole.add_instruction_id(0);
  whole.add_start_time(ns(p.start_ns));
  whole.add_end_time(ns(p.end_ns));
  const auto whole_event = whole.Finish();
  events.push_back(fb::CreateEvent(b, whole_event));
  const auto run_name = b.CreateString(p.method);
  const auto run_events = b.CreateVector(events);
  return fb::CreateRunData(b, run_name, -1, 0, run_events);
}

}  // namespace

Result<std::vector<uint8_t>> etdump_bytes(const std::vector<ExecuteProfile>& profiles) {
  constexpr size_t kMostEvents = 10'000'000;
  size_t events = 0;
  for (const ExecuteProfile& p : profiles) events += p.events.size() + 1;
  if (events > kMostEvents) {
    return resource_exhausted(
        fmt::format("{} profile events are more than one ETDump holds ({}): profile fewer executes",
                    events, kMostEvents));
  }
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::RunData>> runs;
  for (const ExecuteProfile& p : profiles) runs.push_back(write_run(b, p));
  const auto run_data = b.CreateVector(runs);
  b.FinishSizePrefixed(fb::CreateETDump(b, 0, run_data), fb::ETDumpIdentifier());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace et
