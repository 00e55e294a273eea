// Errors as values for the runtime, kernels and backends.
//
// Nothing below the server throws: a fallible function returns Status (no value)
// or Result<T> (a value or the reason there is none). The message is written for
// the person who has to act on it: it names what is wrong and what to do.
// The server maps StatusCode to protocol status codes in one place.
//
// Thread-safety: Status and Result are values; distinct objects may be used from
// distinct threads, one object from one thread at a time.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace et {

enum class StatusCode : unsigned char {
  kOk = 0,
  kInvalidArgument,      // the caller passed something wrong (input, option)
  kInvalidProgram,       // the .pte bytes are malformed or inconsistent
  kIncompatibleVersion,  // well-formed, but a format version this runtime does not read
  kNotFound,             // no such method, operator, backend, file
  kNotSupported,         // valid, but this build cannot do it (dtype, node type)
  kOutOfRange,           // an index or size outside its bounds
  kResourceExhausted,    // a limit or memory ran out
  kFailedPrecondition,   // called in the wrong state (e.g. execute before inputs set)
  kIoError,              // reading or mapping a file failed
  kInternal,             // a bug in this project: please report it
  kDeadlineExceeded,     // a wait ran past its deadline (the daemon's request deadline)
  kUnavailable,          // the service cannot take the call now (shutting down)
  kUnauthenticated,      // a request named no open session (unknown token, session closed)
  kPermissionDenied,     // the caller may not use what it named (another user's memory)
};

// The name of a code as it appears in messages, e.g. "InvalidProgram".
std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  // The success value. Cheap: no allocation.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "InvalidProgram: <message>", or "OK".
  std::string to_string() const;

  // Returns this status with `context` prepended to the message ("context: message").
  Status with_context(std::string_view context) const;

  // Explicitly ignores a status whose failure does not matter at this call site.
  void ignore_error() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status invalid_argument(std::string message);
Status invalid_program(std::string message);
Status incompatible_version(std::string message);
Status not_found(std::string message);
Status not_supported(std::string message);
Status out_of_range(std::string message);
Status resource_exhausted(std::string message);
Status failed_precondition(std::string message);
Status io_error(std::string message);
Status internal_error(std::string message);
Status deadline_exceeded(std::string message);
Status unavailable(std::string message);
Status unauthenticated(std::string message);
Status permission_denied(std::string message);

// A value of type T, or the non-OK Status saying why there is none.
//
// REQUIRES: a Result is built from a value or from a non-OK Status; building one
// from an OK Status is a bug and yields an Internal error instead.
// Reading value() of a failed Result is a bug: it aborts with the status message.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::remove_cvref_t<T>, Status>, "Result<Status> is meaningless");

 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status)                          // NOLINT(google-explicit-constructor)
      : state_(status.ok() ? internal_error("Result built from an OK status") : std::move(status)) {
  }

  bool ok() const { return std::holds_alternative<T>(state_); }

  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }

  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  T& checked() {
    if (!ok()) {
      std::fprintf(stderr, "et: value() of a failed Result: %s\n",
                   std::get<Status>(state_).to_string().c_str());
      std::abort();
    }
    return std::get<T>(state_);
  }

  std::variant<T, Status> state_;
};

}  // namespace et

#define ET_STATUS_CONCAT_INNER_(a, b) a##b
#define ET_STATUS_CONCAT_(a, b) ET_STATUS_CONCAT_INNER_(a, b)

// Returns the Status of `expr` (a Status or a Result) from the enclosing function
// when it is not OK.
// (Variadic, so an expression with template commas needs no extra parentheses.)
#define ET_RETURN_IF_ERROR(...)                                                       \
  do {                                                                                \
    if (auto et_status_ = ::et::internal::status_of(__VA_ARGS__); !et_status_.ok()) { \
      return et_status_;                                                              \
    }                                                                                 \
  } while (0)

// `ET_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result's value, or
// returns the Result's Status from the enclosing function.
#define ET_ASSIGN_OR_RETURN(lhs, ...) \
  ET_ASSIGN_OR_RETURN_IMPL_(ET_STATUS_CONCAT_(et_result_, __LINE__), lhs, __VA_ARGS__)
#define ET_ASSIGN_OR_RETURN_IMPL_(result, lhs, ...) \
  auto result = (__VA_ARGS__);                      \
  if (!result.ok()) return result.status();         \
  lhs = std::move(result).value()

namespace et::internal {
inline const Status& status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const Result<T>& r) {
  return r.status();
}
}  // namespace et::internal
