// etclient.Tensor: a tensor in the client's shared memory (a result, or an input
// buffer from Runtime.empty() / Method.input_buffer()). It owns its slot and lends the
// memory out: buffer protocol (strides in bytes), __array_interface__ (so
// numpy.asarray() copies nothing), __dlpack__/__dlpack_device__ (so torch.from_dlpack()
// copies nothing); a reader keeps the Tensor, and so the slot, alive.
#pragma once

#include <pybind11/pybind11.h>

#include "etclient/client.h"

namespace etclient::python {

namespace py = pybind11;

struct PyTensor {
  SharedTensor tensor;
};

// Registers etclient.Tensor in `module`.
void bind_tensor(py::module_& module);

}  // namespace etclient::python
