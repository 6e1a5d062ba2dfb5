// The test-server helper against both real xpra versions: each starts, listens where it was
// asked to, and answers. A version that is not installed is skipped with the reason (CI has
// both: scripts/setup installs Debian's 3.1.3 and builds 6.5.5 with scripts/setup-xpra6).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "net/xpra/testing/recording_listener.h"
#include "net/xpra/testing/xpra_server.h"
#include "pixpath/net/xpra/session.h"
#include "support/processes.h"

namespace pixpath::xpra::testing {
namespace {

using namespace std::chrono_literals;

#define SKIP_UNLESS_INSTALLED(version)                                       \
  do {                                                                       \
    auto available = xpra_available(version);                                \
    if (!available.ok()) GTEST_SKIP() << available.error().message();        \
  } while (0)

// The log filter itself (no server): the known xpra 3.1 race is dropped, anything else kept
// whole, through its exception line.
TEST(XpraServerLog, UnexpectedTracebacksKeepsAllButKnownXpraRaces) {
  const std::string race =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/xpra/x11/x11_server_core.py\", line 492, in "
      "reenable_keymap_changes\n"
      "    self._keys_changed()\n"
      "  File \"/usr/lib/python3/dist-packages/xpra/server/mixins/input_server.py\", line 301, in "
      "_keys_changed\n"
      "    for ss in self._server_sources.values():\n"
      "RuntimeError: dictionary changed size during iteration\n";
  const std::string other =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/xpra/server/window/window_source.py\", line 9, in "
      "damage\n"
      "    x = y[1]\n"
      "IndexError: list index out of range\n";
  const std::string line = "2026-12-03 14:55:38,320 DPI set to 96 x 96\n";
  EXPECT_EQ(unexpected_tracebacks(line + race + line), "");
  EXPECT_EQ(unexpected_tracebacks(line + race + other + line + race), other);
  EXPECT_EQ(unexpected_tracebacks(line + other), other);
  // Another thread's log line in the middle of a traceback (seen in CI, 2026-12-06) is not
  // its end.
  const size_t cut = race.find("    self._keys_changed");
  const std::string split_race = race.substr(0, cut) + line + race.substr(cut);
  EXPECT_EQ(unexpected_tracebacks(line + split_race + line), "");
  const size_t cut2 = other.find("    x = y");
  EXPECT_EQ(unexpected_tracebacks(other.substr(0, cut2) + line + other.substr(cut2) + line), other);
  // The same exception elsewhere is not the known race.
  const std::string elsewhere =
      "Traceback (most recent call last):\n"
      "  File \"x.py\", line 1, in draw\n"
      "RuntimeError: dictionary changed size during iteration\n";
  EXPECT_EQ(unexpected_tracebacks(elsewhere), elsewhere);
  // A log that ends inside a traceback keeps what is there.
  EXPECT_EQ(unexpected_tracebacks("Traceback (most recent call last):\n  File"),
            "Traceback (most recent call last):\n  File\n");
}

// Sends `bytes` to the server's TCP port and returns everything it answers until it closes
// the connection (bounded).
std::string send_and_read(int port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket failed";
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, size_t(n));
  }
  ::close(fd);
  return got;
}

// A bencoded hello in an xpra chunk header (flags 0 = bencode), as pixpath's 3.1 client
// sends it, reduced to one key.
std::string bencode_hello() {
  const std::string body = "l5:hellod7:version5:3.1.3ee";
  std::string h = {'P', 0, 0, 0};
  uint32_t n = htonl(uint32_t(body.size()));
  h.append(reinterpret_cast<const char*>(&n), 4);
  return h + body;
}

// Runs xpra's own client of that version, e.g. `xpra id URL` (the server's identity).
::pixpath::testing::ProcessResult run_xpra(XpraVersion v, std::vector<std::string> args,
                                           const std::string& tmp) {
  std::map<std::string, std::string> env = {{"XDG_RUNTIME_DIR", tmp}};
  if (v == XpraVersion::V6) env["XPRA_SYSTEM_CONF_DIRS"] = xpra6_prefix() + "/etc/xpra";
  args.insert(args.begin(), xpra_command(v));
  return ::pixpath::testing::run_process(args, tmp, 60s, env);
}

TEST(XpraServerTest, Xpra31AnswersPixpathsHello) {
  SKIP_UNLESS_INSTALLED(XpraVersion::V3_1);
  auto s = XpraServer::start({.version = XpraVersion::V3_1, .start = ""});
  ASSERT_TRUE(s.ok()) << s.error().message();
  RecordingListener listener;
  SessionOptions o;
  o.url = (*s)->url();
  o.encodings = {"rgb24", "png"};
  o.log = [](std::string_view) {};
  auto session = Session::start(std::move(o), listener);
  ASSERT_TRUE(session.ok()) << session.error().message();
  listener.set_session(session->get());
  auto ready = (*session)->wait_until_ready(30s);
  ASSERT_TRUE(ready.ok()) << ready.error().message();
  // Ready is announced before the listener hears of the hello: wait for it.
  ASSERT_TRUE(listener.wait_for(10s, [](const auto& e) { return !e.hellos.empty(); }));
  auto ev = listener.snapshot();
  ASSERT_EQ(ev.hellos.size(), 1u);
  EXPECT_EQ(ev.hellos[0].version.rfind("3.1", 0), 0u) << ev.hellos[0].version;
  EXPECT_TRUE((*session)->disconnect("test done").ok());
}

