#include "pixpath/net/xpra/tls_transport.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "pixpath/core/log.h"
#include "pixpath/net/xpra/socket_transport.h"

namespace pixpath::xpra {

struct TlsTransport::State {
  int fd = -1;
  SSL_CTX* ctx = nullptr;
  Mutex mu;  // every call into `ssl`
  SSL* ssl PIXPATH_GUARDED_BY(mu) = nullptr;
  Mutex send_mu;  // held for the whole of one send_all(), taken before mu
  std::atomic<bool> closed{false};
  std::atomic<bool> send_closed{false};

  ~State() {
    {
      MutexLock lock(mu);
      if (ssl) SSL_free(ssl);
      ssl = nullptr;
    }
    if (ctx) SSL_CTX_free(ctx);
    if (fd >= 0) ::close(fd);
  }
};

namespace {

Error tls_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "tls", std::move(reason));
}

// The OpenSSL error queue as text (emptied), or `fallback`.
std::string openssl_errors(std::string fallback = "") {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? fallback : out;
}

bool is_ip_literal(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return ::inet_pton(AF_INET, host.c_str(), &a4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

// What a failed certificate verification means, in words a user acts on.
std::string verify_failure(long result, const std::string& name) {
  const std::string detail = X509_verify_cert_error_string(result);
  switch (result) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return fmt::format("the server's certificate has expired ({})", detail);
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return fmt::format("the server's certificate is not valid yet ({})", detail);
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return fmt::format("wrong host: the server's certificate does not name '{}' ({})", name, detail);
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
      return fmt::format(
          "untrusted: the server's certificate is not signed by a trusted authority ({}); "
          "--ssl-ca-certs FILE names the authority (or the server's own certificate)",
          detail);
    default: return fmt::format("the server's certificate does not verify: {}", detail);
  }
}

// OpenSSL's socket BIO writes with write(): a peer that has gone would raise SIGPIPE and kill
// the process. This BIO is the socket BIO with its writes through send(MSG_NOSIGNAL).
int nosignal_write(BIO* b, const char* in, int n) {
  int fd = -1;
  BIO_get_fd(b, &fd);
  errno = 0;
  const int r = int(::send(fd, in, size_t(n), MSG_NOSIGNAL));
  BIO_clear_retry_flags(b);
  if (r <= 0 && BIO_sock_should_retry(r)) BIO_set_retry_write(b);
  return r;
}

const BIO_METHOD* nosignal_socket_method() {
  static BIO_METHOD* method = [] {
    const BIO_METHOD* base = BIO_s_socket();
    BIO_METHOD* m = BIO_meth_new(BIO_TYPE_SOCKET, "pixpath socket (no SIGPIPE)");
    BIO_meth_set_write(m, nosignal_write);
    BIO_meth_set_read(m, BIO_meth_get_read(base));
    BIO_meth_set_puts(m, BIO_meth_get_puts(base));
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base));
    BIO_meth_set_create(m, BIO_meth_get_create(base));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(base));
    return m;
  }();
  return method;
}

// Waits for `events` on fd until `deadline`; false on timeout or error.
bool wait_fd(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, int(left.count()));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

std::string tls_library_version() { return OpenSSL_version(OPENSSL_VERSION); }

TlsTransport::TlsTransport(std::unique_ptr<State> state, std::string description,
                           std::chrono::milliseconds send_timeout)
    : state_(std::move(state)), description_(std::move(description)), send_timeout_(send_timeout) {}

TlsTransport::~TlsTransport() = default;

