// Transport: the byte stream one xpra session runs over (a TCP or Unix socket today; TLS,
// websocket and ssh transports implement the same interface). The session frames packets on
// top of it and never looks below.
//
// Threading: send_all() may be called from any thread (an implementation serialises whole
// writes, so chunks of different packets never interleave). read_some() belongs to one reader
// thread. shutdown() may be called from any thread and wakes a blocked reader.
// Lifetime: destroy a transport only after the reader thread has stopped.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "pixpath/core/result.h"

namespace pixpath::xpra {

class Transport {
 public:
  virtual ~Transport() = default;

  // Writes all of `bytes` or fails (Io; Cancelled after shutdown()). A failed write leaves
  // the stream unusable.
  [[nodiscard]] virtual Result<void> send_all(std::span<const uint8_t> bytes) = 0;

  struct ReadResult {
    size_t bytes = 0;   // 0 with eof false: nothing arrived within the timeout
    bool eof = false;   // the peer closed its side
  };
  // Waits up to `timeout` for data and reads what is there into `buffer`.
  [[nodiscard]] virtual Result<ReadResult> read_some(std::span<uint8_t> buffer,
                                                     std::chrono::milliseconds timeout) = 0;

  // Shuts the stream down both ways; later sends fail, a blocked reader sees eof.
  virtual void shutdown() = 0;
  // Shuts down only the sending side (tells the peer we are done writing).
  virtual void shutdown_send() = 0;

  // "tcp 127.0.0.1:10000", "unix /run/user/0/xpra/host-100", for messages.
  virtual std::string describe() const = 0;
};

}  // namespace pixpath::xpra
