#include "pixpath/net/xpra/connect.h"

#include "pixpath/net/xpra/local_sessions.h"
#include "pixpath/net/xpra/socket_transport.h"
#include "pixpath/net/xpra/websocket.h"

namespace pixpath::xpra {

Result<std::unique_ptr<Transport>> open_transport(const Endpoint& e, const ConnectOptions& o) {
  switch (e.scheme) {
    case Scheme::Tcp: {
      PIXPATH_TRY(auto t, SocketTransport::connect_tcp(e.host, e.port, o.timeout, o.send_timeout));
      return std::unique_ptr<Transport>(std::move(t));
    }
    case Scheme::Ssl: {
      PIXPATH_TRY(auto t, TlsTransport::connect(e.host, e.port, o.transport.tls, o.timeout, o.send_timeout));
      return std::unique_ptr<Transport>(std::move(t));
    }
    case Scheme::Ws:
    case Scheme::Wss: {
      const auto deadline = std::chrono::steady_clock::now() + o.timeout;
      std::unique_ptr<Transport> inner;
      if (e.scheme == Scheme::Ws) {
        PIXPATH_TRY(inner, SocketTransport::connect_tcp(e.host, e.port, o.timeout, o.send_timeout));
      } else {
        PIXPATH_TRY(inner, TlsTransport::connect(e.host, e.port, o.transport.tls, o.timeout, o.send_timeout));
      }
      const std::string host = e.host.find(':') != std::string::npos ? "[" + e.host + "]" : e.host;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      PIXPATH_TRY(auto t, WebSocketTransport::upgrade(std::move(inner), host + ":" + std::to_string(e.port),
                                                      e.path, std::max(left, std::chrono::milliseconds(1))));
      return std::unique_ptr<Transport>(std::move(t));
    }
    case Scheme::Ssh: {
      PIXPATH_TRY(auto t, SshTransport::start(e, o.transport.ssh, o.send_timeout));
      return std::unique_ptr<Transport>(std::move(t));
    }
    case Scheme::UnixSocket: {
      PIXPATH_TRY(auto t, SocketTransport::connect_unix(e.path, o.timeout, o.send_timeout));
      return std::unique_ptr<Transport>(std::move(t));
    }
    case Scheme::LocalDisplay: {
      auto files = find_local_sockets(e.display);
      std::vector<std::string> sockets = files.ok() ? *files : std::vector<std::string>{};
      sockets.push_back(abstract_socket_name(e.display));
      std::string failures = files.ok() ? "" : files.error().reason();
      for (const auto& path : sockets) {
        auto t = SocketTransport::connect_unix(path, o.timeout, o.send_timeout);
        if (t.ok()) return std::unique_ptr<Transport>(std::move(t).value());
        failures += (failures.empty() ? "" : "; ") + t.error().reason();
      }
      return Error(ErrorCode::Unavailable, "xpra", "connect",
                   "display :" + std::to_string(e.display) + ": " + failures);
    }
  }
  return Error(ErrorCode::Internal, "xpra", "connect", "unknown scheme");
}

}  // namespace pixpath::xpra