Result<std::unique_ptr<TlsTransport>> TlsTransport::connect(const std::string& host, uint16_t port,
                                                            const TlsOptions& options,
                                                            std::chrono::milliseconds timeout,
                                                            std::chrono::milliseconds send_timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto st = std::make_unique<State>();
  std::string where;
  PIXPATH_TRY(st->fd, connect_tcp_socket(host, port, timeout, &where));
  ERR_clear_error();
  st->ctx = SSL_CTX_new(TLS_client_method());
  if (!st->ctx) return tls_error(ErrorCode::Internal, "SSL_CTX_new: " + openssl_errors());
  // TLS 1.2 at least: a server (or a man in the middle) offering only older versions is refused.
  SSL_CTX_set_min_proto_version(st->ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(st->ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const std::string name = options.server_name.empty() ? host : options.server_name;
  if (options.verify) {
    SSL_CTX_set_verify(st->ctx, SSL_VERIFY_PEER, nullptr);
    if (options.ca_certs.empty() || options.ca_certs == "default") {
      if (SSL_CTX_set_default_verify_paths(st->ctx) != 1)
        return tls_error(ErrorCode::Unavailable,
                         "cannot load the system's trust store: " + openssl_errors());
    } else {
      const bool dir = options.ca_certs.back() == '/' || ::access((options.ca_certs + "/.").c_str(), F_OK) == 0;
      const int ok = dir ? SSL_CTX_load_verify_locations(st->ctx, nullptr, options.ca_certs.c_str())
                         : SSL_CTX_load_verify_locations(st->ctx, options.ca_certs.c_str(), nullptr);
      if (ok != 1)
        return tls_error(ErrorCode::InvalidArgument,
                         fmt::format("cannot load the CA certificates '{}': {}", options.ca_certs,
                                     openssl_errors("unreadable")));
    }
  } else {
    SSL_CTX_set_verify(st->ctx, SSL_VERIFY_NONE, nullptr);
    PIXPATH_LOG(LogLevel::Warning,
                "xpra: tls {}: the server's certificate is NOT verified (--ssl-insecure): the "
                "connection is encrypted, but to whoever answers",
                where);
  }
  std::string cipher;
  {
    MutexLock lock(st->mu);
    st->ssl = SSL_new(st->ctx);
    if (!st->ssl) return tls_error(ErrorCode::Internal, "SSL_new: " + openssl_errors());
    BIO* bio = BIO_new(nosignal_socket_method());
    if (!bio) return tls_error(ErrorCode::Internal, "BIO_new: " + openssl_errors());
    BIO_set_fd(bio, st->fd, BIO_NOCLOSE);
    SSL_set_bio(st->ssl, bio, bio);
    const bool ip = is_ip_literal(name);
    if (!ip) SSL_set_tlsext_host_name(st->ssl, name.c_str());  // SNI: names only (RFC 6066)
    if (options.verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(st->ssl);
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      const int set = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                         : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
      if (set != 1) return tls_error(ErrorCode::InvalidArgument, fmt::format("bad host name '{}'", name));
    }
    while (true) {
      ERR_clear_error();
      const int rc = SSL_connect(st->ssl);
      if (rc == 1) break;
      const int e = SSL_get_error(st->ssl, rc);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        if (!wait_fd(st->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline))
          return tls_error(ErrorCode::Unavailable,
                           fmt::format("{}: no TLS handshake within {} ms (is it a TLS port?)",
                                       where, timeout.count()));
        continue;
      }
      const long verify = SSL_get_verify_result(st->ssl);
      if (options.verify && verify != X509_V_OK)
        return tls_error(ErrorCode::Unavailable, fmt::format("{}: {}", where, verify_failure(verify, name)));
      const unsigned long first = ERR_peek_error();
      std::string why = openssl_errors(e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN
                                           ? "the server closed the connection during the handshake"
                                           : "handshake failed");
      const int reason = ERR_GET_REASON(first);
      if (reason == SSL_R_UNSUPPORTED_PROTOCOL || reason == SSL_R_TLSV1_ALERT_PROTOCOL_VERSION) {
        why = "downgrade refused: the server offers only a TLS version older than 1.2: " + why;
      } else if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
        // Its answer is not a TLS record: plain text (an xpra tcp port without TLS, HTTP).
        why = "the server does not speak TLS on this port (its answer is not a TLS record; a "
              "plain tcp:// or ws:// port?): " + why;
      }
      return tls_error(ErrorCode::Unavailable, fmt::format("{}: {}", where, why));
    }
    cipher = fmt::format("{} {}", SSL_get_version(st->ssl), SSL_get_cipher_name(st->ssl));
  }
  return std::unique_ptr<TlsTransport>(
      new TlsTransport(std::move(st), fmt::format("ssl {} ({})", where, cipher), send_timeout));
}

std::string TlsTransport::cipher() const {
  MutexLock lock(state_->mu);
  return fmt::format("{} {}", SSL_get_version(state_->ssl), SSL_get_cipher_name(state_->ssl));
}

Result<void> TlsTransport::send_all(std::span<const uint8_t> bytes) {
  State& s = *state_;
  MutexLock whole(s.send_mu);
  const auto deadline = std::chrono::steady_clock::now() + send_timeout_;
  size_t done = 0;
  while (done < bytes.size()) {
    if (s.send_closed.load()) return tls_error(ErrorCode::Cancelled, "connection is closed");
    int e = 0;
    {
      MutexLock lock(s.mu);
      ERR_clear_error();
      const size_t n = std::min<size_t>(bytes.size() - done, 1 << 30);
      const int rc = SSL_write(s.ssl, bytes.data() + done, int(n));
      if (rc > 0) {
        done += size_t(rc);
        continue;
      }
      e = SSL_get_error(s.ssl, rc);
    }
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
      if (!wait_fd(s.fd, e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, deadline)) {
        s.send_closed = true;
        return tls_error(ErrorCode::Io, "send: the server did not read for the send timeout");
      }
      continue;
    }
    s.send_closed = true;
    return tls_error(ErrorCode::Io, "send: " + openssl_errors(std::strerror(errno)));
  }
  return {};
}

Result<Transport::ReadResult> TlsTransport::read_some(std::span<uint8_t> buffer,
                                                        std::chrono::milliseconds timeout) {
  State& s = *state_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (s.closed.load()) return ReadResult{0, true};
    int e = 0;
    {
      MutexLock lock(s.mu);
      ERR_clear_error();
      const int rc = SSL_read(s.ssl, buffer.data(), int(std::min<size_t>(buffer.size(), 1 << 30)));
      if (rc > 0) return ReadResult{size_t(rc), false};
      e = SSL_get_error(s.ssl, rc);
    }
    if (e == SSL_ERROR_ZERO_RETURN) return ReadResult{0, true};
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      if (!wait_fd(s.fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) return ReadResult{};
      continue;
    }
    if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
      // The peer closed the TCP connection without a TLS close_notify: the end of the stream
      // for us (xpra servers close that way), or a reset.
      return ReadResult{0, true};
    }
    if (s.closed.load()) return ReadResult{0, true};
    return tls_error(ErrorCode::Io, "read: " + openssl_errors("TLS error"));
  }
}

// Neither takes a mutex: shutting the socket down is what unblocks a waiting sender or reader.
void TlsTransport::shutdown() {
  state_->closed = true;
  state_->send_closed = true;
  ::shutdown(state_->fd, SHUT_RDWR);
}

void TlsTransport::shutdown_send() {
  State& s = *state_;
  if (s.send_closed.exchange(true)) return;
  {
    MutexLock lock(s.mu);
    SSL_shutdown(s.ssl);  // close_notify, best effort (non-blocking)
  }
  ::shutdown(s.fd, SHUT_WR);
}

}  // namespace pixpath::xpra
