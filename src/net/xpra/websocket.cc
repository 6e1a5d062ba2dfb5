#include "pixpath/net/xpra/websocket.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

namespace pixpath::xpra::ws {
namespace {

Error ws_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "websocket", std::move(reason));
}

std::string base64(const uint8_t* data, size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, int(n));
  out.resize(size_t(len));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Does a comma-separated header value hold `token` (case-insensitive)?
bool has_token(std::string_view value, std::string_view token) {
  const std::string want = lower(token);
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    if (lower(trim(value.substr(start, comma - start))) == want) return true;
    start = comma + 1;
  }
  return false;
}

std::string printable(std::string_view s, size_t max = 80) {
  std::string out;
  for (char c : s.substr(0, max)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return out;
}

}  // namespace

std::string accept_key(std::string_view key) {
  std::string joined = std::string(key) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  uint8_t digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(joined.data()), joined.size(), digest);
  return base64(digest, sizeof digest);
}

std::string random_key() {
  uint8_t raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) {
    for (auto& b : raw) b = uint8_t(std::rand());  // NOLINT: only a nonce, not a secret
  }
  return base64(raw, sizeof raw);
}

std::string make_upgrade_request(std::string_view host_header, std::string_view path,
                                 std::string_view key) {
  return fmt::format(
      "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: {}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: binary\r\n"
      "User-Agent: pixpath\r\n\r\n",
      path.empty() ? "/" : path, host_header, key);
}

Result<size_t> check_upgrade_response(std::string_view bytes, std::string_view key,
                                      size_t max_header) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > max_header)
      return ws_error(ErrorCode::Protocol,
                      fmt::format("no end of the HTTP upgrade response within {} bytes", max_header));
    if (!bytes.empty() && !std::string_view("HTTP/").starts_with(bytes.substr(0, 5)))
      return ws_error(ErrorCode::Protocol,
                      fmt::format("the server did not answer with HTTP: '{}'", printable(bytes)));
    return size_t{0};
  }
  const std::string_view header = bytes.substr(0, end);
  size_t eol = header.find("\r\n");
  const std::string_view status = header.substr(0, eol);
  if (!status.starts_with("HTTP/1.1 101") && !status.starts_with("HTTP/1.0 101"))
    return ws_error(ErrorCode::Protocol,
                    fmt::format("the server refused the websocket upgrade: '{}'", printable(status)));
  bool upgrade = false, connection = false, accepted = false;
  std::string protocol;
  const std::string want = accept_key(key);
  while (eol != std::string_view::npos) {
    const size_t start = eol + 2;
    eol = header.find("\r\n", start);
    std::string_view line = header.substr(start, eol == std::string_view::npos ? std::string_view::npos
                                                                                : eol - start);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = lower(trim(line.substr(0, colon)));
    const std::string_view value = trim(line.substr(colon + 1));
    if (name == "upgrade") upgrade = lower(value) == "websocket";
    if (name == "connection") connection = has_token(value, "upgrade");
    if (name == "sec-websocket-accept") accepted = value == want;
    if (name == "sec-websocket-protocol") protocol = std::string(value);
  }
  if (!upgrade || !connection)
    return ws_error(ErrorCode::Protocol, "the upgrade response lacks 'Upgrade: websocket' or "
                                         "'Connection: Upgrade'");
  if (!accepted)
    return ws_error(ErrorCode::Protocol,
                    "the upgrade response has a wrong or no Sec-WebSocket-Accept (not a websocket "
                    "server, or a proxy that mangles the handshake)");
  if (!protocol.empty() && protocol != "binary")
    return ws_error(ErrorCode::Protocol,
                    fmt::format("the server chose the subprotocol '{}', not 'binary'", printable(protocol)));
  return end + 4;
}

void append_frame(std::vector<uint8_t>& out, uint8_t opcode, std::span<const uint8_t> payload,
                  std::array<uint8_t, 4> mask) {
  const uint64_t n = payload.size();
  out.push_back(uint8_t(0x80 | (opcode & 0x0f)));
  if (n < 126) {
    out.push_back(uint8_t(0x80 | n));
  } else if (n <= 0xffff) {
    out.push_back(0x80 | 126);
    out.push_back(uint8_t(n >> 8));
    out.push_back(uint8_t(n));
  } else {
    out.push_back(0x80 | 127);
    for (int i = 7; i >= 0; --i) out.push_back(uint8_t(n >> (8 * i)));
  }
  out.insert(out.end(), mask.begin(), mask.end());
  const size_t base = out.size();
  out.resize(base + payload.size());
  uint8_t* dst = out.data() + base;
  for (size_t i = 0; i < payload.size(); ++i) dst[i] = payload[i] ^ mask[i & 3];
}

