// URLs as users write them, local session sockets found as xpra finds them, and the transports
// that connect to them (a Unix socket served by this test).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "pixpath/net/xpra/connect.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/local_sessions.h"
#include "pixpath/net/xpra/socket_transport.h"

namespace pixpath::xpra {
namespace {

TEST(Endpoint, ParsesTcp) {
  auto a = parse_url("tcp://127.0.0.1:10000/");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->scheme, Scheme::Tcp);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 10000);
  EXPECT_EQ(to_url(*a), "tcp://127.0.0.1:10000/");
  auto b = parse_url("tcp://[::1]:99");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(to_url(*b), "tcp://[::1]:99/");
  for (const char* bad : {"tcp://host/", "tcp://host:0/", "tcp://host:70000/", "tcp://:80/",
                          "tcp://[::1]/", "tcp://host:8x/"}) {
    auto r = parse_url(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument) << bad;
    EXPECT_NE(r.error().reason().find(bad), std::string::npos) << r.error().message();
  }
}

TEST(Endpoint, ParsesSocketAndDisplay) {
  auto s = parse_url("socket:///run/user/0/xpra/host-7");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->scheme, Scheme::UnixSocket);
  EXPECT_EQ(s->path, "/run/user/0/xpra/host-7");
  EXPECT_EQ(to_url(*s), "socket:///run/user/0/xpra/host-7");
  auto d = parse_url(":100");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->scheme, Scheme::LocalDisplay);
  EXPECT_EQ(d->display, 100);
  EXPECT_EQ(to_url(*d), ":100");
  EXPECT_EQ(parse_url(":").error().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(parse_url(":x").error().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(parse_url("socket://").error().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(parse_url("127.0.0.1:10000").error().code(), ErrorCode::InvalidArgument);
  auto ws = parse_url("quic://host:1/");
  ASSERT_FALSE(ws.ok());
  EXPECT_EQ(ws.error().code(), ErrorCode::Unsupported);
  EXPECT_NE(ws.error().reason().find("quic"), std::string::npos) << ws.error().message();
}

TEST(Endpoint, ParsesTheSecureTransportsAsXpraWritesThem) {
  auto ssl = parse_url("ssl://127.0.0.1:10443/");
  ASSERT_TRUE(ssl.ok()) << ssl.error().message();
  EXPECT_EQ(ssl->scheme, Scheme::Ssl);
  EXPECT_EQ(ssl->host, "127.0.0.1");
  EXPECT_EQ(ssl->port, 10443);
  EXPECT_EQ(to_url(*ssl), "ssl://127.0.0.1:10443/");
  EXPECT_EQ(parse_url("ssl://example.org/")->port, 443) << "xpra's default port";
  auto ws = parse_url("ws://[::1]:8080/some/path");
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  EXPECT_EQ(ws->scheme, Scheme::Ws);
  EXPECT_EQ(ws->host, "::1");
  EXPECT_EQ(ws->path, "/some/path");
  EXPECT_EQ(to_url(*ws), "ws://[::1]:8080/some/path");
  EXPECT_EQ(parse_url("ws://host")->port, 80);
  EXPECT_EQ(parse_url("ws://host")->path, "/");
  auto wss = parse_url("wss://host.example:9443/");
  ASSERT_TRUE(wss.ok());
  EXPECT_EQ(wss->scheme, Scheme::Wss);
  EXPECT_EQ(parse_url("wss://host/")->port, 443);
  auto ssh = parse_url("ssh://alice@server.example:2222/10");
  ASSERT_TRUE(ssh.ok()) << ssh.error().message();
  EXPECT_EQ(ssh->scheme, Scheme::Ssh);
  EXPECT_EQ(ssh->username, "alice");
  EXPECT_EQ(ssh->host, "server.example");
  EXPECT_EQ(ssh->port, 2222);
  EXPECT_EQ(ssh->display, 10);
  EXPECT_EQ(to_url(*ssh), "ssh://alice@server.example:2222/10");
  auto ssh2 = parse_url("ssh://host/:7");
  ASSERT_TRUE(ssh2.ok());
  EXPECT_EQ(ssh2->display, 7);
  EXPECT_EQ(ssh2->port, 22);
  EXPECT_TRUE(ssh2->username.empty());
  auto ssh3 = parse_url("ssh://host");
  ASSERT_TRUE(ssh3.ok());
  EXPECT_EQ(ssh3->display, -1) << "no display: the remote xpra picks its only session";
  for (const char* bad : {"ssl://:443/", "ssl://host:0/", "ssl://host/extra", "ws://host:x/",
                          "ssh://host/abc", "ssh://@host/1", "ssh://-oProxyCommand=x/1",
                          "ws://host/a b", "wss://[::1/"}) {
    auto r = parse_url(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument) << bad;
  }
}

// A directory with a listening Unix socket named as a server names it, found through
// XPRA_SOCKET_DIRS, and a transport that talks to it; a stale socket (nobody listening) is
// skipped by open_transport().
class LocalSessions : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pixpath-sockets-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::setenv("XPRA_SOCKET_DIRS", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("XPRA_SOCKET_DIRS");
    std::filesystem::remove_all(dir_);
  }
  // A listening socket at `path`; -1 on failure. listen=false leaves it bound, not listening
  // (connects are refused, like a stale socket).
  static int bind_socket(const std::string& path, bool listen = true) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return ::close(fd), -1;
    if (listen && ::listen(fd, 4) != 0) return ::close(fd), -1;
    return fd;
  }
  std::string dir_;
};

