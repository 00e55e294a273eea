// Credentials for the daemon's gRPC over TCP (--listen): TLS from PEM files, with client
// certificates required when a client CA is given; plaintext only where the options
// allow it (a loopback address, options.cc).
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "runtime/core/status.h"

namespace et::server {

// Plaintext when `cert` is empty; else TLS with `cert` (the chain) and `key`, requiring
// and verifying client certificates against `client_ca` when that is given. IoError
// naming a file that cannot be read; InvalidArgument for one that is not PEM.
Result<std::shared_ptr<grpc::ServerCredentials>> tcp_credentials(const std::string& cert,
                                                                 const std::string& key,
                                                                 const std::string& client_ca);

// Whether "HOST:PORT" names a loopback host (127.0.0.0/8, [::1], localhost): where
// --listen may go without TLS.
bool is_loopback_address(const std::string& host_port);

}  // namespace et::server
