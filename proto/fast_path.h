// The fast path's channel layout (docs/fast_path.md), shared by the daemon and its
// clients: one shared-memory mailbox per method caller, a request area the client
// writes and a response area the daemon writes, and two futex words as doorbells.
// Depends on nothing else in the project.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace et::wire {

// The descriptor socket's request kind that opens a channel (proto/fd_protocol.h): the
// attached memfd is the channel; the connection stays open as its liveness link.
inline constexpr uint16_t kFdOpenFastPath = 3;
inline constexpr uint32_t kFastPathVersion = 1;

// A channel's size: a multiple of 4096 between these bounds.
inline constexpr size_t kChannelMinBytes = size_t{8} << 10;
inline constexpr size_t kChannelMaxBytes = size_t{16} << 20;
inline constexpr size_t kChannelHeaderBytes = 256;

// Request kinds: the message in the request area is the named request of
// proto/et_serverd.proto (its `session` field is ignored: a channel belongs to the
// session that opened it).
enum class FastCall : uint32_t { kRun = 1, kSetInputs = 2, kExecute = 3, kGetOutputs = 4 };

// The start of the channel. Each side writes only its own cache line.
struct ChannelHeader {
  // Written by the client.
  std::atomic<uint32_t> request_seq;     // bumped after a request is written (futex word)
  std::atomic<uint32_t> client_waiting;  // 1 while the client sleeps on response_seq
  // 1 + the CPU the calling thread is pinned to when it is in the real-time class, 0
  // otherwise; written before each request (port/realtime.h, realtime_polls_beside).
  std::atomic<uint32_t> client_rt_cpu;
  // The request's timeout in microseconds (0: none): the daemon stops the call there
  // (etclient::Method::set_timeout). Written before each request.
  std::atomic<uint32_t> call_timeout_us;
  uint8_t client_pad[48];
  // Written by the daemon.
  std::atomic<uint32_t> response_seq;    // the request_seq answered last (futex word)
  std::atomic<uint32_t> daemon_waiting;  // 1 while the daemon sleeps on request_seq
  // As client_rt_cpu, for the channel's thread; written once when it starts.
  std::atomic<uint32_t> daemon_rt_cpu;
  uint8_t daemon_pad[180];
};
static_assert(sizeof(ChannelHeader) == kChannelHeaderBytes);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Heads the request area (kind, length) and the response area (code, length); the
// message's bytes follow it.
struct MessageHeader {
  uint32_t kind_or_code;  // request: a FastCall; response: a gRPC status code (0 OK)
  uint32_t length;        // bytes of the message that follows
  uint32_t seq;           // the request_seq this message belongs to
  // Request: the caller's deadline for this call in microseconds, 0 for none (a client
  // that predates deadlines sends 0). Response: flags, kMissedDeadline when the daemon's
  // part of the call alone took longer than that deadline.
  uint32_t deadline_us_or_flags;
};
static_assert(sizeof(MessageHeader) == 16);
inline constexpr uint32_t kMissedDeadline = 1;

// Where the two areas lie in a channel of `size` bytes: halves of what follows the
// header, each a multiple of 64 bytes.
struct ChannelLayout {
  size_t request_offset, response_offset, area_bytes;
  size_t message_capacity() const { return area_bytes - sizeof(MessageHeader); }
};
inline ChannelLayout channel_layout(size_t size) {
  const size_t area = (size - kChannelHeaderBytes) / 2 / 64 * 64;
  return {kChannelHeaderBytes, kChannelHeaderBytes + area, area};
}

// Futexes on shared memory (not FUTEX_PRIVATE: the two processes share the word).
// Sleeps while *word == expected, at most `timeout` (null: no limit); returns at once
// when the value differs, on a wake, a signal, or the timeout.
inline void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* timeout) {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, timeout,
                nullptr, 0);
}
inline void futex_wake(std::atomic<uint32_t>* word) {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, 1 << 30, nullptr, nullptr,
                0);
}

}  // namespace et::wire
