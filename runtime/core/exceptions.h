// Where exceptions stop. Errors are values in this project, but the libraries under it
// (the standard library, gRPC, protobuf) throw, mostly std::bad_alloc for a size that a
// program or a request chose. Every thread entry and every call boundary runs its work
// through catch_exceptions(), so no exception ends the daemon or skips a guard's
// bookkeeping.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "runtime/core/status.h"

namespace et {

// Runs `run` (returning Status or Result<T>); an exception becomes that type's error:
// ResourceExhausted for bad_alloc, Internal for anything else. `where` starts the
// message ("descriptor socket: ", or empty).
template <typename F>
auto catch_exceptions(std::string_view where, F&& run) -> decltype(run()) {
  try {
    return run();
  } catch (const std::bad_alloc&) {
    return resource_exhausted(std::string(where) +
                              "out of memory: a size the program or request chose is more "
                              "than the daemon can allocate");
  } catch (const std::exception& e) {
    return internal_error(std::string(where) + "unexpected failure: " + e.what());
  } catch (...) {
    return internal_error(std::string(where) + "unexpected failure");
  }
}

}  // namespace et
