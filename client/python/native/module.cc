// etclient._native: the binding over libetclient. The Python layer (etclient/*.py)
// adds the executorch.runtime-shaped API, the torch result mode and the CLI.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include "dtypes.h"
#include "errors.h"
#include "etclient/client.h"
#include "inputs.h"
#include "tensor.h"

namespace etclient::python {
namespace {

template <typename T>
T unwrap(Result<T> result) {
  if (!result.ok()) raise_status(result.status());
  return std::move(result).value();
}

py::dict tensor_meta_dict(const TensorMeta& t) {
  py::dict d;
  d["dtype"] = dtype_name(t.dtype);
  d["sizes"] = t.sizes;
  std::vector<uint32_t> order = t.dim_order;
  if (order.empty())
    for (size_t k = 0; k < t.sizes.size(); ++k) order.push_back(static_cast<uint32_t>(k));
  d["dim_order"] = order;
  d["nbytes"] = t.nbytes;
  d["memory_planned"] = t.memory_planned;
  d["dynamic"] = t.dynamic;
  d["device"] = "cpu";
  return d;
}

py::dict meta_dict(const MethodMeta& m) {
  auto values = [](const std::vector<ValueMeta>& list) {
    py::list out;
    for (const ValueMeta& v : list) {
      py::dict d;
      d["kind"] = v.kind;
      d["tensor"] = v.tensor ? py::object(tensor_meta_dict(*v.tensor)) : py::none();
      out.append(d);
    }
    return out;
  };
  py::dict d;
  d["name"] = m.name;
  d["inputs"] = values(m.inputs);
  d["outputs"] = values(m.outputs);
  d["operators"] = m.operators;
  d["backends"] = m.backends;
  py::list attributes;
  for (const AttributeMeta& a : m.attributes) {
    py::dict attribute;
    attribute["name"] = a.name;
    attribute["tensor"] = tensor_meta_dict(a.tensor);
    attributes.append(attribute);
  }
  d["attributes"] = attributes;
  return d;
}

// One output as Python sees it: a Tensor, a Python scalar, or None.
py::object to_python(const SharedTensor& t, const ValueMeta* meta) {
  if (t.data() == nullptr) return py::none();
  const std::string kind = meta ? meta->kind : "tensor";
  if (t.sizes().empty() && kind == "int") return py::int_(*t.data_as<int64_t>());
  if (t.sizes().empty() && kind == "float") return py::float_(*t.data_as<double>());
  if (t.sizes().empty() && kind == "bool") return py::bool_(*t.data_as<bool>());
  return py::cast(PyTensor{t});
}

// The bytes of a contiguous buffer (bytes, bytearray, memoryview, numpy array...).
std::vector<uint8_t> copy_buffer(const py::handle& data, const char* what) {
  Py_buffer view{};
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    throw py::type_error(std::string("load_program: a ") + Py_TYPE(data.ptr())->tp_name +
                         " is not a contiguous buffer of " + what + " bytes");
  }
  const auto* p = static_cast<const uint8_t*>(view.buf);
  std::vector<uint8_t> bytes(p, p + view.len);
  PyBuffer_Release(&view);
  return bytes;
}

// A VerifyReport as plain Python values (etclient/_verify.py wraps them).
py::dict report_dict(const VerifyReport& report) {
  py::list cases;
  for (const VerifyCase& c : report.cases) {
    py::list outputs;
    for (const VerifyOutput& o : c.outputs) {
      py::dict d;
      d["index"] = o.index;
      d["passed"] = o.passed;
      d["elements"] = o.elements;
      d["mismatched"] = o.mismatched;
      d["max_abs_error"] = o.max_abs_error;
      d["max_rel_error"] = o.max_rel_error;
      d["problem"] = o.problem;
      outputs.append(d);
    }
    py::dict d;
    d["method"] = c.method;
    d["index"] = c.case_index;
    d["passed"] = c.passed;
    d["error"] = c.error;
    d["outputs"] = outputs;
    cases.append(d);
  }
  py::dict d;
  d["rtol"] = report.rtol;
  d["atol"] = report.atol;
  d["num_passed"] = report.passed;
  d["cases"] = cases;
  return d;
}

class NativeMethod {
 public:
  NativeMethod(std::shared_ptr<Client> client, std::unique_ptr<Method> method)
      : client_(std::move(client)), method_(std::move(method)) {}

  py::dict meta() const { return meta_dict(method_->meta()); }

