#include "server/transport/grpc/peer_name.h"

#include <gtest/gtest.h>

namespace et::server {
namespace {

TEST(TcpHostOf, IsTheHostWithoutItsPort) {
  EXPECT_EQ(tcp_host_of("ipv4:10.0.0.7:53412"), "ipv4:10.0.0.7");
  EXPECT_EQ(tcp_host_of("ipv6:[::1]:53412"), "ipv6:[::1]");
  // Two connections of one host are one peer.
  EXPECT_EQ(tcp_host_of("ipv4:10.0.0.7:1"), tcp_host_of("ipv4:10.0.0.7:2"));
}

TEST(TcpHostOf, IsEmptyForLocalPeers) {
  EXPECT_EQ(tcp_host_of("unix:/run/et-serverd.sock"), "");
  EXPECT_EQ(tcp_host_of("fd:12"), "");
  EXPECT_EQ(tcp_host_of(""), "");
}

}  // namespace
}  // namespace et::server
