// The websocket pieces (RFC 6455) as xpra's servers use them: the handshake (accept key,
// "binary" subprotocol), the client's masked frames, the server's frames parsed in any pieces,
// and every violation refused with a clear error: text frames, masked server frames, reserved
// bits, broken fragmentation, oversized or over-long control frames, a bad or missing
// handshake answer, a silent server (timeout). WebSocketTransport runs against a scripted peer.
#include "pixpath/net/xpra/websocket.h"

#include <gtest/gtest.h>

#include "net/xpra/testing/raw_peer.h"
#include "pixpath/net/xpra/socket_transport.h"

namespace pixpath::xpra {
namespace {

using namespace std::chrono_literals;
using testing::RawPeer;
using ws::FrameParser;

std::vector<uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }

// A server frame (unmasked).
std::vector<uint8_t> server_frame(uint8_t opcode, std::string_view payload, bool fin = true,
                                  uint8_t extra_bits = 0) {
  std::vector<uint8_t> f;
  f.push_back(uint8_t((fin ? 0x80 : 0) | extra_bits | opcode));
  const size_t n = payload.size();
  if (n < 126) {
    f.push_back(uint8_t(n));
  } else if (n <= 0xffff) {
    f.push_back(126);
    f.push_back(uint8_t(n >> 8));
    f.push_back(uint8_t(n));
  } else {
    f.push_back(127);
    for (int i = 7; i >= 0; --i) f.push_back(uint8_t(uint64_t(n) >> (8 * i)));
  }
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(WebSocket, AcceptKeyMatchesTheRfcExample) {
  EXPECT_EQ(ws::accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(ws::random_key().size(), 24u);
  EXPECT_NE(ws::random_key(), ws::random_key());
  const std::string req = ws::make_upgrade_request("127.0.0.1:80", "/", "KEY");
  EXPECT_TRUE(req.starts_with("GET / HTTP/1.1\r\n"));
  EXPECT_NE(req.find("Sec-WebSocket-Protocol: binary\r\n"), std::string::npos);
  EXPECT_NE(req.find("Host: 127.0.0.1:80\r\n"), std::string::npos);
  EXPECT_TRUE(req.ends_with("\r\n\r\n"));
}

TEST(WebSocket, UpgradeResponseIsChecked) {
  const std::string key = "dGhlIHNhbXBsZSBub25jZQ==";
  const std::string good =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: binary\r\n\r\n";
  auto ok = ws::check_upgrade_response(good + "rest", key);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(*ok, good.size());
  // Incomplete: read more.
  EXPECT_EQ(*ws::check_upgrade_response(good.substr(0, 40), key), 0u);
  struct Bad {
    std::string response, says;
  };
  for (const Bad& b : {
           Bad{"HTTP/1.1 403 Forbidden\r\n\r\n", "refused the websocket upgrade"},
           Bad{"SSH-2.0-OpenSSH\r\n", "did not answer with HTTP"},
           Bad{"HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: wrong\r\n\r\n",
               "Sec-WebSocket-Accept"},
           Bad{"HTTP/1.1 101 OK\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
               "Upgrade: websocket"},
           Bad{"HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n\r\n",
               "'chat'"},
           Bad{"HTTP/1.1 101 " + std::string(20000, 'x'), "within 16384 bytes"},
       }) {
    auto r = ws::check_upgrade_response(b.response, key);
    ASSERT_FALSE(r.ok()) << b.response.substr(0, 60);
    EXPECT_EQ(r.error().code(), ErrorCode::Protocol);
    EXPECT_NE(r.error().reason().find(b.says), std::string::npos) << r.error().message();
  }
}

TEST(WebSocket, ClientFramesAreMasked) {
  std::vector<uint8_t> out;
  const std::string payload(300, 'A');
  ws::append_frame(out, ws::kBinary, bytes(payload), {1, 2, 3, 4});
  ASSERT_EQ(out.size(), 2u + 2 + 4 + 300);
  EXPECT_EQ(out[0], 0x82);
  EXPECT_EQ(out[1], 0x80 | 126);
  EXPECT_EQ((out[2] << 8) | out[3], 300);
  for (size_t i = 0; i < payload.size(); ++i) ASSERT_EQ(out[8 + i] ^ (i % 4 + 1), 'A');
  out.clear();
  ws::append_frame(out, ws::kBinary, std::vector<uint8_t>(70000, 7), {9, 9, 9, 9});
  EXPECT_EQ(out[1], 0x80 | 127);
  EXPECT_EQ(out.size(), 2u + 8 + 4 + 70000);
}

TEST(WebSocket, ParserStreamsPayloadsFedInAnyPieces) {
  const std::string big(70000, 'z');
  auto stream = cat({server_frame(ws::kBinary, "hello "), server_frame(ws::kPing, "p1"),
                     server_frame(ws::kBinary, "wor", false), server_frame(ws::kContinuation, "ld", false),
                     server_frame(ws::kPong, ""), server_frame(ws::kContinuation, "!", true),
                     server_frame(ws::kBinary, big), server_frame(ws::kClose, "\x03\xe8"),
                     server_frame(ws::kText, "ignored after close")});
  for (size_t piece : {size_t(1), size_t(3), size_t(1000), stream.size()}) {
    FrameParser p;
    std::vector<uint8_t> data;
    std::vector<FrameParser::Control> controls;
    for (size_t i = 0; i < stream.size(); i += piece) {
      auto r = p.feed(std::span(stream).subspan(i, std::min(piece, stream.size() - i)), data, controls);
      ASSERT_TRUE(r.ok()) << r.error().message();
    }
    EXPECT_EQ(std::string(data.begin(), data.end()), "hello world!" + big) << piece;
    ASSERT_EQ(controls.size(), 3u);
    EXPECT_EQ(controls[0].opcode, ws::kPing);
    EXPECT_EQ(std::string(controls[0].payload.begin(), controls[0].payload.end()), "p1");
    EXPECT_EQ(controls[1].opcode, ws::kPong);
    EXPECT_EQ(controls[2].opcode, ws::kClose);
    EXPECT_TRUE(p.closed());
  }
}

TEST(WebSocket, ParserRefusesWhatXpraNeverSends) {
  struct Case {
    std::vector<uint8_t> stream;
    std::string says;
    ErrorCode code = ErrorCode::Protocol;
  };
  std::vector<uint8_t> masked = server_frame(ws::kBinary, "ab");
  masked[1] |= 0x80;
  std::vector<uint8_t> huge_len = {0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1};
  std::vector<Case> cases = {
      {server_frame(ws::kText, "{\"hello\": 1}"), "text frame"},
      {masked, "masked frame"},
      {server_frame(ws::kBinary, "x", true, 0x40), "reserved bits"},
      {server_frame(ws::kContinuation, "x"), "continuation frame with no fragmented message"},
      {cat({server_frame(ws::kBinary, "a", false), server_frame(ws::kBinary, "b")}),
       "new binary frame inside a fragmented message"},
      {server_frame(ws::kPing, "x", false), "fragmented control frame"},
      {server_frame(ws::kPing, std::string(126, 'p')), "control frame over 125 bytes"},
      {server_frame(3, "x"), "unknown opcode 3"},
      {huge_len, "top bit set"},
      {server_frame(ws::kBinary, std::string(2000, 'o')), "over the limit of 1024",
       ErrorCode::LimitExceeded},
  };
  for (const auto& c : cases) {
    FrameParser p(FrameParser::Limits{.max_frame = 1024});
    std::vector<uint8_t> data;
    std::vector<FrameParser::Control> controls;
    auto r = p.feed(c.stream, data, controls);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.error().code(), c.code) << r.error().message();
    EXPECT_NE(r.error().reason().find(c.says), std::string::npos) << r.error().message();
    EXPECT_FALSE(p.feed(server_frame(ws::kBinary, "more"), data, controls).ok()) << "stays failed";
  }
}

// A websocket server script: answers the upgrade (or not), then sends `after`, then echoes
// binary payloads back (masked client frames unmasked), answering nothing else.
std::function<void(int)> ws_peer(std::string answer, std::vector<uint8_t> after = {}, bool echo = true) {
  return [answer, after, echo](int fd) {
    const std::string req = RawPeer::read_until(fd, "\r\n\r\n");
    std::string out = answer;
    const size_t k = req.find("Sec-WebSocket-Key: ");
    if (k != std::string::npos && out.find("ACCEPT") != std::string::npos) {
      const std::string key = req.substr(k + 19, req.find("\r\n", k) - k - 19);
      out.replace(out.find("ACCEPT"), 6, ws::accept_key(key));
    }
    RawPeer::send_text(fd, out);
    if (!after.empty()) RawPeer::send_text(fd, std::string(after.begin(), after.end()));
    if (!echo) {
      RawPeer::read_until(fd, "never");
      return;
    }
    // Echo: parse masked client frames (small, one per read in this test).
    std::string buf;
    char chunk[65536];
    while (true) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5000) != 1) return;
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return;
      buf.append(chunk, size_t(n));
      while (buf.size() >= 2) {
        const uint8_t b0 = uint8_t(buf[0]), b1 = uint8_t(buf[1]);
        size_t len = b1 & 0x7f, hdr = 2;
        if (len == 126) {
          if (buf.size() < 4) break;
          len = (size_t(uint8_t(buf[2])) << 8) | uint8_t(buf[3]);
          hdr = 4;
        } else if (len == 127) {
          if (buf.size() < 10) break;
          len = 0;
          for (int i = 0; i < 8; ++i) len = (len << 8) | uint8_t(buf[2 + i]);
          hdr = 10;
        }
        if (!(b1 & 0x80) || buf.size() < hdr + 4 + len) break;
        std::string payload = buf.substr(hdr + 4, len);
        for (size_t i = 0; i < len; ++i) payload[i] ^= buf[hdr + i % 4];
        buf.erase(0, hdr + 4 + len);
        if ((b0 & 0x0f) == ws::kBinary) {
          auto f = server_frame(ws::kBinary, payload);
          RawPeer::send_text(fd, std::string(f.begin(), f.end()));
        }
        if ((b0 & 0x0f) == ws::kPong) RawPeer::send_text(fd, "\x82\x04pong");
        if ((b0 & 0x0f) == ws::kClose) return;
      }
    }
  };
}

