#include "server/transport/rpc_code.h"

#include <spdlog/spdlog.h>

#include "runtime/core/printable.h"

namespace et::server {

uint32_t rpc_code(const Status& status) {
  // gRPC's numbering (grpc/status.h), spelled out: this file needs no gRPC.
  enum : uint32_t {
    kOk = 0,
    kInvalidArgument = 3,
    kDeadlineExceeded = 4,
    kNotFound = 5,
    kPermissionDenied = 7,
    kResourceExhausted = 8,
    kFailedPrecondition = 9,
    kOutOfRange = 11,
    kUnimplemented = 12,
    kInternal = 13,
    kUnavailable = 14,
    kUnauthenticated = 16,
  };
  uint32_t code = kInternal;
  switch (status.code()) {
    case StatusCode::kOk:
      return kOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kInvalidProgram:
      code = kInvalidArgument;
      break;
    case StatusCode::kIncompatibleVersion:
    case StatusCode::kFailedPrecondition:
      code = kFailedPrecondition;
      break;
    case StatusCode::kNotFound:
      code = kNotFound;
      break;
    case StatusCode::kNotSupported:
      code = kUnimplemented;
      break;
    case StatusCode::kOutOfRange:
      code = kOutOfRange;
      break;
    case StatusCode::kResourceExhausted:
      code = kResourceExhausted;
      break;
    case StatusCode::kDeadlineExceeded:
      code = kDeadlineExceeded;
      break;
    case StatusCode::kUnavailable:
      code = kUnavailable;
      break;
    case StatusCode::kUnauthenticated:
      code = kUnauthenticated;
      break;
    case StatusCode::kPermissionDenied:
      code = kPermissionDenied;
      break;
    case StatusCode::kIoError:
    case StatusCode::kInternal:
      code = kInternal;
      break;
  }
  if (code == kInternal) spdlog::error("internal error: {}", printable(status.message()));
  return code;
}

}  // namespace et::server
