#include "inputs.h"

#include <cstring>
#include <limits>

#include "dtypes.h"
#include "errors.h"
#include "tensor.h"

namespace etclient::python {
namespace {

constexpr size_t kMaxRank = 16;

std::string type_name(const py::handle& o) {
  PyTypeObject* t = Py_TYPE(o.ptr());
  return t->tp_name ? t->tp_name : "object";
}

[[noreturn]] void type_error(size_t i, const std::string& what) {
  raise_input_type("input " + std::to_string(i) + ": " + what);
}
[[noreturn]] void value_error(size_t i, const std::string& what) {
  raise_invalid_argument("input " + std::to_string(i) + ": " + what);
}

const TensorMeta* declared_tensor(Method& method, size_t i) {
  const auto& inputs = method.meta().inputs;
  return i < inputs.size() && inputs[i].tensor ? &*inputs[i].tensor : nullptr;
}

std::string declared_kind(Method& method, size_t i) {
  const auto& inputs = method.meta().inputs;
  return i < inputs.size() ? inputs[i].kind : "nothing (the method has fewer inputs)";
}

// Element strides of a packed tensor of `sizes` laid out in `order`.
std::vector<int64_t> strides_for(const std::vector<int64_t>& sizes,
                                 const std::vector<uint32_t>& order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[order[k]] = stride;
    stride *= std::max<int64_t>(1, sizes[order[k]]);
  }
  return strides;
}

// Copies `host` into shared memory: a fresh slot, or with `scratch` (staging right
// before the call) the method's reused buffer for that input.
Input stage(Method& method, size_t i, const HostTensor& host, bool scratch = false) {
  auto staged = scratch ? method.stage_scratch(i, host) : method.stage_input(i, host);
  if (!staged.ok()) raise_status(staged.status());
  return std::move(staged).value();
}

// A Py_buffer held open (the exporter keeps the memory in place while it is), released
// with the GIL.
std::shared_ptr<Py_buffer> get_buffer(const py::handle& object, int flags) {
  auto view = std::shared_ptr<Py_buffer>(new Py_buffer{}, [](Py_buffer* v) {
    py::gil_scoped_acquire gil;
    PyBuffer_Release(v);
    delete v;
  });
  // On failure view->obj stays null, and releasing it does nothing.
  if (PyObject_GetBuffer(object.ptr(), view.get(), flags) != 0) throw py::error_already_set();
  return view;
}

PendingInput from_buffer(const py::handle& object, size_t i, Method& method) {
  std::shared_ptr<Py_buffer> view;
  try {
    view = get_buffer(object, PyBUF_RECORDS_RO);
  } catch (py::error_already_set& e) {
    type_error(i, "a " + type_name(object) + " whose buffer cannot be read with strides (" +
                      e.what() + "); pass a numpy array or a memoryview");
  }
  if (view->ndim > static_cast<int>(kMaxRank)) {
    value_error(
        i, "has " + std::to_string(view->ndim) + " dimensions; et-serverd tensors have at most 16");
  }
  const TensorMeta* want = declared_tensor(method, i);
  HostTensor host;
  host.data = view->buf;
  const std::optional<DType> dtype = dtype_from_buffer(view->format, view->itemsize);
  // The narrow raw-bytes rule, for a dtype no format code names (bfloat16): a flat,
  // packed run of bytes that fills the input exactly takes the input's declared dtype,
  // shape and layout.
  const bool raw_bytes = want && !has_buffer_format(want->dtype) && view->ndim == 1 &&
                         view->itemsize == 1 && view->strides && view->strides[0] == 1 &&
                         static_cast<uint64_t>(view->len) == want->nbytes && !want->dynamic;
  if (raw_bytes) {
    host.dtype = want->dtype;
    host.sizes = want->sizes;
    host.strides = strides_for(want->sizes, want->dim_order.size() == want->sizes.size()
                                                ? want->dim_order
                                                : std::vector<uint32_t>{});
    if (want->dim_order.size() != want->sizes.size()) host.strides.clear();
  } else {
    if (!dtype) {
      const std::string format = view->format ? view->format : "B";
      std::string hint = "convert it to a dtype et-serverd has (e.g. numpy's astype)";
      if (format[0] == '>' || format[0] == '!') {
        hint = "it is big-endian: convert it to the host's byte order first";
      } else if (want && !has_buffer_format(want->dtype)) {
        hint = std::string("this input is ") + dtype_name(want->dtype) +
               ", which no format code names: pass its raw bytes as a flat packed uint8 buffer "
               "of exactly " +
               std::to_string(want->nbytes) + " bytes, or a DLPack tensor";
      }
      type_error(i, "format '" + format + "' (item size " + std::to_string(view->itemsize) +
                        ") names no dtype et-serverd has; " + hint);
    }
    host.dtype = *dtype;
    for (int d = 0; d < view->ndim; ++d) {
      host.sizes.push_back(view->shape[d]);
      const Py_ssize_t stride = view->strides ? view->strides[d] : 0;
      if (view->strides && stride % view->itemsize != 0) {
        value_error(i, "stride " + std::to_string(stride) + " of dimension " + std::to_string(d) +
                           " is not a multiple of the item size " + std::to_string(view->itemsize) +
                           "; copy it first (numpy.ascontiguousarray)");
      }
      if (view->strides) host.strides.push_back(stride / view->itemsize);
    }
  }
  if (view->buf == nullptr && view->len > 0) value_error(i, "its buffer has no memory");
  PendingInput pending;
  if (view->readonly) {
    // Read-only memory pins nothing (and may be shared): copy it now.
    pending.input = stage(method, i, host);
    return pending;
  }
  // The held view is the one reference the client keeps to the object (view->obj).
  pending.input = host;
  pending.pinned_at = view->buf;
  pending.pinned_len = view->len;
  pending.view = std::move(view);  // held open: a well-behaved exporter cannot move it now
  return pending;
}

std::vector<int64_t> int_list(const py::object& sequence) {
  std::vector<int64_t> out;
  for (const py::handle& item : sequence) out.push_back(py::cast<int64_t>(item));
  return out;
}

// torch's Python API, used only when the caller already imported torch.
bool claims_to_be_torch(const py::handle& object) {
  const char* name = Py_TYPE(object.ptr())->tp_name;
  if (name == nullptr) return false;
  return std::strncmp(name, "torch.", 6) == 0 || std::strcmp(name, "Tensor") == 0 ||
         std::strcmp(name, "Parameter") == 0;
}

// torch.Tensor when the caller imported torch, else null: a lookup in sys.modules by an
// interned name (this runs for every input of every call).
PyObject* imported_torch_tensor_type() {
  static PyObject* const kTorch = PyUnicode_InternFromString("torch");
  PyObject* torch = PyDict_GetItemWithError(PyImport_GetModuleDict(), kTorch);  // borrowed
  if (torch == nullptr || torch == Py_None) {
    PyErr_Clear();
    return nullptr;
  }
  static PyObject* const kTensor = PyUnicode_InternFromString("Tensor");
  PyObject* type = PyObject_GetAttr(torch, kTensor);  // new reference
  if (type == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(type);  // torch.Tensor lives as long as torch
  return PyType_Check(type) ? type : nullptr;
}

PendingInput from_torch(const py::handle& object, size_t i, Method& method) {
  py::object modules = py::module_::import("sys").attr("modules");
  py::object torch = modules.attr("get")("torch");
  if (torch.is_none()) {
    type_error(i, "a " + type_name(object) +
                      " that claims to be a torch tensor, but torch was never imported: it is "
                      "not one");
  }
  py::object tensor_type = torch.attr("Tensor");
  // The real type, not __class__ (which an object can fake).
  if (!PyType_IsSubtype(Py_TYPE(object.ptr()),
                        reinterpret_cast<PyTypeObject*>(tensor_type.ptr()))) {
    type_error(i, "a " + type_name(object) + " that claims to be a torch tensor but is not one");
  }
  const py::object t = py::reinterpret_borrow<py::object>(object);
  if (py::str(t.attr("layout")).cast<std::string>() != "torch.strided") {
    type_error(i, "a " + py::str(t.attr("layout")).cast<std::string>() +
                      " torch tensor; pass a dense one (x.to_dense())");
  }
  if (py::hasattr(t, "is_neg") && t.attr("is_neg")().cast<bool>()) {
    value_error(i,
                "a negated torch view (its memory holds the values before the sign flip): "
                "pass x.resolve_neg()");
  }
  if (py::hasattr(t, "is_conj") && t.attr("is_conj")().cast<bool>()) {
    value_error(i,
                "a conjugated torch view (its memory holds the values before conjugation): "
                "pass x.resolve_conj()");
  }
  const std::string device = py::str(t.attr("device")).cast<std::string>();
  const std::string device_type = t.attr("device").attr("type").cast<std::string>();
  if (device_type == "cuda") {
    value_error(i, "a torch tensor on " + device +
                       "; et-serverd runs this program on the CPU: pass x.cpu()");
  }
  if (device_type != "cpu") {
    value_error(i, "a torch tensor that is on device " + device +
                       ": only CPU and CUDA tensors hold memory a program can read, and "
                       "et-serverd runs this program on the CPU: pass a CPU tensor");
  }
  const std::string dtype_text = py::str(t.attr("dtype")).cast<std::string>();
  const std::optional<DType> dtype = dtype_from_name(dtype_text);
  if (!dtype) type_error(i, "a torch tensor of " + dtype_text + ", a dtype et-serverd lacks");
  const auto itemsize = t.attr("element_size")().cast<int64_t>();
  auto shape = int_list(t.attr("shape"));
  auto strides = int_list(t.attr("stride")());
  if (itemsize != static_cast<int64_t>(element_size(*dtype)) || strides.size() != shape.size()) {
    value_error(i, "a torch tensor that describes itself inconsistently (dtype " + dtype_text +
                       ", element size " + std::to_string(itemsize) + ", " +
                       std::to_string(shape.size()) + " sizes, " + std::to_string(strides.size()) +
                       " strides)");
  }
  if (shape.size() > kMaxRank) {
    value_error(i, "has " + std::to_string(shape.size()) +
                       " dimensions; et-serverd tensors have at most 16");
  }
  const auto data = t.attr("data_ptr")().cast<uintptr_t>();
  // The elements must lie inside the tensor's storage, or the tensor lies.
  int64_t numel = 1, lo = 0, hi = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) value_error(i, "a torch tensor with a negative size");
    numel *= shape[d];
  }
  if (numel > 0) {
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t reach = (shape[d] - 1) * strides[d] * itemsize;
      (reach < 0 ? lo : hi) += reach;
    }
    py::object storage =
        py::hasattr(t, "untyped_storage") ? t.attr("untyped_storage")() : t.attr("storage")();
    const auto base = storage.attr("data_ptr")().cast<uintptr_t>();
    const auto size = storage.attr("nbytes")().cast<int64_t>();
    const auto first = static_cast<int64_t>(data - base) + lo;
    const auto last = static_cast<int64_t>(data - base) + hi + itemsize;
    if (data < base || first < 0 || last > size) {
      value_error(i, "a torch tensor whose elements lie outside its storage");
    }
  }
  HostTensor host{reinterpret_cast<const void*>(data), *dtype, std::move(shape),
                  std::move(strides)};
  PendingInput pending;
  pending.input = stage(method, i, host);  // a tensor pins nothing: copy it now
  return pending;
}

