// TcpConnection: one connected POSIX TCP socket to an xpra server, named by a URL
// "tcp://HOST:PORT/" (HOST a name or an IPv4/IPv6 literal, "[::1]" style for IPv6).
//
// Threading: send_all() may be called from any thread (a mutex serializes whole writes, so
// chunks of different packets never interleave). read_some() belongs to one reader thread.
// shutdown() may be called from any thread and wakes a blocked reader.
// Lifetime: the socket is closed by the destructor; destroy the connection only after the
// reader thread has stopped.
#pragma once

#include <chrono>
#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "pixpath/core/result.h"

namespace pixpath::xpra {

struct TcpEndpoint {
  std::string host;
  uint16_t port = 0;
};

// Parses "tcp://HOST:PORT/" (the trailing slash is optional). Other schemes are Unsupported.
[[nodiscard]] Result<TcpEndpoint> parse_tcp_url(std::string_view url);

class TcpConnection {
 public:
  // Connects within `timeout` (name lookup included). Sets TCP_NODELAY and a send timeout of
  // `send_timeout` so a wedged peer cannot block a sender forever.
  [[nodiscard]] static Result<std::unique_ptr<TcpConnection>> connect(
      const TcpEndpoint& endpoint, std::chrono::milliseconds timeout,
      std::chrono::milliseconds send_timeout = std::chrono::seconds(10));

  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  // Writes all of `bytes` or fails (Io; Cancelled after shutdown()).
  [[nodiscard]] Result<void> send_all(std::span<const uint8_t> bytes);

  struct ReadResult {
    size_t bytes = 0;   // 0 with eof false: nothing arrived within the timeout
    bool eof = false;   // the peer closed its side
  };
  // Waits up to `timeout` for data and reads what is there into `buffer`.
  [[nodiscard]] Result<ReadResult> read_some(std::span<uint8_t> buffer,
                                             std::chrono::milliseconds timeout);

  // Shuts the socket down both ways; later sends fail, a blocked reader sees eof.
  void shutdown();
  // Shuts down only the sending side (tells the peer we are done writing).
  void shutdown_send();

  const TcpEndpoint& endpoint() const { return endpoint_; }

 private:
  TcpConnection(int fd, TcpEndpoint endpoint) : fd_(fd), endpoint_(std::move(endpoint)) {}

  const int fd_;
  TcpEndpoint endpoint_;
  std::mutex send_mu_;  // held for the whole of one send_all()
  std::atomic<bool> send_closed_{false};
};

}  // namespace pixpath::xpra
