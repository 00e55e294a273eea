// The package's exceptions (etclient.Error and its subclasses, which also derive from
// the matching builtin: InvalidArgument is a ValueError, NotFound a KeyError,
// InputTypeError a TypeError, Unavailable a ConnectionError, ...; Error itself is a
// RuntimeError, which ExecuTorch's bindings raise for all of these) and the one place a
// Status becomes one.
#pragma once

#include <pybind11/pybind11.h>

#include "etclient/status.h"

namespace etclient::python {

namespace py = pybind11;

// Creates the exception classes in `module`.
void bind_errors(py::module_& module);

// Raises the exception for `status` (a C++ exception pybind11 turns into it).
[[noreturn]] void raise_status(const Status& status);

// Raises etclient.InvalidArgument (a bad input value) or etclient.InputTypeError (an
// input of a type a method cannot take) with `message`.
[[noreturn]] void raise_invalid_argument(const std::string& message);
[[noreturn]] void raise_input_type(const std::string& message);

}  // namespace etclient::python
