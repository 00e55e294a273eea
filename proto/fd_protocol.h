// The descriptor socket's wire format (docs/protocol.md), shared by the daemon and its
// clients. Depends on nothing else in the project.
#pragma once

#include <cstdint>

namespace et::wire {

// Wire format constants (docs/protocol.md).
inline constexpr char kFdMagic[4] = {'E', 'T', 'F', 'D'};
inline constexpr uint16_t kFdVersion = 1;
inline constexpr uint16_t kFdRegisterSegment = 1;  // a memfd: reply's id is a segment id
inline constexpr uint16_t kFdLoadProgram = 2;      // an open .pte file: reply's id is a program id
struct FdRequest {
  char magic[4];
  uint16_t version;
  uint16_t kind;
  char session[32];  // the session token, hex
};
struct FdReply {
  uint32_t code;  // 0: OK, else the et::StatusCode
  uint32_t reserved;
  uint64_t id;        // the segment id
  char message[240];  // NUL-terminated error message
};
static_assert(sizeof(FdRequest) == 40 && sizeof(FdReply) == 256);

}  // namespace et::wire
