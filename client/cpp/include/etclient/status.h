// Errors as values for libetclient: every call returns a Status or a Result<T> that
// carries the daemon's message (or the client's own, e.g. "cannot connect to ...").
// Nothing in the API throws.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

// The library's exported symbols (the shared library hides everything else, including
// the protocol code it carries).
#if defined(__GNUC__)
#define ETCLIENT_API __attribute__((visibility("default")))
#else
#define ETCLIENT_API
#endif

namespace etclient {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // a bad input, program or request
  kNotFound,            // no such program, method, session; or a missing operator
  kUnimplemented,       // valid, but the daemon cannot do it
  kResourceExhausted,   // a limit of the daemon, or memory
  kOutOfRange,          // a reference outside its segment
  kFailedPrecondition,  // called in the wrong state
  kDeadlineExceeded,    // the daemon's request deadline passed
  kUnavailable,         // no daemon (not running, restarting, shutting down)
  kAborted,             // the daemon restarted: the method was re-created, its state lost
  kInternal,            // a bug: please report it
  kPermissionDenied,    // the daemon does not serve this user (et-serverd --socket-group)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value, or the Status saying why there is none. Reading value() of a failed Result
// is a bug and aborts with the message.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(state_).ok()) state_ = Status(StatusCode::kInternal, "Result from OK");
  }
  bool ok() const { return std::holds_alternative<T>(state_); }
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }
  T& value() & { return checked(); }
  T&& value() && { return std::move(checked()); }
  T& operator*() & { return checked(); }
  T* operator->() { return &checked(); }

 private:
  T& checked() {
    if (!ok()) {
      std::fprintf(stderr, "etclient: value() of a failed Result: %s\n",
                   std::get<Status>(state_).message().c_str());
      std::abort();
    }
    return std::get<T>(state_);
  }
  std::variant<T, Status> state_;
};

}  // namespace etclient
