// An external data file (.ptd): named blobs, usually a program's weights, that
// ExecuTorch writes beside a .pte when weights are kept out of it (shared FORMAT.md
// section 3, "location EXTERNAL"; the container: a flatbuffer with identifier 'FT01',
// an 'FH01' header at byte 8 that locates it and the segment data after it).
//
// DataFile::load() verifies the whole file before returning: the header, the
// flatbuffer, every segment inside the file, every key unique and every named blob
// inside its segment, and every recorded tensor layout consistent with its bytes.
// After a successful load no lookup reads outside the bytes.
//
// Ownership: the DataFile holds its bytes; the spans it returns point into them. A
// Program loaded with a DataFile holds a shared_ptr to it.
// Thread-safety: immutable after load; safe to share across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/program_bytes.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"

namespace et {

// The identifier of the external data format this runtime reads.
inline constexpr std::string_view kDataFileIdentifier = "FT01";

// The tensor a blob holds, when the file records it (backend blobs have none).
struct DataLayout {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
};

class DataFile {
 public:
  // Verifies and loads a .ptd from its bytes.
  // Errors: InvalidArgument for a file that is not a .ptd (naming what it looks like,
  // e.g. a .pte given where its data file belongs); InvalidProgram naming the first
  // inconsistency (truncated, a segment outside the file, a duplicate key, a layout
  // whose bytes do not fit).
  static Result<std::shared_ptr<const DataFile>> load(std::shared_ptr<const ProgramBytes> bytes);
  // Maps `path` and loads it. Errors: IoError, plus those of load(), naming the path.
  static Result<std::shared_ptr<const DataFile>> load_file(const std::string& path);

  // The blob stored under `key`. NotFound naming the key and how many keys there are.
  Result<std::span<const uint8_t>> find(std::string_view key) const;
  // The tensor layout recorded for `key`; nullptr when the key is absent or has none.
  const DataLayout* layout(std::string_view key) const;
  // Every key, sorted.
  std::vector<std::string_view> keys() const;
  size_t num_keys() const { return entries_.size(); }

  std::span<const uint8_t> bytes() const { return bytes_->bytes(); }

 private:
  struct Entry {
    std::span<const uint8_t> bytes;
    std::optional<DataLayout> layout;
  };
  DataFile() = default;

  std::shared_ptr<const ProgramBytes> bytes_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace et
