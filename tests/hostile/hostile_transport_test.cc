// Hostile or broken peers on the secure transports, met by the real `pixpath attach` binary as
// a user runs it: a TLS server whose certificate does not verify (untrusted, wrong host,
// expired), a TLS downgrade (a server offering only TLS 1.0/1.1, plain text or silence on an
// ssl:// port), a websocket peer with a bad handshake answer, a text frame, an oversized or
// broken fragmented frame, and an ssh child (a fake command through --ssh) that dies in the
// middle of the stream or prints garbage. Each must end with exit status 1 and an error naming
// the transport and what failed, within seconds (every run is bounded; a hang fails).
// The peers are scripted in this process on 127.0.0.1 (RawPeer), with certificates made by
// the test; no xpra server is needed.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>

#include "net/xpra/testing/raw_peer.h"
#include "net/xpra/testing/tls_certs.h"
#include "pixpath/net/xpra/websocket.h"
#include "support/processes.h"

namespace pixpath::testing {
namespace {

using namespace std::chrono_literals;
using xpra::testing::RawPeer;

const bool kIgnoreSigpipe = [] {
  ::signal(SIGPIPE, SIG_IGN);  // the peers write to clients that may have gone
  return true;
}();

// What a user meets: `pixpath attach URL` must fail with status 1, saying `says`, quickly.
void expect_refusal(const TempDir& tmp, const std::string& url, std::vector<std::string> extra,
                    const std::vector<std::string>& says) {
  SCOPED_TRACE(url);
  std::vector<std::string> argv{pixpath_binary(), "attach", url, "--headless", "--exit-after", "5",
                                "--connect-timeout", "3"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto start = std::chrono::steady_clock::now();
  auto r = run_process(argv, tmp.path.string(), 20s);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.timed_out) << "pixpath attach hung; stderr:\n" << r.err;
  std::fprintf(stderr, "%s (%.1f s, status %d):\n%s", url.c_str(),
               std::chrono::duration<double>(took).count(), r.exit_code, r.err.c_str());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const std::string& s : says) EXPECT_NE(r.err.find(s), std::string::npos) << "missing '" << s << "' in:\n" << r.err;
  EXPECT_LT(took, 10s) << r.err;
  EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
}

// A TLS server with `cert` (optionally stuck on old protocol versions): handshakes, then
// reads until the client goes.
std::function<void(int)> tls_server(xpra::testing::TestCert cert, int max_version = 0) {
  return [cert, max_version](int fd) {
    SSL_CTX* ctx = xpra::testing::make_tls_server_ctx(cert, max_version);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      char buf[4096];
      while (SSL_read(ssl, buf, sizeof buf) > 0) {
      }
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  };
}

xpra::testing::TestCert cert(const TempDir& tmp, const std::string& name,
                             xpra::testing::TestCertOptions o) {
  auto c = xpra::testing::make_test_cert(tmp.path.string(), name, o);
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c.ok() ? *c : xpra::testing::TestCert{};
}

std::string ssl_url(const RawPeer& p) { return "ssl://127.0.0.1:" + std::to_string(p.port()) + "/"; }
std::string ws_url(const RawPeer& p) { return "ws://127.0.0.1:" + std::to_string(p.port()) + "/"; }

TEST(HostileTransports, TlsCertificatesThatDoNotVerify) {
  TempDir tmp;
  const auto good = cert(tmp, "good", {.ips = {"127.0.0.1"}});
  {
    RawPeer peer(tls_server(good));
    expect_refusal(tmp, ssl_url(peer), {}, {"xpra tls", "untrusted", "--ssl-ca-certs"});
  }
  {
    const auto other = cert(tmp, "other", {.dns_names = {"other.example"}});
    RawPeer peer(tls_server(other));
    expect_refusal(tmp, ssl_url(peer), {"--ssl-ca-certs", other.cert_file},
                   {"xpra tls", "wrong host", "'127.0.0.1'"});
  }
  {
    const auto expired = cert(tmp, "expired", {.ips = {"127.0.0.1"}, .valid_from_days = -30, .valid_until_days = -1});
    RawPeer peer(tls_server(expired));
    expect_refusal(tmp, ssl_url(peer), {"--ssl-ca-certs", expired.cert_file}, {"xpra tls", "expired"});
  }
}

TEST(HostileTransports, TlsDowngradePlainTextAndSilence) {
  TempDir tmp;
  const auto good = cert(tmp, "good", {.ips = {"127.0.0.1"}});
  const std::vector<std::string> ca{"--ssl-ca-certs", good.cert_file};
  for (int version : {TLS1_VERSION, TLS1_1_VERSION}) {
    RawPeer peer(tls_server(good, version));
    expect_refusal(tmp, ssl_url(peer), ca, {"xpra tls", "downgrade refused", "older than 1.2"});
  }
  {
    // A plain-text answer on the ssl:// port (an xpra tcp socket without TLS says this).
    RawPeer peer([](int fd) {
      RawPeer::send_text(fd, "disconnect: invalid protocol for this port\n");
      RawPeer::read_until(fd, "never");
    });
    expect_refusal(tmp, ssl_url(peer), ca, {"xpra tls", "does not speak TLS"});
  }
  {
    RawPeer peer([](int fd) { RawPeer::read_until(fd, "never"); });
    expect_refusal(tmp, ssl_url(peer), ca, {"xpra tls", "no TLS handshake within"});
  }
}

// A websocket server: answers the upgrade request (with `answer`, or a correct 101 when empty),
// then sends `after` and waits for the client to go.
std::function<void(int)> ws_server(std::string answer, std::string after) {
  return [answer, after](int fd) {
    const std::string request = RawPeer::read_until(fd, "\r\n\r\n");
    std::string reply = answer;
    if (reply.empty()) {
      const std::string field = "Sec-WebSocket-Key: ";
      const size_t at = request.find(field);
      const size_t end = at == std::string::npos ? at : request.find("\r\n", at);
      const std::string key = at == std::string::npos ? "" : request.substr(at + field.size(), end - at - field.size());
      reply = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Accept: " + xpra::ws::accept_key(key) + "\r\nSec-WebSocket-Protocol: binary\r\n\r\n";
    }
    RawPeer::send_text(fd, reply + after);
    RawPeer::read_until(fd, "never");
  };
}

// A server frame header (unmasked) for `len` bytes of payload.
std::string frame_header(uint8_t b0, uint64_t len) {
  std::string h(1, char(b0));
  if (len < 126) {
    h += char(len);
  } else {
    h += char(127);
    for (int i = 7; i >= 0; --i) h += char(uint8_t(len >> (8 * i)));
  }
  return h;
}

TEST(HostileTransports, WebsocketPeers) {
  TempDir tmp;
  struct Case {
    std::string answer, after;
    std::vector<std::string> says;
  };
  for (const Case& c : {
           Case{"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "", {"xpra websocket", "400 Bad Request"}},
           Case{"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Accept: d3Jvbmcga2V5\r\n\r\n",
                "",
                {"xpra websocket", "Sec-WebSocket-Accept"}},
           Case{"", frame_header(0x81, 5) + "hello", {"xpra websocket", "text frame"}},
           // 1 TiB announced: refused from the header, nothing allocated.
           Case{"", frame_header(0x82, uint64_t{1} << 40), {"xpra websocket", "a frame of 1099511627776 bytes, over the limit"}},
           Case{"", frame_header(0x80, 3) + "abc", {"xpra websocket", "continuation frame with no fragmented message"}},
           Case{"", frame_header(0x02, 1) + "P" + frame_header(0x82, 1) + "x",
                {"xpra websocket", "new binary frame inside a fragmented message"}},
       }) {
    RawPeer peer(ws_server(c.answer, c.after));
    expect_refusal(tmp, ws_url(peer), {}, c.says);
  }
}

TEST(HostileTransports, SshChildThatDiesOrPrintsGarbage) {
  TempDir tmp;
  struct Case {
    std::string script;
    std::vector<std::string> says;
  };
  for (const Case& c : {
           // Half an xpra chunk header, then ssh loses the connection.
           Case{"printf 'P\\000\\000'; sleep 0.3; echo 'Connection to host closed by remote host.' >&2; exit 255",
                {"xpra ssh", "in the middle of the session", "Connection to host closed by remote host."}},
           // Killed by a signal mid-stream.
           Case{"printf 'P\\000\\000'; sleep 0.3; kill -9 $$", {"xpra ssh", "killed by signal 9"}},
           // Binary garbage on stdout instead of xpra's stream.
           Case{"printf '\\001\\002\\377garbage\\000\\n'; exec sleep 30", {"not 'P': not an xpra peer (ssh ssh://user@host.invalid/100"}},
       }) {
    SCOPED_TRACE(c.script);
    const std::string fake = tmp / "fake-ssh";
    std::ofstream(fake) << c.script << "\n";
    expect_refusal(tmp, "ssh://user@host.invalid/100", {"--ssh", "sh " + fake}, c.says);
  }
}

}  // namespace
}  // namespace pixpath::testing
