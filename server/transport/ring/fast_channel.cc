#include "server/transport/ring/fast_channel.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "port/cpu_load.h"
#include "port/realtime.h"
#include "server/metrics/call_scope.h"

namespace et::server {

using et::wire::ChannelHeader;
using et::wire::FastCall;
using et::wire::MessageHeader;

namespace {

constexpr uint32_t kInvalidArgument = 3;  // gRPC's INVALID_ARGUMENT

// An idle channel's thread looks at stop_ this often (a stop() that races its falling
// asleep is seen then): 64 idle channels wake 64 times a second.
constexpr auto kStopCheck = std::chrono::seconds(1);
// A caller calling less often than this is not expected back at a fixed rate.
constexpr auto kLongestPredictedGap = std::chrono::milliseconds(100);

// One 32-bit field of shared memory, read once (the client may change it any time).
uint32_t read_once(const uint32_t& field) { return __atomic_load_n(&field, __ATOMIC_RELAXED); }

std::atomic<uint64_t> waits_spun{0}, waits_slept{0}, skipped_saturated{0};

}  // namespace

FastChannelWaits FastChannel::waits() {
  FastChannelWaits w;
  w.spun = waits_spun.load(std::memory_order_relaxed);
  w.slept = waits_slept.load(std::memory_order_relaxed);
  w.skipped_saturated = skipped_saturated.load(std::memory_order_relaxed);
  return w;
}

Result<std::shared_ptr<FastChannel>> FastChannel::start(std::shared_ptr<Segment> memory, int link,
                                                        Handler handler, FastChannelTiming timing,
                                                        std::function<void()> on_finished) {
  const size_t size = memory->size();
  if (size < et::wire::kChannelMinBytes || size > et::wire::kChannelMaxBytes || size % 4096 != 0) {
    close(link);
    return invalid_argument(fmt::format(
        "fast path: a channel of {} bytes; it must be a multiple of 4096 between {} and {}", size,
        et::wire::kChannelMinBytes, et::wire::kChannelMaxBytes));
  }
  std::shared_ptr<FastChannel> channel(new FastChannel);
  channel->link_ = link;  // closed by the destructor from here on
  ET_ASSIGN_OR_RETURN(std::span<uint8_t> bytes, memory->range(0, size));
  channel->memory_ = std::move(memory);
  channel->base_ = bytes.data();
  channel->layout_ = et::wire::channel_layout(size);
  channel->header_ = reinterpret_cast<ChannelHeader*>(channel->base_);
  channel->handler_ = std::move(handler);
  channel->on_finished_ = std::move(on_finished);
  channel->timing_ = timing;
  channel->request_.resize(channel->layout_.message_capacity());
  // The thread holds the object only by `this`: the destructor joins it.
  channel->thread_ = std::thread([c = channel.get()] { c->serve(); });
  return channel;
}

FastChannel::~FastChannel() {
  stop();
  join();
  close(link_);
}

void FastChannel::stop() {
  if (stop_.exchange(true)) return;
  shutdown(link_, SHUT_RDWR);
  // The wake can come between the thread's check of stop_ and its sleep; its sleeps
  // end every kStopCheck to look again (a word the client can rewrite cannot tell it).
  if (header_) et::wire::futex_wake(&header_->request_seq);
}

void FastChannel::join() {
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool FastChannel::may_poll() {
  if (et::this_thread_is_realtime()) {
    // port/realtime.h: only beside a caller pinned to another CPU.
    return et::realtime_polls_beside(et::this_thread_pinned_cpu(),
                                     header_->client_rt_cpu.load(std::memory_order_relaxed));
  }
  if (!et::CpuLoad::process().saturated()) return true;
  skipped_saturated.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool FastChannel::poll_until(uint32_t last, Clock::time_point until, uint32_t& seq) {
  if (!may_poll()) return false;
  et::CpuLoad& load =
      et::this_thread_is_realtime() ? et::CpuLoad::never_saturated() : et::CpuLoad::process();
  auto came = [&] {
    seq = header_->request_seq.load(std::memory_order_acquire);
    return seq != last || stop_.load(std::memory_order_relaxed);
  };
  const et::SpinEnd end = et::spin_until(came, until - Clock::now(), load);
  if (end == et::SpinEnd::kDone) {
    waits_spun.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (end == et::SpinEnd::kSaturated) {
    skipped_saturated.fetch_add(1, std::memory_order_relaxed);
  }
  return false;
}

bool FastChannel::sleep_until(uint32_t last, Clock::time_point until, uint32_t& seq) {
  for (;;) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(until - Clock::now());
    if (ns.count() <= 0) return false;
    const timespec left{static_cast<time_t>(ns.count() / 1'000'000'000),
                        static_cast<long>(ns.count() % 1'000'000'000)};
    header_->daemon_waiting.store(1, std::memory_order_seq_cst);
    seq = header_->request_seq.load(std::memory_order_seq_cst);
    if (seq == last && !stop_.load()) et::wire::futex_wait(&header_->request_seq, last, &left);
    header_->daemon_waiting.store(0, std::memory_order_relaxed);
    if (stop_.load()) return true;
    seq = header_->request_seq.load(std::memory_order_acquire);
    if (seq != last) return true;
  }
}

bool FastChannel::wait_for_request(uint32_t last, uint32_t& seq) {
  const auto answered = Clock::now();
  bool came = timing_.spin.count() > 0 && poll_until(last, answered + timing_.spin, seq);
  if (!came && timing_.wake_ahead.count() > 0 && predicted_gap_.count() > 0 && may_poll()) {
    // A caller at a fixed rate: sleep until just before its next call is due, then poll
    // through the window around it, so the call need not wait for a wake-up.
    const auto due = answered + predicted_gap_;
    came = sleep_until(last, due - timing_.wake_ahead, seq);
    if (came) waits_slept.fetch_add(1, std::memory_order_relaxed);
    if (!came) came = poll_until(last, due + timing_.wake_ahead, seq);
  }
  if (!came) waits_slept.fetch_add(1, std::memory_order_relaxed);
  while (!came) came = sleep_until(last, Clock::now() + kStopCheck, seq);
  const auto gap = Clock::now() - answered;
  predicted_gap_ = gap < kLongestPredictedGap
                       ? std::chrono::duration_cast<std::chrono::microseconds>(gap)
                       : std::chrono::microseconds(0);
  return !stop_.load();
}

void FastChannel::answer(uint32_t seq) {
  const auto* in = reinterpret_cast<const MessageHeader*>(base_ + layout_.request_offset);
  const uint32_t kind = read_once(in->kind_or_code);
  const uint32_t length = read_once(in->length);
  const uint32_t deadline_us = read_once(in->deadline_us_or_flags);
  CallBounds bounds;
  if (const uint32_t timeout_us = header_->call_timeout_us.load(std::memory_order_relaxed)) {
    bounds.deadline = Clock::now() + std::chrono::microseconds(timeout_us);
  }
  uint32_t code = kInvalidArgument;
  if (length > layout_.message_capacity()) {
    reply_ = fmt::format("fast path: the request claims {} bytes; the request area holds {}",
                         length, layout_.message_capacity());
  } else if (kind < static_cast<uint32_t>(FastCall::kRun) ||
             kind > static_cast<uint32_t>(FastCall::kGetOutputs)) {
    reply_ = fmt::format("fast path: unknown request kind {} (docs/fast_path.md)", kind);
  } else {
    std::memcpy(request_.data(), base_ + layout_.request_offset + sizeof(MessageHeader), length);
    reply_.clear();
    metrics::CallScope::set_next_deadline(std::chrono::microseconds(deadline_us));
    code = handler_(static_cast<FastCall>(kind), {request_.data(), length}, reply_, bounds);
  }
  const bool missed = metrics::CallScope::take_missed_deadline();
  if (reply_.size() > layout_.message_capacity()) {
    code = 8;  // RESOURCE_EXHAUSTED
    reply_ = fmt::format(
        "fast path: the response needs {} bytes; the channel's response area holds {} (open a "
        "larger channel, or use gRPC for this method)",
        reply_.size(), layout_.message_capacity());
  }
  auto* out = reinterpret_cast<MessageHeader*>(base_ + layout_.response_offset);
  const MessageHeader head{code, static_cast<uint32_t>(reply_.size()), seq,
                           missed ? et::wire::kMissedDeadline : 0u};
  std::memcpy(out, &head, sizeof(head));
  std::memcpy(base_ + layout_.response_offset + sizeof(MessageHeader), reply_.data(),
              reply_.size());
  header_->response_seq.store(seq, std::memory_order_seq_cst);
  if (header_->client_waiting.load(std::memory_order_seq_cst) != 0) {
    et::wire::futex_wake(&header_->response_seq);
  }
}

void FastChannel::serve() {
  // Timed sleeps end when asked, not up to 50 us later (the default slack).
  (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  pthread_setname_np(pthread_self(), "et-fast");  // for top -H, and the tests
  // The daemon tried the class at start (--rt) and refused to start without it.
  if (const et::RealtimeClass& rt = et::process_realtime_class(); rt.on()) {
    if (et::enter_realtime_class(rt) == 0 && et::this_thread_pinned_cpu() >= 0) {
      header_->daemon_rt_cpu.store(static_cast<uint32_t>(et::this_thread_pinned_cpu()) + 1,
                                   std::memory_order_relaxed);
    }
  }
  // Both words start at 0 (a fresh memfd): the first request is the first change.
  uint32_t last = 0, seq = 0;
  while (wait_for_request(last, seq)) {
    answer(seq);
    last = seq;
  }
  finished_ = true;
  if (on_finished_) on_finished_();
}

}  // namespace et::server
