// What the core asks of the operating system.
#pragma once

#include <cstddef>
#include <string>

namespace et::server {

// 32 random hex digits (session tokens, the daemon's instance id).
std::string random_token();
// The daemon's resident memory (/proc/self/statm).
size_t resident_bytes();
// What kind of file system `fd` is on when its reads may wait on a network or another
// process (a client could hand over a file whose read never returns); null for local
// file systems.
const char* blocking_file_system(int fd);

}  // namespace et::server
