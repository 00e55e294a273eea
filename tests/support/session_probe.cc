// session-probe: whether a session's token is of use to anyone but its owner
// (tests/test_access.py runs it as two users of one daemon).
//
//   session-probe owner SOCKET TOKEN_FILE  opens a session, uses its token (ListPrograms,
//                                          a segment), writes the token to TOKEN_FILE and
//                                          keeps the session until TOKEN_FILE.done appears
//   session-probe thief SOCKET TOKEN_FILE  waits for TOKEN_FILE, uses the token the same
//                                          way, then creates TOKEN_FILE.done
//
// Prints one JSON object: for each use, "OK" or the daemon's error. Exit status 0 when
// it could ask, 1 when it could not (no session, no token), 2 on bad usage.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "et_serverd.grpc.pb.h"
#include "proto/fd_client.h"
#include "proto/fd_protocol.h"

namespace {

namespace pb = etserver::v1;

std::string list_programs(pb::EtServer::Stub& stub, const std::string& token) {
  grpc::ClientContext ctx;
  pb::ListProgramsRequest req;
  req.set_session(token);
  pb::ListProgramsResponse resp;
  const grpc::Status s = stub.ListPrograms(&ctx, req, &resp);
  return s.ok() ? "OK" : "code " + std::to_string(s.error_code()) + ": " + s.error_message();
}

std::string register_segment(const std::string& socket, const std::string& token) {
  const int memfd = memfd_create("probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (memfd < 0 || ftruncate(memfd, 4096) != 0 ||
      fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    return "memfd_create failed";
  }
  et::wire::FdExchange r =
      et::wire::send_descriptor(socket + ".fd", token, memfd, et::wire::kFdRegisterSegment);
  close(memfd);
  return r.delivered && r.code == 0 ? "OK" : r.message;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' ? ' ' : c);
  }
  return out + "\"";
}

void wait_for(const std::string& path) {
  while (!std::filesystem::exists(path)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::string(argv[1]) != "owner" && std::string(argv[1]) != "thief")) {
    std::fprintf(stderr, "usage: session-probe owner|thief SOCKET TOKEN_FILE\n");
    return 2;
  }
  const std::string role = argv[1], socket = argv[2], token_file = argv[3];
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = pb::EtServer::NewStub(channel);
  if (role == "thief") {
    wait_for(token_file);
    std::string token;
    std::ifstream(token_file) >> token;
    std::printf("{\"list\": %s, \"segment\": %s}\n", quoted(list_programs(*stub, token)).c_str(),
                quoted(register_segment(socket, token)).c_str());
    std::ofstream(token_file + ".done").close();
    return 0;
  }
  grpc::ClientContext ctx;
  auto stream = stub->OpenSession(&ctx);
  pb::SessionClientMessage hello;
  hello.set_client_name("session-probe");
  pb::SessionServerMessage welcome;
  if (!stream->Write(hello) || !stream->Read(&welcome)) {
    std::fprintf(stderr, "session-probe: no session: %s\n",
                 stream->Finish().error_message().c_str());
    return 1;
  }
  const std::string own_list = list_programs(*stub, welcome.session());
  const std::string own_segment = register_segment(socket, welcome.session());
  std::ofstream(token_file + ".tmp") << welcome.session();
  std::filesystem::rename(token_file + ".tmp", token_file);
  wait_for(token_file + ".done");
  std::printf("{\"own_list\": %s, \"own_segment\": %s}\n", quoted(own_list).c_str(),
              quoted(own_segment).c_str());
  ctx.TryCancel();
  return 0;
}
