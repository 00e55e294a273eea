#include "server/transport/grpc/tcp_credentials.h"

#include <fmt/format.h>
#include <grpcpp/security/server_credentials.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace et::server {

bool is_loopback_address(const std::string& host_port) {
  std::string host = host_port;
  if (const size_t colon = host.rfind(':'); colon != std::string::npos) host.resize(colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, written as four numbers.
  unsigned a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  return std::sscanf(host.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 &&
         b < 256 && c < 256 && d < 256;
}

namespace {

Result<std::string> read_pem(const char* flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return io_error(fmt::format("{} {}: cannot read it: {}", flag, path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return invalid_argument(fmt::format("{} {}: not a PEM file (no -----BEGIN line)", flag, path));
  }
  return text.str();
}

}  // namespace

Result<std::shared_ptr<grpc::ServerCredentials>> tcp_credentials(const std::string& cert,
                                                                 const std::string& key,
                                                                 const std::string& client_ca) {
  if (cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(
      client_ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                        : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ET_ASSIGN_OR_RETURN(pair.cert_chain, read_pem("--tls-cert", cert));
  ET_ASSIGN_OR_RETURN(pair.private_key, read_pem("--tls-key", key));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!client_ca.empty()) {
    ET_ASSIGN_OR_RETURN(ssl.pem_root_certs, read_pem("--tls-client-ca", client_ca));
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace et::server