Result<void> FrameParser::feed(std::span<const uint8_t> in, std::vector<uint8_t>& data,
                               std::vector<Control>& controls) {
  if (failed_) return ws_error(ErrorCode::Protocol, "the websocket stream already failed");
  auto fail = [&](ErrorCode code, std::string why) -> Error {
    failed_ = true;
    return ws_error(code, std::move(why));
  };
  size_t pos = 0;
  while (pos < in.size() && !closed_) {
    if (!in_payload_) {
      // The header: 2 bytes, then 0, 2 or 8 bytes of length, and a mask key when masked.
      header_[header_have_++] = in[pos++];
      if (header_have_ < 2) continue;
      const uint8_t b0 = header_[0], b1 = header_[1];
      const size_t len_bytes = (b1 & 0x7f) == 126 ? 2 : (b1 & 0x7f) == 127 ? 8 : 0;
      if (b1 & 0x80) return fail(ErrorCode::Protocol, "the server sent a masked frame (RFC 6455 5.1)");
      if (header_have_ < 2 + len_bytes) continue;
      if (b0 & 0x70)
        return fail(ErrorCode::Protocol, "a frame with reserved bits set (no extension was agreed)");
      fin_ = (b0 & 0x80) != 0;
      opcode_ = b0 & 0x0f;
      uint64_t len = b1 & 0x7f;
      if (len_bytes) {
        len = 0;
        for (size_t i = 0; i < len_bytes; ++i) len = (len << 8) | header_[2 + i];
        if (len >> 63) return fail(ErrorCode::Protocol, "a frame length with its top bit set");
      }
      header_have_ = 0;
      const bool control = opcode_ & 0x08;
      switch (opcode_) {
        case kText:
          return fail(ErrorCode::Protocol,
                      "the server sent a text frame (xpra sends its byte stream in binary frames)");
        case kBinary:
          if (in_message_)
            return fail(ErrorCode::Protocol, "a new binary frame inside a fragmented message");
          in_message_ = !fin_;
          break;
        case kContinuation:
          if (!in_message_)
            return fail(ErrorCode::Protocol, "a continuation frame with no fragmented message started");
          in_message_ = !fin_;
          break;
        case kClose:
        case kPing:
        case kPong:
          if (!fin_) return fail(ErrorCode::Protocol, "a fragmented control frame");
          if (len > 125) return fail(ErrorCode::Protocol, "a control frame over 125 bytes");
          break;
        default:
          return fail(ErrorCode::Protocol, fmt::format("a frame with the unknown opcode {}", opcode_));
      }
      if (!control && len > limits_.max_frame)
        return fail(ErrorCode::LimitExceeded,
                    fmt::format("a frame of {} bytes, over the limit of {}", len, limits_.max_frame));
      payload_left_ = len;
      in_payload_ = true;
      control_.clear();
    }
    const size_t take = size_t(std::min<uint64_t>(payload_left_, in.size() - pos));
    if (opcode_ & 0x08) {
      control_.insert(control_.end(), in.begin() + long(pos), in.begin() + long(pos + take));
    } else {
      data.insert(data.end(), in.begin() + long(pos), in.begin() + long(pos + take));
    }
    pos += take;
    payload_left_ -= take;
    if (payload_left_ == 0) {
      in_payload_ = false;
      if (opcode_ & 0x08) {
        controls.push_back(Control{opcode_, control_});
        if (opcode_ == kClose) closed_ = true;
      }
    }
  }
  return {};
}

}  // namespace pixpath::xpra::ws

namespace pixpath::xpra {

Result<std::unique_ptr<WebSocketTransport>> WebSocketTransport::upgrade(
    std::unique_ptr<Transport> inner, const std::string& host_header, const std::string& path,
    std::chrono::milliseconds timeout, ws::FrameParser::Limits limits) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string key = ws::random_key();
  const std::string request = ws::make_upgrade_request(host_header, path, key);
  auto fail = [&](ErrorCode code, std::string why) -> Error {
    inner->shutdown();
    return Error(code, "xpra", "websocket", fmt::format("{}: {}", inner->describe(), why));
  };
  if (auto sent = inner->send_all({reinterpret_cast<const uint8_t*>(request.data()), request.size()});
      !sent.ok())
    return fail(ErrorCode::Unavailable, "sending the upgrade request: " + sent.error().reason());
  std::string response;
  std::vector<uint8_t> buf(4096);
  size_t header_len = 0;
  while (header_len == 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return fail(ErrorCode::Unavailable,
                  fmt::format("no websocket upgrade response within {} ms", timeout.count()));
    auto got = inner->read_some(buf, std::min(left, std::chrono::milliseconds(100)));
    if (!got.ok()) return fail(ErrorCode::Unavailable, got.error().reason());
    if (got->eof)
      return fail(ErrorCode::Unavailable,
                  response.empty() ? "the server closed the connection before answering the upgrade"
                                   : "the server closed the connection in the upgrade response");
    response.append(reinterpret_cast<const char*>(buf.data()), got->bytes);
    auto checked = ws::check_upgrade_response(response, key);
    if (!checked.ok()) return fail(checked.error().code(), checked.error().reason());
    header_len = *checked;
  }
  std::unique_ptr<WebSocketTransport> t(new WebSocketTransport(std::move(inner), limits));
  // Frames the server sent right behind its header.
  if (header_len < response.size()) {
    PIXPATH_CHECK(t->ingest({reinterpret_cast<const uint8_t*>(response.data()) + header_len,
                             response.size() - header_len}));
  }
  return t;
}

