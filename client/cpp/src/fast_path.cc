#include "fast_path.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "connection.h"
#include "port/cpu_load.h"
#include "port/realtime.h"
#include "proto/fd_client.h"

namespace etclient {
namespace {

constexpr size_t kChannelBytes = size_t{64} << 10;
constexpr auto kLivenessCheck = std::chrono::milliseconds(20);
constexpr auto kGrace = std::chrono::seconds(5);

}  // namespace

std::chrono::microseconds spin_from_env(std::chrono::microseconds fallback) {
  const char* env = std::getenv("ETSERVER_SPIN_US");
  if (env == nullptr || *env == 0) return fallback;
  char* end = nullptr;
  const long long us = std::strtoll(env, &end, 10);
  if (*end != 0 || us < 0) return fallback;
  return std::chrono::microseconds(std::min<long long>(us, 1'000'000));
}

Result<std::unique_ptr<FastPath>> FastPath::open(const std::string& fd_socket,
                                                 const std::string& session,
                                                 std::chrono::microseconds spin) {
  std::unique_ptr<FastPath> fast(new FastPath);
  fast->memfd_ = memfd_create("etclient-fast-path", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fast->memfd_ < 0 || ftruncate(fast->memfd_, kChannelBytes) != 0 ||
      fcntl(fast->memfd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
    return Status(StatusCode::kResourceExhausted,
                  std::string("cannot create the fast path's channel: ") + std::strerror(errno));
  }
  void* base = mmap(nullptr, kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fast->memfd_, 0);
  if (base == MAP_FAILED) {
    return Status(StatusCode::kResourceExhausted, "cannot map the fast path's channel");
  }
  fast->base_ = static_cast<uint8_t*>(base);
  fast->size_ = kChannelBytes;
  fast->layout_ = et::wire::channel_layout(kChannelBytes);
  fast->header_ = reinterpret_cast<et::wire::ChannelHeader*>(fast->base_);
  fast->spin_ = spin;
  const et::wire::FdExchange reply = et::wire::send_descriptor(
      fd_socket, session, fast->memfd_, et::wire::kFdOpenFastPath, &fast->link_);
  if (!reply.delivered) return Status(StatusCode::kUnavailable, reply.message);
  if (reply.code != 0) {
    // 12 Unavailable (shutting down), 13 Unauthenticated (no such session): gone.
    const bool gone = reply.code == 12 || reply.code == 13;
    return Status(gone ? StatusCode::kUnavailable : StatusCode::kResourceExhausted,
                  "fast path refused: " + reply.message);
  }
  fast->longest_wait_ = std::chrono::milliseconds(reply.id) + kGrace;
  return fast;
}

FastPath::~FastPath() {
  if (base_) munmap(base_, size_);
  if (memfd_ >= 0) close(memfd_);
  if (link_ >= 0) close(link_);  // the daemon ends the channel's thread
}

bool FastPath::link_alive() const {
  pollfd p{link_, POLLIN, 0};
  // The daemon never writes on the link: anything readable is its end (EOF) or an error.
  return poll(&p, 1, 0) == 0;
}

Status FastPath::wait_for(uint32_t seq) {
  auto answered = [&] { return header_->response_seq.load(std::memory_order_acquire) == seq; };
  const auto start = std::chrono::steady_clock::now();
  // Spin only where it can pay (docs/fast_path.md, "Waiting"): not on a saturated
  // machine; on a real-time thread (etclient::enter_realtime_class) only beside a
  // channel thread pinned to another CPU; then sleep until woken.
  // A real-time thread polls only beside a channel thread pinned to another CPU.
  const bool realtime = et::this_thread_is_realtime();
  et::CpuLoad& load = realtime ? et::CpuLoad::never_saturated() : et::CpuLoad::process();
  const bool may_spin =
      realtime ? et::realtime_polls_beside(et::this_thread_pinned_cpu(),
                                           header_->daemon_rt_cpu.load(std::memory_order_relaxed))
               : !load.saturated();
  if (spin_.count() > 0 && may_spin &&
      et::spin_until(answered, spin_, load) == et::SpinEnd::kDone) {
    return Status();
  }
  const auto give_up = start + longest_wait_;
  const timespec slice{
      0, std::chrono::duration_cast<std::chrono::nanoseconds>(kLivenessCheck).count()};
  while (!answered()) {
    header_->client_waiting.store(1, std::memory_order_seq_cst);
    const uint32_t seen = header_->response_seq.load(std::memory_order_seq_cst);
    if (seen != seq) et::wire::futex_wait(&header_->response_seq, seen, &slice);
    header_->client_waiting.store(0, std::memory_order_relaxed);
    if (answered()) break;
    if (!link_alive()) {
      broken_ = true;
      return Status(StatusCode::kUnavailable,
                    "et-serverd is unavailable: the fast path's channel closed (the daemon "
                    "stopped, restarted, or ended the session)");
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      broken_ = true;
      return Status(StatusCode::kDeadlineExceeded,
                    "et-serverd did not answer within " + std::to_string(longest_wait_.count()) +
                        " ms (its request and execution deadlines, plus 5 s): it may be hung or "
                        "stopped; this method opens a new channel on its next call");
    }
  }
  return Status();
}

Status FastPath::call(et::wire::FastCall kind, const google::protobuf::MessageLite& request,
                      google::protobuf::MessageLite& response) {
  if (broken_) return Status(StatusCode::kUnavailable, "the fast path's channel is broken");
  const size_t length = request.ByteSizeLong();
  if (length > layout_.message_capacity()) {
    return Status(
        StatusCode::kResourceExhausted,
        "the request (" + std::to_string(length) + " bytes) does not fit the fast path's channel");
  }
  uint8_t* area = base_ + layout_.request_offset;
  request.SerializeWithCachedSizesToArray(area + sizeof(et::wire::MessageHeader));
  const uint32_t seq = ++seq_;
  const et::wire::MessageHeader head{static_cast<uint32_t>(kind), static_cast<uint32_t>(length),
                                     seq, deadline_us_};
  last_missed_ = false;
  std::memcpy(area, &head, sizeof(head));
  const int pinned = et::this_thread_is_realtime() ? et::this_thread_pinned_cpu() : -1;
  header_->client_rt_cpu.store(pinned >= 0 ? static_cast<uint32_t>(pinned) + 1 : 0,
                               std::memory_order_relaxed);
  header_->call_timeout_us.store(timeout_us_, std::memory_order_relaxed);
  header_->request_seq.store(seq, std::memory_order_seq_cst);
  if (header_->daemon_waiting.load(std::memory_order_seq_cst) != 0) {
    et::wire::futex_wake(&header_->request_seq);
  }
  if (Status s = wait_for(seq); !s.ok()) return s;
  et::wire::MessageHeader answer{};
  std::memcpy(&answer, base_ + layout_.response_offset, sizeof(answer));
  if (answer.seq != seq || answer.length > layout_.message_capacity()) {
    broken_ = true;
    return Status(StatusCode::kInternal, "the fast path's answer is malformed");
  }
  const uint8_t* bytes = base_ + layout_.response_offset + sizeof(et::wire::MessageHeader);
  last_missed_ = (answer.deadline_us_or_flags & et::wire::kMissedDeadline) != 0;
  if (answer.kind_or_code != 0) {
    return from_grpc(
        grpc::Status(static_cast<grpc::StatusCode>(answer.kind_or_code),
                     std::string(reinterpret_cast<const char*>(bytes), answer.length)));
  }
  if (!response.ParseFromArray(bytes, static_cast<int>(answer.length))) {
    return Status(StatusCode::kInternal, "the fast path's answer does not parse");
  }
  return Status();
}

}  // namespace etclient