TEST(XpraServerTest, Xpra6StartsWithItsOwnConfigurationAndRefusesBencode) {
  SKIP_UNLESS_INSTALLED(XpraVersion::V6);
  auto s = XpraServer::start({.version = XpraVersion::V6, .start = ""});
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ((*s)->version(), XpraVersion::V6);
  // 6.x decodes rencodeplus only: a bencoded hello gets one plain-text line (no xpra header)
  // and the connection is closed. pixpath's client must show that line as the reason.
  EXPECT_EQ(send_and_read((*s)->port(), bencode_hello()),
            "disconnect invalid packet encoding: 'bencode' decoder is not available\n");
  // xpra 6.5.5's own client gets the session's identity over the same port.
  ::pixpath::testing::TempDir tmp;
  auto id = run_xpra(XpraVersion::V6, {"id", (*s)->url()}, tmp.path.string());
  EXPECT_EQ(id.exit_code, 0) << id.out << id.err;
  EXPECT_NE(id.out.find("display=:" + std::to_string((*s)->display())), std::string::npos)
      << id.out << id.err;
  EXPECT_EQ((*s)->unexpected_tracebacks(), "") << (*s)->log_tail();
}

class XpraServerBothVersions : public ::testing::TestWithParam<XpraVersion> {};

TEST_P(XpraServerBothVersions, ListensOnAUnixSocketAlone) {
  SKIP_UNLESS_INSTALLED(GetParam());
  auto s = XpraServer::start({.version = GetParam(), .start = "", .bind_tcp = false, .bind_unix = true});
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ((*s)->port(), 0);
  ASSERT_FALSE((*s)->socket_path().empty());
  ::pixpath::testing::TempDir tmp;
  auto id = run_xpra(GetParam(), {"id", "socket://" + (*s)->socket_path()}, tmp.path.string());
  EXPECT_EQ(id.exit_code, 0) << id.out << id.err;
  EXPECT_NE(id.out.find("display=:" + std::to_string((*s)->display())), std::string::npos)
      << id.out << id.err;
}

TEST_P(XpraServerBothVersions, PasswordProtectsTheTcpSocket) {
  SKIP_UNLESS_INSTALLED(GetParam());
  auto s = XpraServer::start({.version = GetParam(), .start = "", .password = "s3cret"});
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_FALSE((*s)->password_file().empty());
  // xpra's own client: refused with a wrong password, let in with the right one.
  ::pixpath::testing::TempDir tmp;
  const std::string wrong = tmp / "wrong-password";
  std::ofstream(wrong) << "not-it";
  auto refused = run_xpra(GetParam(), {"info", (*s)->url(), "--password-file=" + wrong}, tmp.path.string());
  EXPECT_NE(refused.exit_code, 0) << "a wrong password was accepted:\n" << refused.out << refused.err;
  auto let_in = run_xpra(GetParam(), {"info", (*s)->url(), "--password-file=" + (*s)->password_file()},
                         tmp.path.string());
  EXPECT_EQ(let_in.exit_code, 0) << let_in.out << let_in.err;
}

TEST_P(XpraServerBothVersions, StopEndsTheServerAndItsDisplay) {
  SKIP_UNLESS_INSTALLED(GetParam());
  auto s = XpraServer::start({.version = GetParam(), .start = "", .encoding = "jpeg"});
  ASSERT_TRUE(s.ok()) << s.error().message();
  const int display = (*s)->display();
  const int port = (*s)->port();
  const std::string dir = (*s)->dir();
  (*s)->stop();
  EXPECT_EQ(send_and_read(port, bencode_hello()), "") << "port " << port << " still answers";
  EXPECT_NE(::access(fmt::format("/tmp/.X11-unix/X{}", display).c_str(), F_OK), 0)
      << "display :" << display << " still has its socket";
  EXPECT_NE(::access(dir.c_str(), F_OK), 0) << dir << " not removed";
}

INSTANTIATE_TEST_SUITE_P(Versions, XpraServerBothVersions,
                         ::testing::Values(XpraVersion::V3_1, XpraVersion::V6),
                         [](const auto& param_info) {
                           return std::string(param_info.param == XpraVersion::V6 ? "Xpra6" : "Xpra31");
                         });

}  // namespace
}  // namespace pixpath::xpra::testing