PendingInput from_dlpack(py::object capsule, const py::handle& object, size_t i) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    type_error(
        i, "a " + type_name(object) + " whose __dlpack__ handed over no unclaimed DLPack capsule");
  }
  auto* raw = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (raw == nullptr) {
    PyErr_Clear();
    type_error(i, "a DLPack capsule with nothing in it");
  }
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // claimed: ours to free now
  std::shared_ptr<DLManagedTensor> held(raw, [](DLManagedTensor* m) {
    py::gil_scoped_acquire gil;  // producers' deleters may touch Python objects
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& t = held->dl_tensor;
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost) {
    const char* kind = t.device.device_type == kDLCUDA ? "cuda" : "a non-host device";
    value_error(i, std::string("DLPack memory on ") + kind + " (device type " +
                       std::to_string(t.device.device_type) + ", index " +
                       std::to_string(t.device.device_id) +
                       "); et-serverd runs this program on the CPU: copy it to the host first");
  }
  if (t.ndim < 0 || t.ndim > static_cast<int32_t>(kMaxRank)) {
    value_error(
        i, "has " + std::to_string(t.ndim) + " dimensions; et-serverd tensors have at most 16");
  }
  const std::optional<DType> dtype = dtype_from_dlpack(t.dtype);
  if (!dtype) {
    type_error(i, "DLPack dtype (code " + std::to_string(t.dtype.code) + ", " +
                      std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                      " lanes) is not one et-serverd has");
  }
  HostTensor host;
  host.dtype = *dtype;
  host.sizes.assign(t.shape, t.shape + t.ndim);
  if (t.strides) host.strides.assign(t.strides, t.strides + t.ndim);  // null: packed
  int64_t numel = 1;
  for (int64_t s : host.sizes) numel *= std::max<int64_t>(0, s);
  if (t.data == nullptr && numel > 0) value_error(i, "a DLPack tensor with no memory");
  host.data = static_cast<const uint8_t*>(t.data) + t.byte_offset;
  PendingInput pending;
  pending.input = host;  // a claimed capsule pins its memory: read it when the call runs
  pending.capsule = std::move(held);
  pending.owner = py::reinterpret_borrow<py::object>(object);
  return pending;
}

}  // namespace

