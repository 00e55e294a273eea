// One table of dtypes for every way a tensor crosses the Python boundary: names (as
// numpy and torch spell them), buffer-protocol format codes, DLPack type codes and
// __array_interface__ type strings. Inputs and outputs read the same table, so the
// same dtype cannot be named two ways.
#pragma once

#include <Python.h>
#include <dlpack/dlpack.h>

#include <optional>
#include <string>
#include <string_view>

#include "etclient/client.h"

namespace etclient::python {

// "float32", "torch.float32", "bfloat16", "bool", ... -> DType.
std::optional<DType> dtype_from_name(std::string_view name);

// The dtype a buffer's format code and item size name. Only the host's byte order
// (native, '=' or '<') is accepted; codes that vary by platform are read by width.
std::optional<DType> dtype_from_buffer(const char* format, Py_ssize_t itemsize);

// The format code a result is published with. bfloat16 has none: it is published as
// an unsigned integer of its width ("H"), same shape, so readers see the right elements.
const char* buffer_format(DType dtype);
bool has_buffer_format(DType dtype);

std::optional<DType> dtype_from_dlpack(DLDataType type);
DLDataType to_dlpack(DType dtype);

// numpy's __array_interface__ typestr, e.g. "<f4" ("<u2" for bfloat16).
const char* array_typestr(DType dtype);

}  // namespace etclient::python
