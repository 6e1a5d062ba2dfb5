// open_transport(): the byte stream to an Endpoint (endpoint.h): a TCP or Unix socket, TLS
// (tls_transport.h), a websocket over either (websocket.h), or ssh (ssh_transport.h). A local
// display (:N) tries each of its sockets (local_sessions.h) in turn, so a stale socket of an
// ended session does not hide the live one.
#pragma once

#include <chrono>
#include <memory>

#include "pixpath/core/result.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/ssh_transport.h"
#include "pixpath/net/xpra/tls_transport.h"
#include "pixpath/net/xpra/transport.h"

namespace pixpath::xpra {

// How to secure and reach the transports that need more than an address.
struct TransportOptions {
  TlsOptions tls;  // ssl:// and wss://
  SshOptions ssh;  // ssh://
};

struct ConnectOptions {
  std::chrono::milliseconds timeout{5000};       // the whole connect, name lookup, TLS and
                                                 // websocket handshakes included
  std::chrono::milliseconds send_timeout{10000};  // Transport::send_all's bound
  TransportOptions transport;
};

[[nodiscard]] Result<std::unique_ptr<Transport>> open_transport(const Endpoint& endpoint,
                                                                const ConnectOptions& options);

}  // namespace pixpath::xpra
