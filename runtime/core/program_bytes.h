// The bytes a program was loaded from: a read-only file mapping or an owned buffer.
// Shared (std::shared_ptr) by the Program and everything that points into it, so the
// bytes live as long as any method of the program does.
// Thread-safety: immutable after construction; safe to share across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace et {

class ProgramBytes {
 public:
  // Maps `path` read-only (not copied). Errors: IoError naming the path and errno text.
  // The file must not be truncated while mapped; the daemon maps only files it trusts
  // to stay put and loads client bytes with copy_of()/adopt().
  static Result<std::shared_ptr<const ProgramBytes>> map_file(const std::string& path);

  // Copies `bytes` into storage aligned for any scalar type.
  static std::shared_ptr<const ProgramBytes> copy_of(std::span<const uint8_t> bytes);

  // Takes ownership of `bytes` (operator new storage is aligned to 16 on supported hosts).
  static std::shared_ptr<const ProgramBytes> adopt(std::vector<uint8_t> bytes);

  // The bytes `part` of `whole` (REQUIRES: within whole->bytes()), keeping `whole` alive:
  // the program embedded in a bundled program, without a copy.
  static std::shared_ptr<const ProgramBytes> part_of(std::shared_ptr<const ProgramBytes> whole,
                                                     std::span<const uint8_t> part);

  ~ProgramBytes();
  ProgramBytes(const ProgramBytes&) = delete;
  ProgramBytes& operator=(const ProgramBytes&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  ProgramBytes() = default;

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // munmap'ed on destruction when set
  size_t mapping_size_ = 0;
  std::vector<uint8_t> owned_;
  std::shared_ptr<const ProgramBytes> whole_;  // part_of(): what `data_` points into
};

}  // namespace et