const std::string kGoodAnswer =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Accept: ACCEPT\r\nSec-WebSocket-Protocol: binary\r\n\r\n";

Result<std::unique_ptr<WebSocketTransport>> connect_ws(uint16_t port,
                                                       std::chrono::milliseconds timeout = 5s) {
  PIXPATH_TRY(auto tcp, SocketTransport::connect_tcp("127.0.0.1", port, 5s));
  return WebSocketTransport::upgrade(std::move(tcp), "127.0.0.1:" + std::to_string(port), "/", timeout);
}

std::string read_text(Transport& t, size_t want, bool* eof = nullptr, Error* error = nullptr) {
  std::string got;
  std::vector<uint8_t> buf(65536);
  for (int i = 0; i < 200 && got.size() < want; ++i) {
    auto r = t.read_some(buf, 100ms);
    if (!r.ok()) {
      if (error) *error = r.error();
      break;
    }
    if (r->eof) {
      if (eof) *eof = true;
      break;
    }
    got.append(reinterpret_cast<const char*>(buf.data()), r->bytes);
  }
  return got;
}

TEST(WebSocketTransport, CarriesTheByteStreamBothWays) {
  // A ping right behind the handshake: answered with a pong (the peer then sends "pong").
  RawPeer peer(ws_peer(kGoodAnswer, server_frame(ws::kPing, "hi")));
  auto t = connect_ws(peer.port());
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(read_text(**t, 4), "pong");
  std::string msg(200000, 'q');
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = char(i * 7);
  ASSERT_TRUE((*t)->send_all(bytes(msg)).ok());
  const std::string echoed = read_text(**t, msg.size());
  EXPECT_EQ(echoed.size(), msg.size());
  EXPECT_TRUE(echoed == msg) << "the echo differs";
  EXPECT_NE((*t)->describe().find("websocket over tcp 127.0.0.1:"), std::string::npos);
}