Result<void> WebSocketTransport::send_frame(uint8_t opcode, std::span<const uint8_t> payload) {
  std::array<uint8_t, 4> mask{};
  if (RAND_bytes(mask.data(), 4) != 1) mask = {0x5a, 0xa5, 0x3c, 0xc3};
  std::vector<uint8_t> frame;
  frame.reserve(payload.size() + 14);
  ws::append_frame(frame, opcode, payload, mask);
  MutexLock lock(send_mu_);
  return inner_->send_all(frame);
}

Result<void> WebSocketTransport::send_all(std::span<const uint8_t> bytes) {
  // Large writes go as several frames of at most 1 MiB: the server reads a stream.
  constexpr size_t kMaxFrame = size_t{1} << 20;
  std::vector<uint8_t> frame;
  MutexLock lock(send_mu_);
  for (size_t done = 0; done < bytes.size();) {
    const size_t n = std::min(kMaxFrame, bytes.size() - done);
    std::array<uint8_t, 4> mask{};
    if (RAND_bytes(mask.data(), 4) != 1) mask = {0x5a, 0xa5, 0x3c, 0xc3};
    frame.clear();
    ws::append_frame(frame, ws::kBinary, bytes.subspan(done, n), mask);
    PIXPATH_CHECK(inner_->send_all(frame));
    done += n;
  }
  return {};
}

Result<Transport::ReadResult> WebSocketTransport::read_some(std::span<uint8_t> buffer,
                                                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pending_pos_ < pending_.size()) {
      const size_t n = std::min(buffer.size(), pending_.size() - pending_pos_);
      std::memcpy(buffer.data(), pending_.data() + pending_pos_, n);
      pending_pos_ += n;
      if (pending_pos_ == pending_.size()) {
        pending_.clear();
        pending_pos_ = 0;
      }
      return ReadResult{n, false};
    }
    if (eof_) return ReadResult{0, true};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return ReadResult{};
    scratch_.resize(64 * 1024);
    PIXPATH_TRY(auto got, inner_->read_some(scratch_, left));
    if (got.eof) {
      eof_ = true;
      continue;
    }
    if (got.bytes == 0) return ReadResult{};
    PIXPATH_CHECK(ingest({scratch_.data(), got.bytes}));
  }
}

Result<void> WebSocketTransport::ingest(std::span<const uint8_t> bytes) {
  // xpra 3.1 writes its plain-text refusal of a hello ("disconnect: failed to parse bencode
  // packet") straight onto the socket, unframed. Printable ASCII where the first frame should
  // be is never a frame header (its reserved bits are set): hand at most 1 KiB of it to the
  // session as it is, which reports it (and retries with bencode), then end the stream.
  if (!frames_started_ && raw_left_ == 0 && !bytes.empty() && bytes[0] >= 0x20 && bytes[0] < 0x7f)
    raw_left_ = 1024;
  if (raw_left_ > 0) {
    const size_t n = std::min(raw_left_, bytes.size());
    pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + long(n));
    raw_left_ -= n;
    if (raw_left_ == 0 || n < bytes.size()) eof_ = true;
    return {};
  }
  frames_started_ = true;
  std::vector<ws::FrameParser::Control> controls;
  PIXPATH_CHECK(parser_.feed(bytes, pending_, controls));
  for (const auto& c : controls) {
    if (c.opcode == ws::kPing) PIXPATH_CHECK(send_frame(ws::kPong, c.payload));
    if (c.opcode == ws::kClose) {
      eof_ = true;
      // Answer the close (best effort: the server may already have gone).
      (void)send_frame(ws::kClose, std::span<const uint8_t>(c.payload).first(std::min<size_t>(2, c.payload.size())));
    }
  }
  return {};
}

void WebSocketTransport::shutdown() { inner_->shutdown(); }

void WebSocketTransport::shutdown_send() {
  const uint8_t normal[2] = {0x03, 0xe8};  // 1000: normal closure
  (void)send_frame(ws::kClose, normal);
  inner_->shutdown_send();
}

}  // namespace pixpath::xpra
