// Python objects into method inputs: the RFC's three ways in (buffer protocol, DLPack,
// torch tensors read through torch's Python API without importing torch) plus our own
// Tensors (zero copy) and Python scalars, converging on one etclient::Input.
//
// Ownership: a writable buffer or a claimed DLPack capsule pins its memory, so it is
// referenced (not copied) until the call runs, and its address and length are checked
// again right before it is copied into shared memory. A read-only buffer or a torch
// tensor pins nothing (Python shares immutable objects; a tensor can be resized under
// its object), so it is copied into shared memory at once. Either way the daemon reads
// only the client's shared memory, never the caller's.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "etclient/client.h"

namespace etclient::python {

namespace py = pybind11;

// An input given, held until the call that reads it.
struct PendingInput {
  Input input;                      // a staged SharedTensor, a scalar, or a HostTensor into `owner`
  py::object owner;                 // the object whose memory a HostTensor points into
  const void* pinned_at = nullptr;  // where that memory was, and how long it was,
  Py_ssize_t pinned_len = 0;        //   checked again before it is read
  std::shared_ptr<Py_buffer> view;  // a writable buffer held open (pinned)
  std::shared_ptr<DLManagedTensor> capsule;  // a claimed DLPack tensor (deleter on release)
};

// A single object counts as one input, a list or tuple as several (a numpy array,
// though a sequence too, is one input). Raises TypeError for str, dict and the like.
std::vector<py::object> as_input_sequence(const py::handle& inputs);

// Converts input `index` of a call to `method`. Raises TypeError or ValueError naming
// the input and saying what to do.
PendingInput convert_input(const py::handle& object, size_t index, Method& method);

// Re-checks a pinned input and copies it into shared memory; raises ValueError if its
// memory moved or changed size since it was given (e.g. numpy's resize(refcheck=False)).
// Without `recheck` (for an input converted in the same call, the GIL held throughout:
// no Python code ran in between) it only copies.
Input stage_pending(PendingInput& pending, size_t index, Method& method, bool recheck = true);

}  // namespace etclient::python
