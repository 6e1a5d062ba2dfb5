// TlsTransport: a Transport over TLS (OpenSSL) on a connected TCP socket, for ssl:// and
// wss:// (endpoint.h).
//
// Security: the server's certificate is verified by default, against the system's trust store
// or TlsOptions::ca_certs, and matched against the host as written in the URL: a DNS name
// against the certificate's DNS names, an IP address against its IP addresses. TLS 1.2 is the
// oldest version accepted (a server offering only older ones is refused as a downgrade).
// TlsOptions::verify = false (`--ssl-insecure`, xpra's `--ssl-server-verify-mode=none`) turns
// verification off and logs a warning: the traffic is still encrypted but anyone on the path
// can read it. Handshake errors say what failed: untrusted, expired, wrong host, old protocol.
//
// Threading and lifetime: as Transport (transport.h). One OpenSSL object is shared by the
// reader and the senders, so every OpenSSL call runs under one mutex; the socket is
// non-blocking and waits happen in poll() (the reader without the mutex), so a reader waiting
// for data never blocks a sender. Sends are bounded by the send timeout.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/transport.h"

namespace pixpath::xpra {

struct TlsOptions {
  bool verify = true;       // false: no certificate or host check (warned about)
  std::string ca_certs;     // a PEM file (or a directory of hashed certificates); empty or
                            // "default": the system's trust store
  std::string server_name;  // what the certificate must name; empty: the URL's host
};

// "OpenSSL 3.0.19 27 Jan 2026": the TLS library in use, for `pixpath info`.
std::string tls_library_version();

class TlsTransport final : public Transport {
 public:
  // Connects a TCP socket to host:port and runs the TLS handshake, all within `timeout`.
  // Errors: Unavailable (no connection, handshake failed, certificate refused), subject
  // "xpra", stage "tls", the reason naming what failed.
  [[nodiscard]] static Result<std::unique_ptr<TlsTransport>> connect(
      const std::string& host, uint16_t port, const TlsOptions& options,
      std::chrono::milliseconds timeout,
      std::chrono::milliseconds send_timeout = std::chrono::seconds(10));

  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  [[nodiscard]] Result<void> send_all(std::span<const uint8_t> bytes) override;
  [[nodiscard]] Result<ReadResult> read_some(std::span<uint8_t> buffer,
                                             std::chrono::milliseconds timeout) override;
  void shutdown() override;
  void shutdown_send() override;
  std::string describe() const override { return description_; }

  // "TLSv1.3 TLS_AES_256_GCM_SHA384", for messages and tests.
  std::string cipher() const;

  struct State;

 private:
  TlsTransport(std::unique_ptr<State> state, std::string description,
               std::chrono::milliseconds send_timeout);

  std::unique_ptr<State> state_;
  const std::string description_;
  const std::chrono::milliseconds send_timeout_;
};

}  // namespace pixpath::xpra