TEST(WebSocketTransport, Xpra31sUnframedRefusalReachesTheSession) {
  RawPeer peer(ws_peer(kGoodAnswer, bytes("disconnect: failed to parse bencode packet\n"), false));
  auto t = connect_ws(peer.port());
  ASSERT_TRUE(t.ok()) << t.error().message();
  bool eof = false;
  EXPECT_EQ(read_text(**t, 1000, &eof), "disconnect: failed to parse bencode packet\n");
}

TEST(WebSocketTransport, HostilePeersGiveClearErrors) {
  {
    RawPeer peer(ws_peer("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"));
    auto t = connect_ws(peer.port());
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("400 Bad Request"), std::string::npos) << t.error().message();
  }
  {
    // A server that never answers the upgrade: the timeout.
    RawPeer peer([](int fd) { RawPeer::read_until(fd, "never"); });
    const auto start = std::chrono::steady_clock::now();
    auto t = connect_ws(peer.port(), 400ms);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("within 400 ms"), std::string::npos) << t.error().message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  }
  {
    // A server that closes mid-header.
    RawPeer peer([](int fd) {
      RawPeer::read_until(fd, "\r\n\r\n");
      RawPeer::send_text(fd, "HTTP/1.1 101 Swi");
      ::shutdown(fd, SHUT_RDWR);
    });
    auto t = connect_ws(peer.port());
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().reason().find("closed the connection"), std::string::npos) << t.error().message();
  }
  {
    // A text frame after a good handshake: the read fails, saying so.
    RawPeer peer(ws_peer(kGoodAnswer, server_frame(ws::kText, "hello"), false));
    auto t = connect_ws(peer.port());
    // The frame may come with the handshake's answer (the upgrade fails) or after it.
    Error e = t.ok() ? Error(ErrorCode::Internal, "", "", "none") : t.error();
    if (t.ok()) read_text(**t, 10, nullptr, &e);
    EXPECT_NE(e.reason().find("text frame"), std::string::npos) << e.message();
  }
  {
    // A close frame: end of stream.
    RawPeer peer(ws_peer(kGoodAnswer, cat({server_frame(ws::kBinary, "ab"), server_frame(ws::kClose, "\x03\xe8")}),
                         false));
    auto t = connect_ws(peer.port());
    ASSERT_TRUE(t.ok()) << t.error().message();
    bool eof = false;
    EXPECT_EQ(read_text(**t, 10, &eof), "ab");
    EXPECT_TRUE(eof);
  }
}

}  // namespace
}  // namespace pixpath::xpra