std::vector<py::object> as_input_sequence(const py::handle& inputs) {
  if (PyUnicode_Check(inputs.ptr())) {
    raise_input_type("inputs: a str is not a tensor or a list of inputs");
  }
  std::vector<py::object> out;
  if (PyList_Check(inputs.ptr()) || PyTuple_Check(inputs.ptr())) {
    for (const py::handle& item : inputs) out.push_back(py::reinterpret_borrow<py::object>(item));
  } else {
    out.push_back(py::reinterpret_borrow<py::object>(inputs));  // one input, even an array
  }
  return out;
}

PendingInput convert_input(const py::handle& object, size_t i, Method& method) {
  PendingInput pending;
  if (py::isinstance<PyTensor>(object)) {  // already in shared memory: zero copy
    pending.input = object.cast<const PyTensor&>().tensor;
    pending.owner = py::reinterpret_borrow<py::object>(object);
    return pending;
  }
  if (object.is_none()) {
    type_error(i, "None, but the method takes a " + declared_kind(method, i) + " here");
  }
  if (PyBool_Check(object.ptr())) {
    pending.input = object.ptr() == Py_True;
    return pending;
  }
  if (PyLong_Check(object.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(object.ptr(), &overflow);
    if (overflow) value_error(i, "the int does not fit in 64 bits");
    pending.input = static_cast<int64_t>(v);
    return pending;
  }
  if (PyFloat_Check(object.ptr())) {
    pending.input = PyFloat_AsDouble(object.ptr());
    return pending;
  }
  // A real torch tensor (or subclass) when torch is imported; a fake one either way.
  PyObject* tensor_type = imported_torch_tensor_type();
  const bool is_torch_tensor =
      tensor_type != nullptr &&
      PyType_IsSubtype(Py_TYPE(object.ptr()), reinterpret_cast<PyTypeObject*>(tensor_type));
  if (is_torch_tensor || claims_to_be_torch(object)) return from_torch(object, i, method);
  if (PyObject_CheckBuffer(object.ptr())) return from_buffer(object, i, method);
  if (PyCapsule_CheckExact(object.ptr())) {
    return from_dlpack(py::reinterpret_borrow<py::object>(object), object, i);
  }
  if (py::hasattr(object, "__dlpack__")) {
    py::object capsule;
    try {
      capsule = object.attr("__dlpack__")();
    } catch (py::error_already_set& e) {
      type_error(i, "a " + type_name(object) + " whose __dlpack__() failed: " + e.what());
    }
    return from_dlpack(capsule, object, i);
  }
  std::string hint =
      "pass a numpy array, a buffer, a DLPack tensor, a torch tensor, or a "
      "Python int, float or bool";
  if (PyList_Check(object.ptr()) || PyTuple_Check(object.ptr())) {
    hint = "nested sequences are not tensors: pass numpy.asarray(...) of it";
  }
  type_error(i, "a " + type_name(object) + " is not a tensor; " + hint);
}

Input stage_pending(PendingInput& pending, size_t i, Method& method, bool recheck) {
  auto* host = std::get_if<HostTensor>(&pending.input);
  if (host == nullptr) return pending.input;  // staged already, or a scalar
  if (pending.view && recheck) {
    // Verify the pin: the same memory, the same length (an address alone is not enough).
    std::shared_ptr<Py_buffer> now;
    try {
      now = get_buffer(py::handle(pending.view->obj), PyBUF_RECORDS_RO);
    } catch (py::error_already_set&) {
      value_error(i, "its buffer can no longer be read; set the inputs again");
    }
    if (now->buf != pending.pinned_at || now->len != pending.pinned_len) {
      value_error(i,
                  "its memory moved or changed size since it was set (e.g. numpy "
                  "resize(refcheck=False)); set the inputs again");
    }
  }
  return stage(method, i, *host, /*scratch=*/true);
}

}  // namespace etclient::python
