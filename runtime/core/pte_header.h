// The container around a .pte program: the flatbuffer root offset, the 'ET12'
// file identifier and the optional extended header that locates the segments
// (docs: shared FORMAT.md section 1).
//
// parse_pte_header() only reads bytes it has checked are there, so it is safe on
// any input; it verifies the container, not the flatbuffer inside it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/core/status.h"

namespace et {

// The identifier of the program format this runtime reads.
inline constexpr std::string_view kProgramIdentifier = "ET12";

// Where the parts of a verified .pte file are, as byte offsets into the file.
struct PteHeader {
  uint32_t root_offset = 0;          // the flatbuffer root table
  bool has_extended_header = false;  // false: no segments, the whole file is the program
  uint64_t program_size = 0;         // bytes of the flatbuffer part, headers included
  uint64_t segment_base_offset = 0;  // where segment data starts; 0 without segments
  uint64_t segment_data_size = 0;    // bytes of segment data (0 when the writer omitted it)
};

// Verifies the container of a .pte file held in `file` (the whole file).
// Errors: InvalidProgram for a truncated or inconsistent container (the message
// names the field and the bytes involved); IncompatibleVersion for another 'ET??'
// identifier; InvalidArgument for a bundled program ('BP08': Program::load() unwraps
// those before this is called) or a file that is not an ExecuTorch program at all.
Result<PteHeader> parse_pte_header(std::span<const uint8_t> file);

}  // namespace et
