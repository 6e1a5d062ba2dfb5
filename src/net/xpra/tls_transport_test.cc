// TlsTransport against an in-process OpenSSL server on 127.0.0.1 with certificates made by
// the test: verification on by default, the host checked as written (IP against IP SANs, a
// name against DNS SANs), and every refusal saying why (untrusted, expired, wrong host, a
// TLS 1.0-only server, a peer that does not speak TLS, a silent one) within its timeout.
#include "pixpath/net/xpra/tls_transport.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <csignal>
#include <filesystem>

#include "net/xpra/testing/raw_peer.h"
#include "net/xpra/testing/tls_certs.h"

namespace pixpath::xpra {
namespace {

using namespace std::chrono_literals;
using testing::RawPeer;

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/pixpath-tls-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

// A TLS server with `cert`: handshakes, then echoes what it reads until the client closes.
// max_version: e.g. TLS1_VERSION for a server stuck on TLS 1.0.
std::function<void(int)> tls_echo(testing::TestCert cert, int max_version = 0) {
  return [cert, max_version](int fd) {
    SSL_CTX* ctx = testing::make_tls_server_ctx(cert, max_version);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      char buf[4096];
      int n;
      while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) SSL_write(ssl, buf, n);
      SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  };
}

testing::TestCert cert_for(const Dir& d, const std::string& name, testing::TestCertOptions o) {
  auto c = testing::make_test_cert(d.path, name, o);
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c.ok() ? *c : testing::TestCert{};
}

std::string read_all(Transport& t, size_t want) {
  std::string got;
  std::vector<uint8_t> buf(4096);
  for (int i = 0; i < 100 && got.size() < want; ++i) {
    auto r = t.read_some(buf, 100ms);
    if (!r.ok() || r->eof) break;
    got.append(reinterpret_cast<const char*>(buf.data()), r->bytes);
  }
  return got;
}

// The fake servers write to clients that may have gone.
const bool kIgnoreSigpipe = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

TEST(TlsTransport, VerifiedIpAddressEchoes) {
  Dir d;
  auto cert = cert_for(d, "ip", {.ips = {"127.0.0.1"}});
  RawPeer peer(tls_echo(cert));
  TlsOptions o;
  o.ca_certs = cert.cert_file;
  auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_NE((*t)->describe().find("ssl 127.0.0.1:"), std::string::npos) << (*t)->describe();
  EXPECT_NE((*t)->cipher().find("TLSv1.3"), std::string::npos) << (*t)->cipher();
  // More than one TLS record each way.
  std::string msg(100000, 'x');
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = char('a' + i % 26);
  ASSERT_TRUE((*t)->send_all({reinterpret_cast<const uint8_t*>(msg.data()), msg.size()}).ok());
  const std::string echoed = read_all(**t, msg.size());
  EXPECT_EQ(echoed.size(), msg.size());
  EXPECT_TRUE(echoed == msg) << "the echo differs";
  (*t)->shutdown_send();
  std::vector<uint8_t> buf(16);
  auto r = (*t)->read_some(buf, 2s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->eof);
}

TEST(TlsTransport, DnsNameIsCheckedAgainstDnsNames) {
  Dir d;
  auto cert = cert_for(d, "dns", {.dns_names = {"localhost"}});
  {
    RawPeer peer(tls_echo(cert));
    TlsOptions o;
    o.ca_certs = cert.cert_file;
    auto t = TlsTransport::connect("localhost", peer.port(), o, 5s);
    ASSERT_TRUE(t.ok()) << t.error().message();
  }
  {
    // The same certificate reached by IP address: it names no IP address.
    RawPeer peer(tls_echo(cert));
    TlsOptions o;
    o.ca_certs = cert.cert_file;
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("wrong host"), std::string::npos) << t.error().message();
    EXPECT_NE(t.error().reason().find("127.0.0.1"), std::string::npos) << t.error().message();
  }
  {
    // --ssl-server-hostname: the name to check instead of the URL's host.
    RawPeer peer(tls_echo(cert));
    TlsOptions o;
    o.ca_certs = cert.cert_file;
    o.server_name = "localhost";
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
    EXPECT_TRUE(t.ok()) << t.error().message();
  }
}

TEST(TlsTransport, UntrustedCertificateIsRefusedUnlessInsecure) {
  Dir d;
  auto cert = cert_for(d, "self", {.ips = {"127.0.0.1"}});
  auto other = cert_for(d, "other", {.ips = {"127.0.0.1"}});
  {
    // The system store does not know a test certificate.
    RawPeer peer(tls_echo(cert));
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), TlsOptions{}, 5s);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().stage(), "tls");
    EXPECT_NE(t.error().reason().find("untrusted"), std::string::npos) << t.error().message();
  }
  {
    // A CA file that does not hold the server's certificate.
    RawPeer peer(tls_echo(cert));
    TlsOptions o;
    o.ca_certs = other.cert_file;
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("untrusted"), std::string::npos) << t.error().message();
  }
  {
    RawPeer peer(tls_echo(cert));
    TlsOptions o;
    o.verify = false;
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
    ASSERT_TRUE(t.ok()) << t.error().message();
    const std::string hi = "hi";
    ASSERT_TRUE((*t)->send_all({reinterpret_cast<const uint8_t*>(hi.data()), hi.size()}).ok());
    EXPECT_EQ(read_all(**t, 2), "hi");
  }
  {
    TlsOptions o;
    o.ca_certs = d.path + "/missing.pem";
    RawPeer peer([](int) {});
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("missing.pem"), std::string::npos) << t.error().message();
  }
}

TEST(TlsTransport, ExpiredCertificateIsRefused) {
  Dir d;
  auto cert = cert_for(d, "old", {.ips = {"127.0.0.1"}, .valid_from_days = -60, .valid_until_days = -1});
  RawPeer peer(tls_echo(cert));
  TlsOptions o;
  o.ca_certs = cert.cert_file;
  auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().reason().find("expired"), std::string::npos) << t.error().message();
}

TEST(TlsTransport, Tls10OnlyServerIsRefusedAsADowngrade) {
  Dir d;
  auto cert = cert_for(d, "ip", {.ips = {"127.0.0.1"}});
  RawPeer peer(tls_echo(cert, TLS1_VERSION));
  TlsOptions o;
  o.ca_certs = cert.cert_file;
  auto t = TlsTransport::connect("127.0.0.1", peer.port(), o, 5s);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().reason().find("older than 1.2"), std::string::npos) << t.error().message();
}

TEST(TlsTransport, PlainOrSilentPeersFailWithinTheTimeout) {
  {
    // An xpra tcp port without TLS, or an HTTP server: it answers with plain text.
    RawPeer peer([](int fd) {
      RawPeer::read_until(fd, "\n");
      RawPeer::send_text(fd, "HTTP/1.0 400 Bad Request\r\n\r\n");
    });
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), TlsOptions{}, 5s);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().code(), ErrorCode::Unavailable) << t.error().message();
    EXPECT_NE(t.error().reason().find("does not speak TLS"), std::string::npos) << t.error().message();
  }
  {
    RawPeer peer([](int fd) { RawPeer::read_until(fd, "never"); });
    const auto start = std::chrono::steady_clock::now();
    auto t = TlsTransport::connect("127.0.0.1", peer.port(), TlsOptions{}, 500ms);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("no TLS handshake within 500 ms"), std::string::npos)
        << t.error().message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  }
}

}  // namespace
}  // namespace pixpath::xpra
