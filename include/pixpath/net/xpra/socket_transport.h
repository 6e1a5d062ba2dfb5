// SocketTransport: a Transport over one connected POSIX stream socket, TCP (TCP_NODELAY) or
// Unix. Sends are bounded by a send timeout (SO_SNDTIMEO), so a wedged peer cannot block a
// sender for ever; reads wait in poll() with the caller's timeout.
//
// Threading and lifetime: as Transport (transport.h). The socket is closed by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/transport.h"

namespace pixpath::xpra {

// A connected TCP socket to host:port within `timeout` (name lookup included), non-blocking,
// TCP_NODELAY, close-on-exec; the caller owns the descriptor. `where` receives "HOST:PORT" for
// messages. For transports layered on TCP (TLS).
[[nodiscard]] Result<int> connect_tcp_socket(const std::string& host, uint16_t port,
                                             std::chrono::milliseconds timeout, std::string* where);

class SocketTransport final : public Transport {
 public:
  // Connects within `timeout` (name lookup included).
  [[nodiscard]] static Result<std::unique_ptr<SocketTransport>> connect_tcp(
      const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
      std::chrono::milliseconds send_timeout = std::chrono::seconds(10));
  [[nodiscard]] static Result<std::unique_ptr<SocketTransport>> connect_unix(
      const std::string& path, std::chrono::milliseconds timeout,
      std::chrono::milliseconds send_timeout = std::chrono::seconds(10));

  ~SocketTransport() override;
  SocketTransport(const SocketTransport&) = delete;
  SocketTransport& operator=(const SocketTransport&) = delete;

  [[nodiscard]] Result<void> send_all(std::span<const uint8_t> bytes) override;
  [[nodiscard]] Result<ReadResult> read_some(std::span<uint8_t> buffer,
                                             std::chrono::milliseconds timeout) override;
  void shutdown() override;
  void shutdown_send() override;
  std::string describe() const override { return description_; }

 private:
  SocketTransport(int fd, std::string description)
      : fd_(fd), description_(std::move(description)) {}

  const int fd_;
  const std::string description_;
  Mutex send_mu_;  // held for the whole of one send_all()
  std::atomic<bool> send_closed_{false};
};

}  // namespace pixpath::xpra
