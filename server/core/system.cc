#include "server/core/system.h"

#include <sys/random.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace et::server {

std::string random_token() {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (uint8_t b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

const char* blocking_file_system(int fd) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x65735546UL:  // FUSE
      return "a FUSE file system";
    case 0x6969UL:  // NFS
      return "NFS";
    case 0xFF534D42UL:  // CIFS
    case 0xFE534D42UL:  // SMB2
    case 0x517BUL:      // SMB
      return "an SMB/CIFS share";
    case 0x01021997UL:  // 9P
      return "a 9P file system";
    case 0x00C36400UL:  // Ceph
      return "CephFS";
    default:
      return nullptr;
  }
}

}  // namespace et::server