  // Method::set_timeout, in seconds (0: none).
  void set_timeout(double seconds) {
    if (!(seconds >= 0) || seconds > 1e6) {
      raise_invalid_argument("timeout: give seconds from 0 to 1e6 (0 or None: no timeout)");
    }
    method_->set_timeout(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000 + 0.5)));
  }

  void set_inputs(const py::handle& inputs) {
    Claim claim(*this);
    pending_.clear();  // an incomplete or refused set is dropped, never run
    complete_ = false;
    const std::vector<py::object> items = as_input_sequence(inputs);
    const size_t want = method_->meta().inputs.size();
    if (items.size() != want) {
      raise_invalid_argument("method '" + method_->meta().name + "' takes " + std::to_string(want) +
                             " input(s), got " + std::to_string(items.size()));
    }
    std::vector<PendingInput> converted;
    for (size_t i = 0; i < items.size(); ++i)
      converted.push_back(convert_input(items[i], i, *method_));
    pending_ = std::move(converted);
    complete_ = true;
  }

  // The pending inputs staged for a call (host memory copied into shared memory now);
  // `recheck`: whether pinned inputs may have moved since they were given.
  std::vector<Input> staged_inputs(bool recheck = true) {
    if (!complete_) {
      raise_invalid_argument("method '" + method_->meta().name +
                             "' has no complete set of inputs (the last one given was refused, "
                             "or none was): give all of them again");
    }
    std::vector<Input> staged;
    try {
      for (size_t i = 0; i < pending_.size(); ++i)
        staged.push_back(stage_pending(pending_[i], i, *method_, recheck));
    } catch (...) {
      pending_.clear();
      complete_ = false;
      throw;
    }
    return staged;
  }

  // run() writing the results into `outputs` (etclient.Tensors, one per output, e.g.
  // from output_buffers()); returns them, resized to the results (scalar outputs as
  // Python numbers).
  py::list run_into(const py::handle& inputs, const py::list& outputs) {
    Claim claim(*this);
    // None: the inputs given to set_inputs() (a method without inputs needs none).
    const bool converting = !inputs.is_none() || method_->meta().inputs.empty();
    if (!inputs.is_none()) {
      set_inputs(inputs);
    } else if (converting) {
      set_inputs(py::list());
    }
    std::vector<Input> staged = staged_inputs(/*recheck=*/!converting);
    into_.clear();
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!py::isinstance<PyTensor>(outputs[i])) {
        raise_input_type("outputs[" + std::to_string(i) + "]: a " +
                         std::string(Py_TYPE(outputs[i].ptr())->tp_name) +
                         ", not an etclient.Tensor (make them with output_buffers())");
      }
      into_.push_back(outputs[i].cast<PyTensor&>().tensor);
    }
    Status status;
    {
      py::gil_scoped_release released;
      status = method_->execute(staged, into_);
    }
    if (!status.ok()) {
      pending_.clear();
      complete_ = false;
      raise_status(status);
    }
    py::list out;
    const auto& metas = method_->meta().outputs;
    for (size_t i = 0; i < into_.size(); ++i) {
      outputs[i].cast<PyTensor&>().tensor = into_[i];
      const bool tensor = i < metas.size() && metas[i].tensor;
      out.append(tensor ? py::object(outputs[i]) : to_python(into_[i], &metas[i]));
    }
    return out;
  }

  py::list output_buffers() {
    Result<std::vector<SharedTensor>> buffers = Status(StatusCode::kInternal, "not made");
    {
      py::gil_scoped_release released;
      buffers = method_->output_buffers();
    }
    py::list out;
    for (SharedTensor& t : unwrap(std::move(buffers))) out.append(py::cast(PyTensor{std::move(t)}));
    return out;
  }

  py::list execute() {
    Claim claim(*this);
    return execute_staged(staged_inputs());
  }

  py::list run(const py::handle& inputs) {
    Claim claim(*this);
    set_inputs(inputs);
    return execute_staged(staged_inputs(/*recheck=*/false));  // converted just now
  }

  std::string transport() const { return method_->transport(); }

  PyTensor input_buffer(size_t index) { return PyTensor{unwrap(method_->empty_input(index))}; }

  PyTensor attribute(const std::string& name) {
    Claim claim(*this);
    Result<SharedTensor> tensor = Status(StatusCode::kInternal, "not asked");
    {
      py::gil_scoped_release released;
      tensor = method_->attribute(name);
    }
    return PyTensor{unwrap(std::move(tensor))};
  }

  // Method::generate; `on_token(token)` (or None) is called as each token arrives and
  // may return False to stop. Returns the result as plain Python values.
  py::dict generate(const std::vector<int64_t>& prompt, int64_t start_pos, uint32_t max_new_tokens,
                    const std::vector<int64_t>& stop_tokens, float temperature, float top_p,
                    uint64_t seed, int64_t max_context, const py::object& on_token) {
    Claim claim(*this);
    GenerateOptions options{.prompt = prompt,
                            .start_pos = start_pos,
                            .max_new_tokens = max_new_tokens,
                            .stop_tokens = stop_tokens,
                            .temperature = temperature,
                            .top_p = top_p,
                            .seed = seed,
                            .max_context = max_context};
    Result<GenerateResult> result = Status(StatusCode::kInternal, "not asked");
    std::optional<py::error_already_set> raised;  // by on_token: re-raised here
    {
      py::gil_scoped_release released;
      result = method_->generate(options, [&](int64_t token) {
        if (on_token.is_none()) return true;
        py::gil_scoped_acquire acquired;
        try {
          py::object keep = on_token(token);
          return keep.is_none() || py::bool_(keep).cast<bool>();
        } catch (py::error_already_set& e) {
          raised.emplace(std::move(e));
          return false;
        }
      });
    }
    if (raised) throw std::move(*raised);
    GenerateResult g = unwrap(std::move(result));
    py::dict d;
    d["tokens"] = g.tokens;
    d["stop_reason"] = g.stop_reason;
    d["prompt_tokens"] = g.prompt_tokens;
    d["prefill_micros"] = g.prefill_micros;
    d["decode_micros"] = g.decode_micros;
    d["next_pos"] = g.next_pos;
    return d;
  }

  void start_profile(uint32_t max_executes) {
    Claim claim(*this);
    Status status;
    {
      py::gil_scoped_release released;
      status = method_->start_profile(max_executes);
    }
    if (!status.ok()) raise_status(status);
  }

  // The profile as plain Python values (etclient/_profile.py wraps them); the ETDump as
  // bytes.
  // `merge`: other methods whose profiles end too and join this one.
  py::dict stop_profile(bool etdump, bool chrome_trace, const std::vector<NativeMethod*>& merge) {
    Claim claim(*this);
    std::deque<Claim> others;
    ProfileOptions options{.etdump = etdump, .chrome_trace = chrome_trace};
    for (NativeMethod* other : merge) {
      if (other == nullptr || other == this) throw py::value_error("merge: a method named twice");
      others.emplace_back(*other);
      options.merge.push_back(other->method_.get());
    }
    Result<Profile> stopped = Status(StatusCode::kInternal, "not stopped");
    {
      py::gil_scoped_release released;
      stopped = method_->stop_profile(options);
    }
    const Profile profile = unwrap(std::move(stopped));
    py::list rows;
    for (const ProfileRow& r : profile.rows) {
      py::dict d;
      d["kind"] = r.kind;
      d["name"] = r.name;
      d["args"] = r.args;
      d["calls"] = r.calls;
      d["total_ns"] = r.total_ns;
      d["min_ns"] = r.min_ns;
      d["max_ns"] = r.max_ns;
      rows.append(d);
    }
    py::dict d;
    d["executes"] = profile.executes;
    d["dropped"] = profile.dropped;
    d["execute_ns"] = profile.execute_ns;
    d["rows"] = rows;
    d["table"] = profile.table;
    d["etdump"] =
        py::bytes(reinterpret_cast<const char*>(profile.etdump.data()), profile.etdump.size());
    d["chrome_trace"] = profile.chrome_trace;
    return d;
  }

 private:
  // Runs the call with inputs already staged and wraps its results.
  py::list execute_staged(const std::vector<Input>& staged) {
    Result<std::vector<SharedTensor>> outputs = Status(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release released;
      outputs = method_->execute(staged);
    }
    if (!outputs.ok()) {
      pending_.clear();
      complete_ = false;
      raise_status(outputs.status());
    }
    py::list out;
    const auto& metas = method_->meta().outputs;
    for (size_t i = 0; i < outputs->size(); ++i)
      out.append(to_python((*outputs)[i], i < metas.size() ? &metas[i] : nullptr));
    return out;
  }

  // A Method is one-thread-at-a-time: a second thread is refused, loudly; the same
  // thread may nest (run() = set_inputs() + execute()).
  class Claim {
   public:
    explicit Claim(NativeMethod& m) : m_(m) {
      std::thread::id none;
      const std::thread::id me = std::this_thread::get_id();
      if (m_.owner_.compare_exchange_strong(none, me)) {
        outer_ = true;
      } else if (none != me) {
        throw py::value_error(
            "method '" + m_.method_->meta().name +
            "' is running on another thread; a Method is used by one thread at a time: load one "
            "per thread (program.new_method())");
      }
    }
    ~Claim() {
      if (outer_) m_.owner_ = std::thread::id();
    }

   private:
    NativeMethod& m_;
    bool outer_ = false;
  };

  std::shared_ptr<Client> client_;
  std::unique_ptr<Method> method_;
  std::vector<PendingInput> pending_;
  bool complete_ = false;
  std::vector<SharedTensor> into_;  // run_into()'s outputs, reused
  std::atomic<std::thread::id> owner_{};
};

