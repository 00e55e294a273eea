#include "tests/support/daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "proto/fd_client.h"
#include "proto/sha256.h"
#include "tests/support/eventually.h"
#include "tools/npy.h"

namespace et::testing {

std::string serverd_path() {
  if (const char* p = std::getenv("ET_SERVERD_PATH")) return p;
  return ET_SERVERD_PATH;
}

namespace {

bool can_connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

DaemonProcess::DaemonProcess(std::vector<std::string> args) {
  char tmpl[] = "/tmp/et-serverd-test-XXXXXX";
  dir_ = mkdtemp(tmpl);
  socket_ = dir_ + "/s.sock";
  log_path_ = dir_ + "/daemon.log";
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--socket") socket_ = args[i + 1];  // the test chose the path
  }
  argv_ = {serverd_path(), "--socket", socket_, "--log-level", "debug"};
  argv_.insert(argv_.end(), args.begin(), args.end());
  start();
}

void DaemonProcess::kill_and_restart() {
  kill_now();
  start();
}

void DaemonProcess::kill_now() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void DaemonProcess::start() {
  std::vector<std::string> argv = argv_;
  pid_ = fork();
  if (pid_ == 0) {
    const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(log, 1);
    dup2(log, 2);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  bool exited = false;
  const bool listening = eventually([&] {
    int status;
    exited = exited || waitpid(pid_, &status, WNOHANG) == pid_;
    return exited || can_connect(socket_);
  });
  if (exited) {
    pid_ = -1;
    throw std::runtime_error("et-serverd exited at start:\n" + log());
  }
  if (listening) return;
  kill(pid_, SIGKILL);  // do not leave it running behind a failed test
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  throw std::runtime_error("et-serverd did not start listening:\n" + log());
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop();
  std::remove(log_path_.c_str());
  std::remove(socket_.c_str());
  std::remove((socket_ + ".fd").c_str());
  rmdir(dir_.c_str());
}

int DaemonProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

long DaemonProcess::rss_kb() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      long kb;
      in >> kb;
      return kb;
    }
    in.ignore(1 << 16, '\n');
  }
  return -1;
}

std::string DaemonProcess::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TestClient::TestClient(const std::string& socket, const std::string& tcp_address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);  // a loopback daemon: never through $http_proxy
  channel_ = grpc::CreateCustomChannel(tcp_address.empty() ? "unix:" + socket : tcp_address,
                                       grpc::InsecureChannelCredentials(), args);
  stub_ = pb::EtServer::NewStub(channel_);
  stream_ = stub_->OpenSession(&session_ctx_);
  pb::SessionServerMessage welcome;
  if (stream_->Read(&welcome)) {
    session_ = welcome.session();
    fd_socket_ = welcome.fd_socket();
  }
  const char* transport = std::getenv("ETSERVER_TRANSPORT");
  fast_path_ = tcp_address.empty() && welcome.fast_path_version() != 0 &&
               !(transport && std::string(transport) == "grpc");
}

FastTestChannel* TestClient::fast_channel() {
  if (!fast_path_) return nullptr;
  if (!fast_) {
    std::string error;
    fast_ = FastTestChannel::open(fd_socket_, session_, &error);
    if (!fast_) throw std::runtime_error("fast path: cannot open a channel: " + error);
  }
  return fast_.get();
}

template <typename Req, typename Resp, typename Rpc>
grpc::Status TestClient::call(et::wire::FastCall kind, const Req& req, Resp* resp, Rpc rpc) {
  // As libetclient does: a request too large for the channel goes over gRPC.
  FastTestChannel* fast = fast_channel();
  if (fast && fast->fits(req.ByteSizeLong())) return fast->call(kind, req, *resp);
  grpc::ClientContext ctx;
  return (stub_.get()->*rpc)(&ctx, req, resp);
}

grpc::Status TestClient::run(const pb::RunRequest& req, pb::RunResponse* resp) {
  return call(et::wire::FastCall::kRun, req, resp, &pb::EtServer::Stub::Run);
}
grpc::Status TestClient::set_inputs(const pb::SetInputsRequest& req, pb::SetInputsResponse* resp) {
  return call(et::wire::FastCall::kSetInputs, req, resp, &pb::EtServer::Stub::SetInputs);
}
grpc::Status TestClient::execute(const pb::ExecuteRequest& req, pb::ExecuteResponse* resp) {
  return call(et::wire::FastCall::kExecute, req, resp, &pb::EtServer::Stub::Execute);
}
grpc::Status TestClient::get_outputs(const pb::GetOutputsRequest& req,
                                     pb::GetOutputsResponse* resp) {
  return call(et::wire::FastCall::kGetOutputs, req, resp, &pb::EtServer::Stub::GetOutputs);
}

