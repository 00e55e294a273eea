// Conversions between the protocol's values (proto/et_serverd.proto) and the
// runtime's: dtypes, MethodMeta, input references (inline bytes or a segment range,
// bounds-checked) and outputs (inline or written into a segment range).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "et_serverd.pb.h"
#include "runtime/core/input.h"
#include "runtime/core/method_meta.h"
#include "runtime/core/value.h"
#include "server/core/decoded_input.h"

namespace et::server {

namespace pb = ::etserver::v1;

Result<ScalarType> from_proto(pb::DataType type);
pb::DataType to_proto(ScalarType type);  // DATA_TYPE_UNSPECIFIED when it has no name
void to_proto(const MethodMeta& meta, pb::MethodMeta& out);

// Decodes `in` as input `index`. Inline bytes are COPIED when `copy_inline` (the
// message dies before the method does), else pointed at. Segment bytes are pointed at,
// except integer and bool tensors, which are copied (kernels index with them; a client
// rewriting them mid-call must not get an unchecked index through).
// Errors name "inputs[<index>]" and the field: unknown dtype, rank above 16, a size
// that does not fit, strides or dim order of the wrong length, a byte count that does
// not match, a reference outside its segment or to another session's segment, a
// device the daemon cannot reach.
Status decode_input(size_t index, const pb::Value& in, const SegmentLookup& segments,
                    bool copy_inline, DecodedInput& out);

// Encodes output `index` (a runtime value) into `out`: inline, or written into the
// placement's segment range (which must be large enough).
Status encode_output(size_t index, const Value& value, const pb::OutputPlacement* placement,
                     const SegmentLookup& segments, pb::Value& out);

}  // namespace et::server
