#include "tests/support/fast_test_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "proto/fd_client.h"

namespace et::testing {

using et::wire::MessageHeader;

std::unique_ptr<FastTestChannel> FastTestChannel::open(const std::string& fd_socket,
                                                       const std::string& session,
                                                       std::string* error, size_t bytes) {
  std::unique_ptr<FastTestChannel> c(new FastTestChannel);
  c->memfd_ = memfd_create("et-test-fast-path", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (c->memfd_ < 0 || ftruncate(c->memfd_, static_cast<off_t>(bytes)) != 0 ||
      fcntl(c->memfd_, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
    if (error) *error = "memfd";
    return nullptr;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd_, 0);
  if (base == MAP_FAILED) {
    if (error) *error = "mmap";
    return nullptr;
  }
  c->base_ = static_cast<uint8_t*>(base);
  c->size_ = bytes;
  const et::wire::FdExchange reply = et::wire::send_descriptor(
      fd_socket, session, c->memfd_, et::wire::kFdOpenFastPath, &c->link_);
  if (!reply.delivered || reply.code != 0) {
    if (error) *error = reply.message;
    return nullptr;
  }
  return c;
}

FastTestChannel::~FastTestChannel() {
  if (base_) munmap(base_, size_);
  if (memfd_ >= 0) close(memfd_);
  if (link_ >= 0) close(link_);
}

void FastTestChannel::ring(uint32_t seq) {
  header()->request_seq.store(seq, std::memory_order_seq_cst);
  if (header()->daemon_waiting.load(std::memory_order_seq_cst))
    et::wire::futex_wake(&header()->request_seq);
}

bool FastTestChannel::wait(uint32_t seq, int timeout_ms) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const timespec slice{0, 10'000'000};
  while (header()->response_seq.load(std::memory_order_acquire) != seq) {
    header()->client_waiting.store(1, std::memory_order_seq_cst);
    const uint32_t seen = header()->response_seq.load(std::memory_order_seq_cst);
    if (seen != seq) et::wire::futex_wait(&header()->response_seq, seen, &slice);
    header()->client_waiting.store(0);
    pollfd p{link_, POLLIN, 0};
    if (header()->response_seq.load() == seq) break;
    if (poll(&p, 1, 0) != 0 || std::chrono::steady_clock::now() >= give_up) return false;
  }
  return true;
}

grpc::Status FastTestChannel::call(et::wire::FastCall kind,
                                   const google::protobuf::MessageLite& request,
                                   google::protobuf::MessageLite& response, int timeout_ms) {
  const et::wire::ChannelLayout layout = et::wire::channel_layout(size_);
  std::string bytes = request.SerializeAsString();
  if (bytes.size() > layout.message_capacity()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "does not fit the channel");
  }
  const uint32_t seq = next_seq();
  const MessageHeader head{static_cast<uint32_t>(kind), static_cast<uint32_t>(bytes.size()), seq,
                           0};
  std::memcpy(base_ + layout.request_offset, &head, sizeof(head));
  std::memcpy(base_ + layout.request_offset + sizeof(head), bytes.data(), bytes.size());
  ring(seq);
  if (!wait(seq, timeout_ms)) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "fast path: no answer (channel closed or timed out)");
  }
  MessageHeader answer{};
  std::memcpy(&answer, base_ + layout.response_offset, sizeof(answer));
  const char* text = reinterpret_cast<const char*>(base_ + layout.response_offset + sizeof(answer));
  if (answer.seq != seq || answer.length > layout.message_capacity()) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "fast path: malformed answer");
  }
  if (answer.kind_or_code != 0) {
    return grpc::Status(static_cast<grpc::StatusCode>(answer.kind_or_code),
                        std::string(text, answer.length));
  }
  if (!response.ParseFromArray(text, static_cast<int>(answer.length))) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "fast path: the answer does not parse");
  }
  return grpc::Status::OK;
}

}  // namespace et::testing
