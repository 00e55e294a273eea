// Profiles as Chrome trace event JSON (the format chrome://tracing and Perfetto's UI
// open): one complete event ("ph": "X") per operator, delegate call and delegate
// step, times in microseconds from the first execute's start, each execute on the
// same track one after the other, steps nested inside their delegate call.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/profile.h"

namespace et {

std::string chrome_trace_json(const std::vector<ExecuteProfile>& profiles);

}  // namespace et