class NativeProgram {
 public:
  NativeProgram(std::shared_ptr<Client> client, std::shared_ptr<Program> program)
      : client_(std::move(client)), program_(std::move(program)) {}
  std::string sha256() const { return program_->sha256(); }
  py::list methods() const {
    py::list out;
    for (const MethodMeta& m : program_->methods()) out.append(meta_dict(m));
    return out;
  }
  std::unique_ptr<NativeMethod> load_method(const std::string& name) {
    Result<std::unique_ptr<Method>> loaded = Status(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release released;
      loaded = program_->load_method(name);
    }
    return std::make_unique<NativeMethod>(client_, unwrap(std::move(loaded)));
  }
  // (method, number of cases) per test suite of a bundled program, in the file's order.
  std::vector<std::pair<std::string, uint32_t>> bundled_tests() const {
    std::vector<std::pair<std::string, uint32_t>> out;
    for (const BundledSuite& s : program_->bundled_tests()) out.emplace_back(s.method, s.cases);
    return out;
  }
  py::dict verify(std::optional<double> rtol, std::optional<double> atol,
                  const std::string& method) {
    Result<VerifyReport> report = Status(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release released;
      report = program_->verify({.rtol = rtol, .atol = atol, .method = method});
    }
    return report_dict(unwrap(std::move(report)));
  }

