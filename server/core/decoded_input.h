// An input as the core binds it: a runtime value and what keeps its memory alive.
// Transports decode their wire formats into these (the et protocol's value codec,
// KServe's tensors); the core never sees a wire format.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/input.h"
#include "runtime/status.h"
#include "server/core/segment.h"

namespace et::server {

// Finds one of the calling session's segments; NotFound when it has none by that id.
using SegmentLookup = std::function<Result<std::shared_ptr<Segment>>(uint64_t id)>;

// An input ready for Method::set_inputs(), and what keeps its memory alive.
struct DecodedInput {
  InputValue value;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> copy;         // bytes copied out of a segment or message
  std::shared_ptr<Segment> segment;  // the segment `value` points into, if any
};

}  // namespace et::server
