#include "errors.h"

namespace etclient::python {
namespace {

struct Classes {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;
  PyObject* unimplemented = nullptr;
  PyObject* resource_exhausted = nullptr;
  PyObject* unavailable = nullptr;
  PyObject* state_lost = nullptr;
  PyObject* permission_denied = nullptr;
  PyObject* input_type = nullptr;
};
Classes classes;  // owned by the module (never freed: modules are not unloaded)

PyObject* make(py::module_& m, const char* name, PyObject* builtin, const char* doc) {
  const std::string qualified = std::string("etclient.") + name;
  // Error derives from RuntimeError; the others from Error (and a builtin, if given).
  PyObject* bases = builtin ? PyTuple_Pack(2, classes.error, builtin) : nullptr;
  PyObject* base = bases ? bases : (classes.error ? classes.error : PyExc_RuntimeError);
  // str() is the message as given (KeyError would quote it).
  py::dict dict;
  dict["__str__"] = py::handle(PyExc_Exception).attr("__str__");
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, dict.ptr());
  Py_XDECREF(bases);
  if (!cls) throw py::error_already_set();
  m.add_object(name, py::handle(cls));
  return cls;
}

}  // namespace

void bind_errors(py::module_& m) {
  classes.error = make(m, "Error", nullptr, "An error et-serverd or the client reported.");
  classes.invalid_argument =
      make(m, "InvalidArgument", PyExc_ValueError, "A bad input, program or request.");
  // A KeyError (so a LookupError) as executorch.runtime raises for an unknown method,
  // and through Error a RuntimeError, as its portable_lib does.
  classes.not_found =
      make(m, "NotFound", PyExc_KeyError, "No such program, method, file or operator.");
  classes.unimplemented =
      make(m, "Unimplemented", PyExc_NotImplementedError, "Valid, but et-serverd cannot do it.");
  classes.resource_exhausted =
      make(m, "ResourceExhausted", PyExc_MemoryError, "A limit of the daemon, or memory.");
  classes.unavailable = make(m, "Unavailable", PyExc_ConnectionError,
                             "No daemon answers (not running, restarting, shutting down).");
  classes.state_lost = make(m, "StateLost", nullptr,
                            "et-serverd restarted, or ended this process's session: the method "
                            "was re-created and its state lost; call again.");
  classes.permission_denied =
      make(m, "PermissionDenied", PyExc_PermissionError,
           "et-serverd does not serve this user (it serves its own, root, and --socket-group).");
  classes.input_type =
      make(m, "InputTypeError", PyExc_TypeError, "An input of a type the method cannot take.");
}

void raise_invalid_argument(const std::string& message) {
  PyErr_SetString(classes.invalid_argument, message.c_str());
  throw py::error_already_set();
}

void raise_input_type(const std::string& message) {
  PyErr_SetString(classes.input_type, message.c_str());
  throw py::error_already_set();
}

void raise_status(const Status& status) {
  PyObject* cls = classes.error;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kFailedPrecondition:
      cls = classes.invalid_argument;
      break;
    case StatusCode::kNotFound:
      cls = classes.not_found;
      break;
    case StatusCode::kUnimplemented:
      cls = classes.unimplemented;
      break;
    case StatusCode::kResourceExhausted:
      cls = classes.resource_exhausted;
      break;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      cls = classes.unavailable;
      break;
    case StatusCode::kAborted:
      cls = classes.state_lost;
      break;
    case StatusCode::kPermissionDenied:
      cls = classes.permission_denied;
      break;
    default:
      break;
  }
  PyErr_SetString(cls, status.message().c_str());
  throw py::error_already_set();
}

}  // namespace etclient::python