 private:
  std::shared_ptr<Client> client_;
  std::shared_ptr<Program> program_;
};

class NativeClient {
 public:
  NativeClient(const std::string& socket, const std::string& name, int64_t reconnect_ms,
               const std::string& transport, std::optional<bool> spawn,
               const std::string& serverd_path, int64_t idle_exit_s) {
    ClientOptions options;
    options.socket = socket;
    options.client_name = name;
    options.reconnect_timeout = std::chrono::milliseconds(reconnect_ms);
    options.spawn = spawn;
    options.serverd_path = serverd_path;
    options.idle_exit = std::chrono::seconds(std::max<int64_t>(0, idle_exit_s));
    if (transport == "grpc") {
      options.transport = Transport::kGrpc;
    } else if (!transport.empty() && transport != "fast") {
      throw py::value_error("transport '" + transport + "' is not one of 'fast', 'grpc'");
    }
    Result<std::shared_ptr<Client>> connected = Status(StatusCode::kInternal, "not connected");
    {
      py::gil_scoped_release released;
      connected = Client::connect(options);
    }
    client_ = unwrap(std::move(connected));
  }

  py::dict server_status() {
    Result<ServerStatus> status = Status(StatusCode::kInternal, "not asked");
    {
      py::gil_scoped_release released;
      status = client_->server_status();
    }
    const ServerStatus s = unwrap(std::move(status));
    py::dict d;
    d["version"] = s.version;
    d["protocol_version"] = s.protocol_version;
    d["uptime_seconds"] = s.uptime_seconds;
    d["sessions"] = s.sessions;
    d["programs"] = s.programs;
    d["method_instances"] = s.method_instances;
    d["executes"] = s.executes;
    d["program_loads"] = s.program_loads;
    d["program_loads_shared"] = s.program_loads_shared;
    d["idle_exit_seconds"] = s.idle_exit_seconds;
    d["resident_bytes"] = s.resident_bytes;
    d["threads"] = s.threads;
    return d;
  }

  py::dict registry() {
    Result<Registry> registry = Status(StatusCode::kInternal, "not asked");
    {
      py::gil_scoped_release released;
      registry = client_->registry();
    }
    const Registry r = unwrap(std::move(registry));
    py::dict d;
    d["operators"] = r.operators;
    d["backends"] = r.backends;
    return d;
  }

  NativeProgram load_path(const std::string& path, const std::string& data_path) {
    Result<std::shared_ptr<Program>> program = Status(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release released;
      program = client_->load_program(path, data_path);
    }
    return NativeProgram(client_, unwrap(std::move(program)));
  }

