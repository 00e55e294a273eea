#include "runtime/core/pte_header.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "runtime/core/printable.h"

namespace et {
namespace {

constexpr size_t kIdentifierOffset = 4;
constexpr size_t kMinimumFileSize = 8;  // root offset + identifier
constexpr size_t kExtendedHeaderOffset = 8;
constexpr std::string_view kExtendedHeaderMagic = "eh00";
constexpr uint32_t kExtendedHeaderMinimumLength = 24;  // through segment_base_offset
constexpr uint32_t kExtendedHeaderLengthWithDataSize = 32;
constexpr std::string_view kBundledIdentifier = "BP08";

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, as is every supported host
  return v;
}

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Status check_identifier(std::string_view id) {
  if (id == kProgramIdentifier) return Status();
  if (id == kBundledIdentifier) {
    return invalid_argument(
        "a bundled program (identifier 'BP08') where a plain .pte must be: Program::load() "
        "unwraps one bundle, not a bundle inside a bundle");
  }
  if (id.substr(0, 2) == "ET") {
    return incompatible_version(fmt::format(
        "program format '{}' is not the '{}' this runtime reads: re-export the model with an "
        "ExecuTorch release that writes '{}' (1.0 or later)",
        printable(id), kProgramIdentifier, kProgramIdentifier));
  }
  return invalid_argument(
      fmt::format("not an ExecuTorch program: bytes 4..7 are '{}' where a .pte has '{}'",
                  printable(id), kProgramIdentifier));
}

}  // namespace

Result<PteHeader> parse_pte_header(std::span<const uint8_t> file) {
  const size_t size = file.size();
  if (size < kMinimumFileSize) {
    return invalid_program(fmt::format(
        "file is {} bytes; a .pte needs at least {} (root offset and identifier): the file is "
        "truncated or not a program",
        size, kMinimumFileSize));
  }
  std::string_view id(reinterpret_cast<const char*>(file.data()) + kIdentifierOffset, 4);
  ET_RETURN_IF_ERROR(check_identifier(id));

  PteHeader header;
  header.root_offset = load_u32(file.data());
  header.program_size = size;

  const bool room_for_magic = size >= kExtendedHeaderOffset + 8;
  if (room_for_magic &&
      std::string_view(reinterpret_cast<const char*>(file.data()) + kExtendedHeaderOffset, 4) ==
          kExtendedHeaderMagic) {
    const uint32_t length = load_u32(file.data() + kExtendedHeaderOffset + 4);
    if (length < kExtendedHeaderMinimumLength) {
      return invalid_program(fmt::format("extended header length is {}; at least {} is required",
                                         length, kExtendedHeaderMinimumLength));
    }
    if (kExtendedHeaderOffset + length > size) {
      return invalid_program(fmt::format(
          "extended header of {} bytes runs past the end of the {}-byte file", length, size));
    }
    const uint8_t* eh = file.data() + kExtendedHeaderOffset;
    header.has_extended_header = true;
    header.program_size = load_u64(eh + 8);
    header.segment_base_offset = load_u64(eh + 16);
    header.segment_data_size = length >= kExtendedHeaderLengthWithDataSize ? load_u64(eh + 24) : 0;

    if (header.program_size < kExtendedHeaderOffset + length || header.program_size > size) {
      return invalid_program(fmt::format(
          "extended header says the program part is {} bytes, but the file is {} bytes and its "
          "headers alone take {}",
          header.program_size, size, kExtendedHeaderOffset + length));
    }
    if (header.segment_base_offset != 0) {
      if (header.segment_base_offset < header.program_size) {
        return invalid_program(
            fmt::format("segment data starts at {}, inside the {}-byte program part",
                        header.segment_base_offset, header.program_size));
      }
      if (header.segment_base_offset > size ||
          header.segment_data_size > size - header.segment_base_offset) {
        return invalid_program(
            fmt::format("segments need bytes {}..{} but the file is {} bytes: it is truncated",
                        header.segment_base_offset,
                        header.segment_base_offset + header.segment_data_size, size));
      }
    }
  }

  if (header.root_offset < kMinimumFileSize || header.root_offset >= header.program_size ||
      header.root_offset % 4 != 0) {
    return invalid_program(
        fmt::format("flatbuffer root offset {} is outside the {}-byte program part or misaligned",
                    header.root_offset, header.program_size));
  }
  return header;
}

}  // namespace et
