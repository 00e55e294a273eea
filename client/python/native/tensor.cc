#include "tensor.h"

#include <dlpack/dlpack.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <sstream>

#include "dtypes.h"

namespace etclient::python {
namespace {

py::tuple to_tuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

// DLPack 1.0's versioned tensor (the spec's ABI; Debian's dlpack.h is 0.6 and lacks it):
// what a consumer asking for max_version >= (1, 0) gets, with flags.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLPackFlagIsCopied = uint64_t{1} << 1;

// What a DLPack capsule hands out: the description, and a copy of the SharedTensor
// that keeps the slot mapped until the consumer calls the deleter.
struct Exported {
  DLManagedTensor managed{};
  DLManagedTensorVersioned versioned{};
  SharedTensor tensor;
  std::string copy;  // the elements in C order, when a copy was asked for
  std::vector<int64_t> shape, strides;
};

void delete_exported(DLManagedTensor* managed) {
  delete static_cast<Exported*>(managed->manager_ctx);  // no Python objects: no GIL needed
}
void delete_exported_versioned(DLManagedTensorVersioned* managed) {
  delete static_cast<Exported*>(managed->manager_ctx);
}

py::bytes to_bytes(const PyTensor& self);

// Whether the consumer's max_version (a (major, minor) tuple, or None) takes DLPack 1.x.
bool takes_versioned(const py::object& max_version) {
  if (max_version.is_none()) return false;
  const auto version = max_version.cast<std::pair<int, int>>();
  return version.first >= 1;
}

// The array API's __dlpack__ (DLPack 1.0's keywords): `stream` changes nothing for CPU
// memory; `dl_device` must be the CPU; copy=True exports a copy of the elements; a
// consumer taking DLPack 1.x gets a versioned capsule (writable: no read-only flag).
py::capsule export_dlpack(const PyTensor& self, const py::object& /*stream*/,
                          const py::object& max_version, const py::object& dl_device,
                          const py::object& copy) {
  if (!dl_device.is_none()) {
    const auto device = dl_device.cast<std::pair<int, int>>();
    if (device.first != kDLCPU && device.first != kDLCUDAHost) {
      PyErr_SetString(PyExc_BufferError,
                      ("__dlpack__: dl_device (" + std::to_string(device.first) + ", " +
                       std::to_string(device.second) +
                       ") is not the CPU, where this tensor is; copy it there yourself")
                          .c_str());
      throw py::error_already_set();
    }
  }
  const bool copied = !copy.is_none() && copy.cast<bool>();
  const bool versioned = takes_versioned(max_version);
  auto exported = std::make_unique<Exported>();
  exported->tensor = self.tensor;
  exported->shape = self.tensor.sizes();
  exported->strides = self.tensor.strides();
  void* data = self.tensor.data();
  if (copied) {
    exported->copy = to_bytes(self);
    data = exported->copy.data();
    int64_t stride = 1;
    for (size_t d = exported->shape.size(); d-- > 0;) {
      exported->strides[d] = stride;
      stride *= exported->shape[d];
    }
  }
  DLTensor& t = versioned ? exported->versioned.dl_tensor : exported->managed.dl_tensor;
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(exported->shape.size());
  t.dtype = to_dlpack(self.tensor.dtype());
  t.shape = exported->shape.data();
  t.strides = exported->strides.data();
  t.byte_offset = 0;
  if (versioned) {
    DLManagedTensorVersioned& v = exported->versioned;
    v.version = {1, 0};
    v.manager_ctx = exported.get();
    v.deleter = delete_exported_versioned;
    v.flags = copied ? kDLPackFlagIsCopied : 0;
    DLManagedTensorVersioned* managed = &exported.release()->versioned;
    return py::capsule(managed, "dltensor_versioned", [](PyObject* capsule) {
      if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        auto* m = static_cast<DLManagedTensorVersioned*>(
            PyCapsule_GetPointer(capsule, "dltensor_versioned"));
        if (m && m->deleter) m->deleter(m);
      }
    });
  }
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = delete_exported;
  DLManagedTensor* managed = &exported.release()->managed;
  // Named "dltensor" so a consumer can claim it (renaming it "used_dltensor"); if none
  // does, the capsule's destructor gives the memory back.
  return py::capsule(managed, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

py::bytes to_bytes(const PyTensor& self) {
  const SharedTensor& t = self.tensor;
  std::string out(t.nbytes(), '\0');
  const size_t esize = element_size(t.dtype());
  const std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
  // C order: walk the logical indices, read through the tensor's own strides.
  std::vector<int64_t> index(sizes.size(), 0);
  const auto* base = static_cast<const uint8_t*>(t.data());
  for (size_t n = 0; n < t.numel(); ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < sizes.size(); ++d) offset += index[d] * strides[d];
    std::memcpy(out.data() + n * esize, base + offset * static_cast<int64_t>(esize), esize);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return py::bytes(out);
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<PyTensor>(m, "Tensor", py::buffer_protocol(), R"doc(
A tensor in shared memory that et-serverd wrote (a result) or reads (an input buffer).
It owns its memory and lends it out: memoryview(t), numpy.asarray(t) and
torch.from_dlpack(t) see the same bytes without a copy and keep t alive.
)doc")
      .def_buffer([](PyTensor& self) {
        const SharedTensor& t = self.tensor;
        const auto esize = static_cast<py::ssize_t>(element_size(t.dtype()));
        std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
        const std::vector<int64_t> bs = t.byte_strides();
        std::vector<py::ssize_t> strides(bs.begin(), bs.end());
        return py::buffer_info(t.data(), esize, buffer_format(t.dtype()),
                               static_cast<py::ssize_t>(shape.size()), shape, strides,
                               /*readonly=*/false);
      })
      .def_property_readonly("shape", [](const PyTensor& s) { return to_tuple(s.tensor.sizes()); })
      .def_property_readonly(
          "strides", [](const PyTensor& s) { return to_tuple(s.tensor.byte_strides()); },
          "Strides in bytes, as numpy counts them.")
      .def_property_readonly("dim_order",
                             [](const PyTensor& s) {
                               std::vector<int64_t> order(s.tensor.dim_order().begin(),
                                                          s.tensor.dim_order().end());
                               if (order.empty())
                                 for (size_t d = 0; d < s.tensor.sizes().size(); ++d)
                                   order.push_back(static_cast<int64_t>(d));
                               return to_tuple(order);
                             })
      .def_property_readonly("dtype_name",
                             [](const PyTensor& s) { return dtype_name(s.tensor.dtype()); })
      .def_property_readonly("itemsize",
                             [](const PyTensor& s) { return element_size(s.tensor.dtype()); })
      .def_property_readonly("nbytes", [](const PyTensor& s) { return s.tensor.nbytes(); })
      .def_property_readonly("ndim", [](const PyTensor& s) { return s.tensor.sizes().size(); })
      .def_property_readonly("device", [](const PyTensor&) { return "cpu"; })
      .def_property_readonly(
          "data_ptr",
          [](const PyTensor& s) { return reinterpret_cast<uintptr_t>(s.tensor.data()); })
      .def_property_readonly("__array_interface__",
                             [](const PyTensor& s) {
                               py::dict d;
                               d["version"] = 3;
                               d["shape"] = to_tuple(s.tensor.sizes());
                               d["typestr"] = array_typestr(s.tensor.dtype());
                               d["data"] = py::make_tuple(
                                   reinterpret_cast<uintptr_t>(s.tensor.data()), false);
                               d["strides"] = to_tuple(s.tensor.byte_strides());
                               return d;
                             })
      .def("__dlpack__", &export_dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const PyTensor&) { return py::make_tuple(int(kDLCPU), 0); })
      .def("to_bytes", &to_bytes, "The elements in C order, as bytes (a copy).")
      .def(
          "resize",
          [](PyTensor& s, const std::vector<int64_t>& shape) {
            if (shape.size() > 16) throw py::value_error("resize: at most 16 dimensions");
            Status status = s.tensor.resize(shape);
            if (!status.ok()) throw py::value_error(status.message());
          },
          py::arg("shape"),
          "Gives the tensor a new shape within its memory (e.g. fewer rows of a dynamic "
          "input's buffer); ValueError if it needs more bytes than the tensor has. Views "
          "taken before keep the old shape.")
      .def(
          "_with_dtype",
          [](const PyTensor& s, const std::string& name) {
            auto dtype = dtype_from_name(name);
            if (!dtype || element_size(*dtype) != element_size(s.tensor.dtype())) {
              throw py::value_error("_with_dtype: " + name + " has another item size");
            }
            return PyTensor{s.tensor.with_dtype(*dtype)};
          },
          "The same memory read as another dtype of the same width (for consumers that "
          "lack one, e.g. torch < 2 and DLPack's bool).")
      .def("__len__",
           [](const PyTensor& s) {
             if (s.tensor.sizes().empty()) throw py::type_error("len() of a 0-d tensor");
             return s.tensor.sizes()[0];
           })
      .def("__repr__", [](const PyTensor& s) {
        std::ostringstream out;
        out << "etclient.Tensor(shape=(";
        for (size_t i = 0; i < s.tensor.sizes().size(); ++i)
          out << (i ? ", " : "") << s.tensor.sizes()[i];
        if (s.tensor.sizes().size() == 1) out << ",";
        out << "), dtype=" << dtype_name(s.tensor.dtype()) << ")";
        return out.str();
      });
}

}  // namespace etclient::python