  // `data_buffer`: the .ptd's bytes (a buffer), instead of `data_path`.
  NativeProgram load_bytes(const py::handle& data, const std::string& data_path,
                           const py::object& data_buffer) {
    // Copied while the buffers are held (and the GIL with it); loaded without the GIL.
    std::vector<uint8_t> bytes = copy_buffer(data, "program");
    std::vector<uint8_t> data_bytes;
    if (!data_buffer.is_none()) {
      data_bytes = copy_buffer(data_buffer, "data (.ptd)");
      if (data_bytes.empty()) {
        throw py::value_error("the data (.ptd) bytes are empty: not a .ptd data file");
      }
    }
    Result<std::shared_ptr<Program>> program = Status(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release released;
      if (!data_path.empty()) {
        std::ifstream in(data_path, std::ios::binary);
        if (!in) {
          program = Status(StatusCode::kNotFound, "cannot read " + data_path + ": " +
                                                      std::strerror(errno) + " (check the path)");
        }
        data_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        if (in && data_bytes.empty()) {
          program =
              Status(StatusCode::kInvalidArgument, data_path + " is empty: not a .ptd data file");
        }
      }
      if (data_path.empty() || !data_bytes.empty()) {
        program = client_->load_program_bytes(bytes, data_bytes);
      }
    }
    return NativeProgram(client_, unwrap(std::move(program)));
  }

  PyTensor empty(const std::vector<int64_t>& shape, const std::string& dtype) {
    auto parsed = dtype_from_name(dtype);
    if (!parsed) {
      throw py::type_error("empty: dtype '" + dtype +
                           "' is not one et-serverd has (uint8, int8, int16, int32, int64, "
                           "float16, float32, float64, bool, bfloat16)");
    }
    if (shape.size() > 16) throw py::value_error("empty: at most 16 dimensions");
    for (int64_t s : shape) {
      if (s < 0 || s > 0x7fffffff) {
        throw py::value_error("empty: size " + std::to_string(s) +
                              " is outside 0..2^31-1, what a tensor dimension holds");
      }
    }
    return PyTensor{unwrap(client_->empty(*parsed, shape))};
  }

 private:
  std::shared_ptr<Client> client_;
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "The binding over libetclient (use the etclient package, not this module).";
  bind_errors(m);
  bind_tensor(m);
  py::class_<NativeMethod>(m, "NativeMethod")
      .def_property_readonly("meta", &NativeMethod::meta)
      .def("set_inputs", &NativeMethod::set_inputs)
      .def("set_timeout", &NativeMethod::set_timeout)
      .def("execute", &NativeMethod::execute)
      .def("run", &NativeMethod::run)
      .def("run_into", &NativeMethod::run_into)
      .def("output_buffers", &NativeMethod::output_buffers)
      .def("attribute", &NativeMethod::attribute)
      .def("generate", &NativeMethod::generate)
      .def("input_buffer", &NativeMethod::input_buffer)
      .def("start_profile", &NativeMethod::start_profile, py::arg("max_executes") = 0)
      .def("stop_profile", &NativeMethod::stop_profile, py::arg("etdump") = false,
           py::arg("chrome_trace") = false, py::arg("merge") = std::vector<NativeMethod*>{})
      .def_property_readonly("transport", &NativeMethod::transport);
  py::class_<NativeProgram>(m, "NativeProgram")
      .def_property_readonly("sha256", &NativeProgram::sha256)
      .def_property_readonly("methods", &NativeProgram::methods)
      .def("load_method", &NativeProgram::load_method)
      .def_property_readonly("bundled_tests", &NativeProgram::bundled_tests)
      .def("verify", &NativeProgram::verify, py::arg("rtol") = py::none(),
           py::arg("atol") = py::none(), py::arg("method") = "");
  py::class_<NativeClient>(m, "NativeClient")
      .def(py::init<const std::string&, const std::string&, int64_t, const std::string&,
                    std::optional<bool>, const std::string&, int64_t>(),
           py::arg("socket"), py::arg("client_name"), py::arg("reconnect_timeout_ms"),
           py::arg("transport") = "", py::arg("spawn") = py::none(), py::arg("serverd_path") = "",
           py::arg("idle_exit_s") = 300)
      .def("load_path", &NativeClient::load_path, py::arg("path"), py::arg("data_path") = "")
      .def("load_bytes", &NativeClient::load_bytes, py::arg("data"), py::arg("data_path") = "",
           py::arg("data_buffer") = py::none())
      .def("empty", &NativeClient::empty)
      .def("server_status", &NativeClient::server_status)
      .def("registry", &NativeClient::registry);
  // Proof for tests and bug reports: this extension links no torch.
  m.attr("links_torch") = false;
}

}  // namespace etclient::python
