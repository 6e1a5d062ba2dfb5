// The ssh transport's pieces: the --ssh command split as a shell splits it, the remote command
// as xpra's client builds it, the argv; and SshTransport over fake "ssh" children (sh scripts):
// a byte stream both ways, ssh failing before the session (its status and stderr in the
// error), the remote side printing text instead of xpra, ssh dying mid-stream, a child that
// ignores the end of its input (reaped anyway, bounded).
#include "pixpath/net/xpra/ssh_transport.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace pixpath::xpra {
namespace {

using namespace std::chrono_literals;

TEST(SshCommand, SplitsLikeAShell) {
  using V = std::vector<std::string>;
  EXPECT_EQ(*split_command("ssh -p 2222 -i key -o StrictHostKeyChecking=no"),
            (V{"ssh", "-p", "2222", "-i", "key", "-o", "StrictHostKeyChecking=no"}));
  EXPECT_EQ(*split_command("  ssh   -o 'ProxyCommand=nc %h %p' \"-i\" my\\ key "),
            (V{"ssh", "-o", "ProxyCommand=nc %h %p", "-i", "my key"}));
  EXPECT_EQ(*split_command(R"(ssh -o "a \"b\" \\c")"), (V{"ssh", "-o", R"(a "b" \c)"}));
  EXPECT_EQ(*split_command("ssh''x \"\""), (V{"sshx", ""}));
  for (const char* bad : {"", "   ", "ssh 'open", "ssh \"open"})
    EXPECT_EQ(split_command(bad).error().code(), ErrorCode::InvalidArgument) << bad;
}

TEST(SshCommand, RemoteCommandIsXprasOwn) {
  SshOptions o;
  auto c = remote_proxy_command(o, 10);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c,
            "sh -c 'if command -v \"xpra\" > /dev/null 2>&1; then xpra _proxy :10;"
            "elif [ -x $XDG_RUNTIME_DIR/xpra/run-xpra ]; then $XDG_RUNTIME_DIR/xpra/run-xpra _proxy :10;"
            "elif [ -x /usr/local/bin/xpra ]; then /usr/local/bin/xpra _proxy :10;"
            "else echo \"no xpra command found\"; exit 1; fi'");
  o.remote_xpra = {"/opt/x/bin/xpra"};
  o.socket_dir = "/tmp/s";
  EXPECT_EQ(*remote_proxy_command(o, -1),
            "sh -c 'if [ -x /opt/x/bin/xpra ]; then /opt/x/bin/xpra _proxy --socket-dir=/tmp/s;"
            "else echo \"no xpra command found\"; exit 1; fi'");
  o.remote_xpra = {"x'; rm -rf ~; '"};
  EXPECT_FALSE(remote_proxy_command(o, 1).ok());
}

TEST(SshCommand, ArgvFollowsXpra) {
  auto e = parse_url("ssh://alice@example.org:2222/7");
  ASSERT_TRUE(e.ok()) << e.error().message();
  SshOptions o;
  o.command = "ssh -i key";
  auto argv = ssh_argv(*e, o);
  ASSERT_TRUE(argv.ok());
  ASSERT_EQ(argv->size(), 10u);
  EXPECT_EQ((std::vector<std::string>(argv->begin(), argv->begin() + 9)),
            (std::vector<std::string>{"ssh", "-i", "key", "-l", "alice", "-p", "2222", "-T", "example.org"}));
  EXPECT_TRUE(argv->back().starts_with("sh -c 'if command -v"));
  EXPECT_NE(argv->back().find("xpra _proxy :7;"), std::string::npos);
  auto plain = ssh_argv(*parse_url("ssh://host/"), SshOptions{.command = "auto"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0], "ssh");
  EXPECT_EQ((*plain)[1], "-x");
  EXPECT_EQ((*plain)[2], "-T");
  EXPECT_EQ((*plain)[3], "host");
  EXPECT_NE(plain->back().find("xpra _proxy;"), std::string::npos) << "no display: xpra picks one";
  EXPECT_EQ(ssh_argv(*parse_url("ssh://host/"), SshOptions{.command = "paramiko"}).error().code(),
            ErrorCode::Unsupported);
}

std::unique_ptr<SshTransport> fake_ssh(const std::string& script) {
  auto t = SshTransport::start_argv({"sh", "-c", script}, "fake ssh");
  EXPECT_TRUE(t.ok()) << t.error().message();
  return t.ok() ? std::move(*t) : nullptr;
}

// Reads until eof, an error or `want` bytes.
Result<std::string> read_stream(Transport& t, size_t want = SIZE_MAX) {
  std::string got;
  std::vector<uint8_t> buf(4096);
  for (int i = 0; i < 100 && got.size() < want; ++i) {
    PIXPATH_TRY(auto r, t.read_some(buf, 100ms));
    if (r.eof) break;
    got.append(reinterpret_cast<const char*>(buf.data()), r.bytes);
  }
  return got;
}

TEST(SshTransport, CarriesTheStreamOfItsChild) {
  auto t = fake_ssh("printf P; exec cat");
  ASSERT_TRUE(t);
  std::string msg(300000, 'm');
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = char(i * 13);
  // Read while sending: cat blocks when nobody reads its output.
  std::thread sender([&] { EXPECT_TRUE(t->send_all({reinterpret_cast<const uint8_t*>(msg.data()), msg.size()}).ok()); });
  auto got = read_stream(*t, msg.size() + 1);
  sender.join();
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(*got, "P" + msg);
  t->shutdown_send();  // cat ends: a clean end of stream
  auto rest = read_stream(*t);
  ASSERT_TRUE(rest.ok()) << rest.error().message();
  EXPECT_EQ(*rest, "");
}

TEST(SshTransport, FailuresSayWhatHappened) {
  struct Case {
    std::string script, says;
    ErrorCode code;
  };
  for (const Case& c : {
           Case{"echo 'root@host: Permission denied (publickey).' >&2; exit 255",
                "ssh exited with status 255 before the session started; ssh said: 'root@host: "
                "Permission denied (publickey).'",
                ErrorCode::Unavailable},
           Case{"echo \"no xpra command found\"; exit 1",
                "the remote side has no xpra: it printed 'no xpra command found' (name the remote "
                "xpra with --remote-xpra PATH)",
                ErrorCode::Unavailable},
           Case{"printf 'no xpra'; exit 1", "the remote command printed 'no xpra' and ended",
                ErrorCode::Unavailable},
           Case{"printf 'P\\x00\\x00'; sleep 0.2; echo 'Connection to host closed by remote host.' >&2; exit 255",
                "ssh exited with status 255 in the middle of the session; ssh said: 'Connection to "
                "host closed by remote host.'",
                ErrorCode::Io},
           Case{"kill -9 $$", "ssh was killed by signal 9 before the session started", ErrorCode::Unavailable},
       }) {
    SCOPED_TRACE(c.script);
    auto t = fake_ssh(c.script);
    ASSERT_TRUE(t);
    auto got = read_stream(*t);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code(), c.code) << got.error().message();
    EXPECT_NE(got.error().reason().find(c.says), std::string::npos) << got.error().message();
    EXPECT_NE(got.error().reason().find("fake ssh (pid "), std::string::npos) << got.error().message();
  }
  auto missing = SshTransport::start_argv({"/nonexistent/ssh", "-T", "host"}, "ssh x");
  ASSERT_TRUE(missing.ok());
  auto got = read_stream(**missing);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().reason().find("status 127"), std::string::npos) << got.error().message();
  EXPECT_NE(got.error().reason().find("cannot run '/nonexistent/ssh'"), std::string::npos)
      << got.error().message();
}

TEST(SshTransport, OtherTextPassesToTheSession) {
  // A login banner or a server's plain-text refusal relayed by xpra _proxy: the session
  // reports it (Session::plain_text_reply).
  auto t = fake_ssh("printf 'disconnect: failed to parse bencode packet\\n'");
  ASSERT_TRUE(t);
  auto got = read_stream(*t);
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(*got, "disconnect: failed to parse bencode packet\n");
}

TEST(SshTransport, AChildThatIgnoresItsInputIsStillReaped) {
  pid_t pid = 0;
  const auto start = std::chrono::steady_clock::now();
  {
    auto t = fake_ssh("trap '' HUP; printf P; exec sleep 100");
    ASSERT_TRUE(t);
    pid = t->pid();
    auto got = read_stream(*t, 1);
    ASSERT_TRUE(got.ok());
    t->shutdown();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
  EXPECT_EQ(::kill(pid, 0), -1) << "the child was reaped";
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace pixpath::xpra
