// An input as the core binds it: a runtime value and what keeps its memory alive.
// Transports decode their wire formats into these (the et protocol's value codec,
// KServe's tensors); the core never sees a wire format.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "runtime/core/input.h"
#include "runtime/core/status.h"
#include "server/core/segment.h"

namespace et::server {

// Finds one of the calling session's segments; NotFound when it has none by that id.
using SegmentLookup = std::function<Result<std::shared_ptr<Segment>>(uint64_t id)>;

// The most elements an input tensor may have (its bytes are bounded again by what the
// transport carries).
inline constexpr uint64_t kMostInputElements = uint64_t{1} << 40;

// The element count of a tensor of `sizes`, as every transport's decoder checks it:
// each size 0 to 2^31-1 (the runtime's sizes are 32-bit), at most kMostInputElements in
// all. Errors are the decoder's to word: the first size out of range, else too many.
struct ElementCount {
  uint64_t elements = 0;
  std::optional<int64_t> bad_size;
  bool too_many = false;
  bool ok() const { return !bad_size && !too_many; }
};
ElementCount count_elements(std::span<const int64_t> sizes);

// An input ready for Method::set_inputs(), and what keeps its memory alive.
struct DecodedInput {
  InputValue value;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> copy;         // bytes copied out of a segment or message
  std::shared_ptr<Segment> segment;  // the segment `value` points into, if any
};

}  // namespace et::server