TEST_F(LocalSessions, DirsStartWithTheConfiguredOnes) {
  const auto dirs = local_socket_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.front(), dir_);
}

TEST_F(LocalSessions, MissingDisplaySaysWhereItLooked) {
  auto r = find_local_sockets(4242);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unavailable);
  EXPECT_NE(r.error().reason().find(dir_ + "/4242/socket"), std::string::npos) << r.error().message();
  auto t = open_transport(*parse_url(":4242"), {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code(), ErrorCode::Unavailable);
  EXPECT_NE(t.error().reason().find("@xpra/4242"), std::string::npos) << t.error().message();
}

TEST_F(LocalSessions, FindsBothNamingsAndSkipsAStaleSocket) {
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string stale = dir_ + "/" + host + "-77";           // xpra 3.1 naming
  std::filesystem::create_directories(dir_ + "/77");
  const std::string live = dir_ + "/77/socket";                  // xpra 6.x session directory
  const int stale_fd = bind_socket(stale, /*listen=*/false);
  const int live_fd = bind_socket(live);
  ASSERT_GE(stale_fd, 0);
  ASSERT_GE(live_fd, 0);
  auto found = find_local_sockets(77);
  ASSERT_TRUE(found.ok()) << found.error().message();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0], stale);
  EXPECT_EQ((*found)[1], live);

  std::thread server([&] {
    int c = ::accept(live_fd, nullptr, nullptr);
    char buf[5] = {};
    ASSERT_EQ(::read(c, buf, 4), 4);
    ASSERT_EQ(::write(c, buf, 4), 4);
    ::close(c);
  });
  auto t = open_transport(*parse_url(":77"), {});
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ((*t)->describe(), "unix " + live);
  const uint8_t ping[4] = {'p', 'i', 'n', 'g'};
  ASSERT_TRUE((*t)->send_all(ping).ok());
  uint8_t back[4] = {};
  size_t got = 0;
  while (got < 4) {
    auto r = (*t)->read_some({back + got, 4 - got}, std::chrono::milliseconds(2000));
    ASSERT_TRUE(r.ok());
    ASSERT_FALSE(r->eof);
    got += r->bytes;
  }
  EXPECT_EQ(std::string(reinterpret_cast<char*>(back), 4), "ping");
  server.join();
  ::close(stale_fd);
  ::close(live_fd);
}

// xpra 6.x's abstract socket "@xpra/N": a leading '@' connects in the abstract namespace.
TEST(SocketTransport, AbstractUnixSocket) {
  const std::string name = "pixpath-test/" + std::to_string(::getpid());
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  name.copy(a.sun_path + 1, sizeof a.sun_path - 2);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a),
                   socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size())), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  auto t = SocketTransport::connect_unix("@" + name, std::chrono::milliseconds(2000));
  EXPECT_TRUE(t.ok()) << t.error().message();
  ::close(fd);
}

TEST(SocketTransport, RefusedTcpAndMissingUnixAreUnavailable) {
  auto t = SocketTransport::connect_tcp("127.0.0.1", 1, std::chrono::milliseconds(2000));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code(), ErrorCode::Unavailable);
  auto u = SocketTransport::connect_unix("/nonexistent/pixpath.sock", std::chrono::milliseconds(2000));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code(), ErrorCode::Unavailable);
  EXPECT_NE(u.error().reason().find("/nonexistent/pixpath.sock"), std::string::npos);
}

}  // namespace
}  // namespace pixpath::xpra
