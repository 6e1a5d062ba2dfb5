// Websocket (RFC 6455) client side, as xpra's servers speak it (ws:// and wss://, endpoint.h):
// an HTTP/1.1 upgrade asking for the "binary" subprotocol (xpra 3.1 and 6.x refuse a client
// that does not), then binary frames carrying the plain xpra byte stream (packet chunks are
// not aligned with frames). The client masks its frames; the server's are unmasked.
//
// The pieces are pure and bounded, for tests and fuzzing (fuzz/fuzz_websocket.cc):
// - make_upgrade_request() / check_upgrade_response(): the handshake;
// - FrameParser: the server's frames, fed in any pieces, payloads streamed out without
//   holding a whole frame (a data frame may be large, a control frame is at most 125 bytes);
//   text frames, masked or reserved-bit frames, unknown opcodes, broken fragmentation and
//   frames over FrameParser::Limits::max_frame are protocol errors;
// - append_frame(): one masked client frame.
// WebSocketTransport runs them over another Transport (TCP or TLS). One exception to framing:
// xpra 3.1 writes its plain-text refusal of a hello unframed; printable text where the first
// frame should be (never a valid frame header) is handed to the session as it is (1 KiB at
// most, then the end of the stream), so that it can report it and retry with bencode.
//
// Threading: the pure functions and types are plain values (FrameParser: one thread).
// WebSocketTransport: as Transport (transport.h); the reader answers pings through the
// serialised send path.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/transport.h"

namespace pixpath::xpra::ws {

enum Opcode : uint8_t { kContinuation = 0, kText = 1, kBinary = 2, kClose = 8, kPing = 9, kPong = 10 };

// The value of Sec-WebSocket-Accept for a Sec-WebSocket-Key.
std::string accept_key(std::string_view key);
// A fresh random Sec-WebSocket-Key (16 random bytes, base64).
std::string random_key();

// "GET PATH HTTP/1.1" with Host, Upgrade, Connection, Sec-WebSocket-Key/-Version/-Protocol.
std::string make_upgrade_request(std::string_view host_header, std::string_view path,
                                 std::string_view key);

// The server's answer so far. Ok(0): the header is not complete yet (read more); Ok(n): the
// header is the first n bytes and accepts the upgrade; an error (Protocol) otherwise: not 101,
// missing Upgrade/Connection, wrong Sec-WebSocket-Accept, another subprotocol, or no end of
// header within `max_header` bytes.
[[nodiscard]] Result<size_t> check_upgrade_response(std::string_view bytes, std::string_view key,
                                                    size_t max_header = 16384);

// Appends one client frame (FIN, masked with `mask`) carrying `payload`.
void append_frame(std::vector<uint8_t>& out, uint8_t opcode, std::span<const uint8_t> payload,
                  std::array<uint8_t, 4> mask);

class FrameParser {
 public:
  struct Limits {
    uint64_t max_frame = uint64_t{256} << 20;  // one frame's payload
  };
  struct Control {
    uint8_t opcode = 0;            // kPing, kPong or kClose
    std::vector<uint8_t> payload;  // <= 125 bytes
  };
  FrameParser() = default;
  explicit FrameParser(Limits limits) : limits_(limits) {}

  // Parses `in`: payload bytes of binary messages are appended to `data`, complete control
  // frames to `controls`. After an error the parser stays failed.
  [[nodiscard]] Result<void> feed(std::span<const uint8_t> in, std::vector<uint8_t>& data,
                                  std::vector<Control>& controls);
  // True when a close frame has been parsed (later bytes are ignored).
  bool closed() const { return closed_; }

 private:
  Limits limits_;
  std::array<uint8_t, 14> header_{};
  size_t header_have_ = 0;
  uint64_t payload_left_ = 0;
  bool in_payload_ = false;
  uint8_t opcode_ = 0;
  bool fin_ = false;
  bool in_message_ = false;  // a binary message started without FIN: continuations may follow
  std::vector<uint8_t> control_;
  bool failed_ = false;
  bool closed_ = false;
};

}  // namespace pixpath::xpra::ws

namespace pixpath::xpra {

class WebSocketTransport final : public Transport {
 public:
  // Runs the upgrade over `inner` (a connected TCP or TLS transport) within `timeout`.
  // `host_header`: "HOST:PORT" as in the URL. Errors: Unavailable / Protocol, subject "xpra",
  // stage "websocket", saying what the server answered.
  [[nodiscard]] static Result<std::unique_ptr<WebSocketTransport>> upgrade(
      std::unique_ptr<Transport> inner, const std::string& host_header, const std::string& path,
      std::chrono::milliseconds timeout, ws::FrameParser::Limits limits = {});

  [[nodiscard]] Result<void> send_all(std::span<const uint8_t> bytes) override;
  [[nodiscard]] Result<ReadResult> read_some(std::span<uint8_t> buffer,
                                             std::chrono::milliseconds timeout) override;
  void shutdown() override;
  void shutdown_send() override;
  std::string describe() const override { return "websocket over " + inner_->describe(); }

 private:
  WebSocketTransport(std::unique_ptr<Transport> inner, ws::FrameParser::Limits limits)
      : inner_(std::move(inner)), parser_(limits) {}
  Result<void> send_frame(uint8_t opcode, std::span<const uint8_t> payload);
  // Parses what the server sent (frames; or 3.1's unframed plain-text refusal).
  Result<void> ingest(std::span<const uint8_t> bytes);

  std::unique_ptr<Transport> inner_;
  Mutex send_mu_;  // one frame (or one send_all) at a time
  // Reader thread only:
  ws::FrameParser parser_;
  std::vector<uint8_t> pending_;  // payload bytes parsed but not yet handed out
  size_t pending_pos_ = 0;
  std::vector<uint8_t> scratch_;
  bool eof_ = false;
  bool frames_started_ = false;
  size_t raw_left_ = 0;  // > 0: passing an unframed plain-text reply through
};

}  // namespace pixpath::xpra
