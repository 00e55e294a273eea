// Semantic verification of a .pte program (internal to runtime/).
//
// Runs after the flatbuffer verifier has proved every table, vector and string lies
// inside the buffer; checks everything the format leaves to the reader: indices into
// values, operators, delegates, segments and buffers; tensor shapes and dim orders;
// planned and constant data fitting where they point.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/core/pte_header.h"
#include "runtime/core/status.h"
#include "runtime/schema/program_generated.h"

namespace et {

class DataFile;

// REQUIRES: `root` passed flatbuffers verification over file[0, header.program_size).
// `data` is the program's external data file, or nullptr when none was given (tensors
// kept in external data are then checked for a name only: Method::load refuses a method
// that holds one).
Status verify_program(const fb::Program& root, std::span<const uint8_t> file,
                      const PteHeader& header, const DataFile* data);

// Bytes of tensor data for `tensor` at its declared (upper-bound) sizes.
// REQUIRES: the tensor passed verify_program().
size_t declared_nbytes(const fb::Tensor& tensor);

}  // namespace et