TestClient::~TestClient() {
  close_session();
  for (Segment& s : segments_) {
    if (s.data) munmap(s.data, s.size);
    if (s.fd >= 0) close(s.fd);
  }
}

void TestClient::close_session() {
  if (!stream_) return;
  stream_->WritesDone();
  (void)stream_->Finish();
  stream_.reset();
}

std::pair<uint32_t, std::string> TestClient::register_fd(int fd, const std::string& token,
                                                         uint16_t kind) {
  const et::wire::FdExchange reply = et::wire::send_descriptor(fd_socket_, token, fd, kind);
  if (!reply.delivered) return {9999, reply.message};
  if (reply.code == 0) return {0, std::to_string(reply.id)};
  return {reply.code, reply.message};
}

TestClient::Segment TestClient::create_segment(size_t bytes, bool seal) {
  Segment s;
  s.fd = memfd_create("et-test-segment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  s.size = bytes;
  if (ftruncate(s.fd, static_cast<off_t>(bytes)) != 0) s.error = "ftruncate failed";
  if (seal) fcntl(s.fd, F_ADD_SEALS, F_SEAL_SHRINK);
  s.data = static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0));
  auto [code, text] = register_fd(s.fd, session_);
  if (code == 0) {
    s.id = std::stoull(text);
  } else {
    s.error = text;
  }
  segments_.push_back(s);
  return s;
}

uint64_t TestClient::load_program_file(const std::string& path, std::string* error,
                                       const std::string& data_path) {
  auto read = [](const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  auto hash = [](const std::string& bytes) {
    return et::wire::sha256_hex({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  };
  const std::string bytes = read(path);
  const std::string data = data_path.empty() ? std::string() : read(data_path);
  // By hash first: the bytes travel only when the daemon lacks them.
  pb::LoadProgramRequest req;
  req.set_session(session_);
  req.set_sha256(hash(bytes));
  if (!data.empty()) req.set_data_sha256(hash(data));
  pb::LoadProgramResponse resp;
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    s = stub_->LoadProgram(&ctx, req, &resp);
  }
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
    req.set_program_bytes(bytes);
    if (!data.empty()) req.set_data_bytes(data);
    grpc::ClientContext ctx;
    s = stub_->LoadProgram(&ctx, req, &resp);
  }
  if (!s.ok()) {
    if (error) *error = s.error_message();
    return 0;
  }
  return resp.program_id();
}

uint64_t TestClient::load_method(uint64_t program, const std::string& name, std::string* error) {
  pb::LoadMethodRequest req;
  req.set_session(session_);
  req.set_program_id(program);
  req.set_method_name(name);
  pb::LoadMethodResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub_->LoadMethod(&ctx, req, &resp);
  if (!s.ok()) {
    if (error) *error = s.error_message();
    return 0;
  }
  return resp.method_handle();
}

pb::Tensor npy_tensor(const std::string& path) {
  auto a = tools::read_npy(path);
  if (!a.ok()) throw std::runtime_error(a.status().to_string());
  pb::Tensor t;
  static const std::pair<ScalarType, pb::DataType> kTypes[] = {
      {ScalarType::kByte, pb::UINT8},    {ScalarType::kChar, pb::INT8},
      {ScalarType::kShort, pb::INT16},   {ScalarType::kInt, pb::INT32},
      {ScalarType::kLong, pb::INT64},    {ScalarType::kHalf, pb::FLOAT16},
      {ScalarType::kFloat, pb::FLOAT32}, {ScalarType::kDouble, pb::FLOAT64},
      {ScalarType::kBool, pb::BOOL},     {ScalarType::kBFloat16, pb::BFLOAT16}};
  for (auto [st, pt] : kTypes) {
    if (st == a->dtype) t.set_dtype(pt);
  }
  for (int64_t s : a->shape) t.add_sizes(s);
  t.set_inline_data(a->data.data(), a->data.size());
  return t;
}

std::vector<uint8_t> tensor_bytes(const pb::Tensor& t) {
  return {t.inline_data().begin(), t.inline_data().end()};
}

}  // namespace et::testing
