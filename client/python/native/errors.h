// The package's exceptions (etclient.Error and its subclasses, which also derive from
// the matching builtin: InvalidArgument is a ValueError, NotFound a LookupError,
// Unavailable a ConnectionError, ...) and the one place a Status becomes one.
#pragma once

#include <pybind11/pybind11.h>

#include "etclient/status.h"

namespace etclient::python {

namespace py = pybind11;

// Creates the exception classes in `module`.
void bind_errors(py::module_& module);

// Raises the exception for `status` (a C++ exception pybind11 turns into it).
[[noreturn]] void raise_status(const Status& status);

}  // namespace etclient::python
