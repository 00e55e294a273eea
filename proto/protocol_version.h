// The version of the protocol between clients and et-serverd (proto/et_serverd.proto
// and the fast path). Raised when a change breaks clients or daemons of the version
// before; both sides send it when a session opens and refuse a peer of another one.
#pragma once

#include <cstdint>

namespace et::wire {

inline constexpr uint32_t kProtocolVersion = 1;

}  // namespace et::wire
