// A malicious xpra server: a scripted peer on loopback (FakePeer) sends what a hostile or
// broken server could, to a client wired exactly as `pixpath attach` (ClientPipeline: Session
// -> PaintEngine -> CpuBacking, acks back to the server). Every case must end in a refusal
// with a clear log line — for draws, a -1 acknowledgement — with memory inside the configured
// limits, the client going on or disconnecting with a reason; never a crash or a hang (every
// wait below is bounded).
#include <gtest/gtest.h>
#include <lz4.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "net/xpra/testing/fake_peer.h"
#include "pixpath/client/client_pipeline.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/framing.h"
#include "pixpath/net/xpra/rencode.h"
#include "pixpath/paint/cpu_backing.h"

namespace pixpath::client {
namespace {

using namespace std::chrono_literals;
using xpra::Value;
using xpra::testing::FakePeer;

double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

Value dict() { return Value(Value::Dict{}); }

Value draw(int64_t wid, int64_t x, int64_t y, int64_t w, int64_t h, std::string_view coding,
           Value data, int64_t seq, int64_t rowstride, Value options = dict()) {
  return Value::list({"draw", wid, x, y, w, h, coding, std::move(data), seq, rowstride,
                      std::move(options)});
}

std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& in) {
  uLongf n = compressBound(uLong(in.size()));
  std::vector<uint8_t> out(n);
  EXPECT_EQ(compress2(out.data(), &n, in.data(), uLong(in.size()), 9), Z_OK);
  out.resize(n);
  return out;
}

// python-lz4 block format: u32 little-endian size, then the block.
std::vector<uint8_t> lz4_compress(const std::vector<uint8_t>& in, uint32_t claimed) {
  std::vector<uint8_t> out(4 + size_t(LZ4_compressBound(int(in.size()))));
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                                     reinterpret_cast<char*>(out.data() + 4), int(in.size()),
                                     int(out.size() - 4));
  out.resize(4 + size_t(n));
  for (int i = 0; i < 4; ++i) out[size_t(i)] = uint8_t(claimed >> (8 * i));
  return out;
}

SharedBytes bytes(const std::vector<uint8_t>& v) { return SharedBytes::copy_of(v); }

// One client (ClientPipeline on a CpuBacking) against one FakePeer; the test thread is the
// UI thread.
struct Client {
  FakePeer peer;
  paint::CpuBacking backing;
  std::unique_ptr<ClientPipeline> pipeline;
  Mutex mu;
  std::vector<std::string> log PIXPATH_GUARDED_BY(mu);

  explicit Client(ClientLimits limits = {}, int peer_receive_buffer = 0,
                  bool run_hello = true)
      : peer(peer_receive_buffer) {
    ClientPipelineOptions o;
    o.session.url = peer.url();
    o.session.encodings = {"rgb24", "rgb32", "png", "jpeg", "jpega", "webp", "scroll"};
    o.session.log = [this](std::string_view l) {
      MutexLock lock(mu);
      log.emplace_back(l);
    };
    o.session.disconnect_timeout = 500ms;
    o.limits = limits;
    o.engine.decode_threads = 2;
    auto p = ClientPipeline::start(backing, std::move(o));
    EXPECT_TRUE(p.ok()) << p.error().message();
    if (p.ok()) pipeline = std::move(p).value();
    EXPECT_TRUE(peer.wait_packet("hello").has_value());
    if (run_hello) hello();
  }
  ~Client() {
    if (pipeline) pipeline->stop("test done", 500ms);
  }
  void hello() {
    Value caps = dict();
    caps.set("version", "3.1.3");
    caps.set("encodings", Value::string_list({"rgb24", "png", "jpeg"}));
    peer.send_packet(Value::list({"hello", caps}));
    auto r = pipeline->wait_until_ready(5s);
    ASSERT_TRUE(r.ok()) << r.error().message();
  }
  // The hello and encodings packets as xpra 6.x sends them: rencodeplus, lz4 announced.
  void hello6() {
    Value caps = dict();
    caps.set("version", "6.5");
    caps.set("encoders", Value::string_list({"rencodeplus"}));
    caps.set("compressors", Value::string_list({"lz4", "brotli", "none"}));
    peer.send(rframe(Value::list({"hello", caps})));
    auto r = pipeline->wait_until_ready(5s);
    ASSERT_TRUE(r.ok()) << r.error().message();
    Value enc = dict();
    enc.set("core", Value::string_list({"rgb24", "png", "webp", "jpeg"}));
    Value e = dict();
    e.set("encodings", enc);
    peer.send(rframe(Value::list({"encodings", e})));
  }
  // One rencodeplus packet (flag 0x10), compressed as asked (level 0: not at all).
  static std::vector<uint8_t> rframe(const Value& packet,
                                     xpra::PacketCompressor c = xpra::PacketCompressor::None,
                                     int level = 0) {
    xpra::PacketFormat f;
    f.encoder = xpra::PacketEncoder::Rencodeplus;
    f.compressor = c;
    f.level = level;
    f.min_compress_size = 0;
    auto w = xpra::frame_packet(packet, f);
    EXPECT_TRUE(w.ok()) << w.error().message();
    return w.ok() ? *w : std::vector<uint8_t>{};
  }
  // The session ended on a protocol failure of `code` whose message holds `text`, told the
  // server why ("protocol error: ...") and closed its side of the connection.
  void expect_clean_refusal(ErrorCode code, std::string_view text) {
    auto end = wait_end();
    ASSERT_TRUE(end && end->error) << "the session did not end: " << log_text();
    EXPECT_EQ(end->error->code(), code) << end->message();
    EXPECT_NE(end->message().find(text), std::string::npos) << end->message();
    auto d = peer.wait_packet("disconnect");
    ASSERT_TRUE(d) << "no disconnect packet";
    EXPECT_NE(d->as_list()[1].as_view().find("protocol error"), std::string::npos)
        << d->debug_string(200);
    EXPECT_TRUE(peer.wait_client_eof()) << "the client kept the connection open";
  }
  void window(int64_t wid, int w, int h) {
    peer.send_packet(Value::list({"new-window", wid, 0, 0, w, h, dict(), dict()}));
    ASSERT_TRUE(pipeline->run_until([&] { return backing.window_size(wid).has_value(); }, 5s))
        << "window " << wid << " never appeared";
  }
  bool logged(std::string_view text) {
    MutexLock lock(mu);
    for (const auto& l : log)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  std::string log_text() {
    MutexLock lock(mu);
    std::string s;
    for (const auto& l : log) s += "  " + l + "\n";
    return s;
  }
  // Runs the UI loop until the peer received the ack for `seq`; returns it (decode_time,
  // message) or nullopt after 10 s.
  std::optional<std::pair<int64_t, std::string>> ack(int64_t seq) {
    std::optional<std::pair<int64_t, std::string>> found;
    pipeline->run_until(
        [&] {
          for (size_t i = 0;; ++i) {
            auto a = peer.wait_packet("damage-sequence", i, 0ms);
            if (!a) return false;
            if (a->as_list()[1].as_int() == seq) {
              found = {a->as_list()[5].as_int(), std::string(a->as_list()[6].as_view())};
              return true;
            }
          }
        },
        10s);
    return found;
  }
  std::optional<xpra::SessionEnd> wait_end() {
    pipeline->run_until([&] { return pipeline->closed(); }, 10s);
    return pipeline->end();
  }
  // Every draw the engine was given was acknowledged exactly once.
  void expect_every_draw_acked_once() {
    pipeline->run_until([&] { return pipeline->stats().outstanding == 0; }, 10s);
    auto s = pipeline->stats();
    EXPECT_EQ(s.acks, s.draws_submitted);
    EXPECT_EQ(s.acks_unmatched, 0);
    EXPECT_EQ(s.outstanding, 0);
  }
};

std::vector<uint8_t> pixels(size_t n, uint8_t v = 0x40) { return std::vector<uint8_t>(n, v); }

// --- decompression bombs -----------------------------------------------------------------

TEST(HostileServer, ZlibPacketBombEndsTheSessionWithoutInflating) {
  ClientLimits l;
  l.frame.max_decompressed_size = 1 << 20;
  Client c(l);
  // 256 MiB of zeros inside one bencoded string: ~250 KB compressed.
  std::vector<uint8_t> body = {'l', '4', ':', 'p', 'i', 'n', 'g'};
  std::string len = std::to_string(256u << 20) + ":";
  body.insert(body.end(), len.begin(), len.end());
  body.resize(body.size() + (256u << 20), 0);
  body.push_back('e');
  auto z = zlib_compress(body);
  std::vector<uint8_t>().swap(body);
  const double rss0 = rss_mib();
  std::vector<uint8_t> wire;
  xpra::append_chunk(wire, xpra::kProtoBencode, 6, 0, z);
  c.peer.send(wire);
  auto end = c.wait_end();
  ASSERT_TRUE(end && end->error) << c.log_text();
  EXPECT_EQ(end->error->code(), ErrorCode::LimitExceeded) << end->message();
  EXPECT_NE(end->message().find("inflates to more than"), std::string::npos) << end->message();
  auto d = c.peer.wait_packet("disconnect");
  ASSERT_TRUE(d);
  EXPECT_NE(d->as_list()[1].as_view().find("protocol error"), std::string::npos);
  EXPECT_LT(rss_mib() - rss0, 64.0);
}

TEST(HostileServer, Lz4PacketBombIsRefusedBeforeAllocating) {
  ClientLimits l;
  l.frame.max_decompressed_size = 1 << 20;
  Client c(l);
  auto block = lz4_compress(pixels(4096, 0), 0xFFFFFFF0u);  // claims 4 GiB
  std::vector<uint8_t> wire;
  xpra::append_chunk(wire, xpra::kProtoBencode, xpra::kLevelLz4 | 1, 0, block);
  c.peer.send(wire);
  auto end = c.wait_end();
  ASSERT_TRUE(end && end->error);
  EXPECT_EQ(end->error->code(), ErrorCode::LimitExceeded) << end->message();
  EXPECT_NE(end->message().find("lz4 data claims"), std::string::npos) << end->message();
}

TEST(HostileServer, RawChunkBombIsRefused) {
  ClientLimits l;
  l.frame.max_decompressed_size = 1 << 20;
  Client c(l);
  // A raw chunk (index 7: the draw's data) that inflates past the limit.
  auto z = zlib_compress(pixels(8u << 20, 0));
  std::vector<uint8_t> wire;
  xpra::append_chunk(wire, xpra::kProtoBencode, 1, 7, z);
  c.peer.send(wire);
  auto end = c.wait_end();
  ASSERT_TRUE(end && end->error);
  EXPECT_EQ(end->error->code(), ErrorCode::LimitExceeded) << end->message();
}

TEST(HostileServer, DrawDataZlibBombIsAckedMinusOne) {
  ClientLimits l;
  l.decode.max_decompressed_bytes = 4 << 20;
  Client c(l);
  c.window(1, 800, 600);
  // 4000 x 4000 rgb32 (64 MB) from a few KB of zlib: over the 4 MiB draw limit.
  Value o = dict();
  o.set("rgb_format", "BGRX");
  o.set("zlib", 9);
  c.peer.send_packet(draw(1, 0, 0, 4000, 4000, "rgb32", bytes(zlib_compress(pixels(1 << 20))),
                          1, 16000, o));
  auto a = c.ack(1);
  ASSERT_TRUE(a) << c.log_text();
  EXPECT_EQ(a->first, -1);
  EXPECT_NE(a->second.find("decompression limit"), std::string::npos) << a->second;
  // Small picture, data that inflates far past rowstride * h: the rest is never inflated.
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(zlib_compress(pixels(64 << 20))), 2,
                          64, o));
  auto b = c.ack(2);
  ASSERT_TRUE(b);
  EXPECT_GT(b->first, 0) << b->second;  // painted; the excess is only a warning
  c.expect_every_draw_acked_once();
  EXPECT_FALSE(c.pipeline->closed());
}

TEST(HostileServer, DrawDataLz4BombIsAckedMinusOne) {
  ClientLimits l;
  l.decode.max_decompressed_bytes = 4 << 20;
  Client c(l);
  c.window(1, 800, 600);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  o.set("lz4", 1);
  c.peer.send_packet(draw(1, 0, 0, 4000, 4000, "rgb32", bytes(lz4_compress(pixels(4096), 64000000)),
                          1, 16000, o));
  auto a = c.ack(1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, -1);
  EXPECT_NE(a->second.find("decompression limit"), std::string::npos) << a->second;
  // Right size, lying prefix and a block that stops short: -1, not garbage.
  c.peer.send_packet(draw(1, 0, 0, 64, 64, "rgb32", bytes(lz4_compress(pixels(100), 64 * 64 * 4)),
                          2, 256, o));
  auto b = c.ack(2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->first, -1) << b->second;
  c.expect_every_draw_acked_once();
}

// --- geometry -----------------------------------------------------------------------------

TEST(HostileServer, DrawLargerThanTheWindowIsClipped) {
  Client c;
  c.window(1, 100, 100);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  c.peer.send_packet(draw(1, 50, 50, 200, 200, "rgb32", bytes(pixels(200 * 200 * 4)), 1, 800, o));
  auto a = c.ack(1);
  ASSERT_TRUE(a);
  EXPECT_GT(a->first, 0) << a->second;
  c.peer.send_packet(draw(1, -5000, -5000, 64, 64, "rgb32", bytes(pixels(64 * 64 * 4)), 2, 256, o));
  auto b = c.ack(2);
  ASSERT_TRUE(b);
  EXPECT_GT(b->first, 0) << b->second;  // wholly outside: nothing painted, nothing broken
  c.expect_every_draw_acked_once();
}

TEST(HostileServer, DrawLargerThanTheLimitsIsAckedMinusOne) {
  ClientLimits l;
  l.decode.max_width = 1024;
  l.decode.max_height = 1024;
  l.decode.max_pixels = 1024 * 1024;
  Client c(l);
  c.window(1, 100, 100);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  o.set("zlib", 1);
  c.peer.send_packet(draw(1, 0, 0, 2000, 10, "rgb32", bytes(zlib_compress(pixels(80000))), 1,
                          8000, o));
  auto a = c.ack(1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, -1);
  EXPECT_NE(a->second.find("2000"), std::string::npos) << a->second;
  // The parser's own bound: xpra sizes are < 32768.
  c.peer.send_packet(draw(1, 0, 0, 40000, 1, "rgb32", bytes(pixels(16)), 2, 160000, o));
  auto b = c.ack(2);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->first, -1);
  EXPECT_NE(b->second.find("'w'"), std::string::npos) << b->second;
  c.expect_every_draw_acked_once();
}

TEST(HostileServer, NegativeAndOverflowingGeometry) {
  Client c;
  c.window(1, 100, 100);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  const int64_t big = int64_t{1} << 31;
  // x + w overflowing 32 bits, negative sizes, w = 0, huge rowstride, huge sequence numbers.
  c.peer.send_packet(draw(1, big - 1, 0, 16, 16, "rgb32", bytes(pixels(1024)), 1, 64, o));
  c.peer.send_packet(draw(1, 0, 0, -16, 16, "rgb32", bytes(pixels(1024)), 2, 64, o));
  c.peer.send_packet(draw(1, 0, 0, 0, 16, "rgb32", bytes(pixels(1024)), 3, 64, o));
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(1024)), 4, big, o));
  c.peer.send_packet(draw(1, 0, -big, 16, 16, "rgb32", bytes(pixels(1024)), 5, 64, o));
  c.peer.send_packet(draw(1, 0, 0, 16, 0, "png", bytes(pixels(10)), 6, 0));
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(1024)),
                          std::numeric_limits<int64_t>::max(), 64, o));
  for (int64_t seq : {1, 2, 3, 4, 5, 6}) {
    auto a = c.ack(seq);
    ASSERT_TRUE(a) << "no ack for " << seq << "\n" << c.log_text();
    EXPECT_EQ(a->first, -1) << seq << ": " << a->second;
  }
  auto last = c.ack(std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(last);
  EXPECT_GT(last->first, 0);
  EXPECT_TRUE(c.logged("outside [")) << c.log_text();
  // Windows with impossible geometry are ignored, with a line saying why.
  c.peer.send_packet(Value::list({"new-window", 2, 0, 0, -1, 10, dict(), dict()}));
  c.peer.send_packet(Value::list({"new-window", 3, big, 0, 10, 10, dict(), dict()}));
  c.peer.send_packet(Value::list({"window-move-resize", 1, 0, 0, 100000, 10}));
  c.peer.send_packet(Value::list({"ping", 1, 2}));
  ASSERT_TRUE(c.peer.wait_packet("ping_echo"));
  c.pipeline->run_for(100ms);
  EXPECT_EQ(c.backing.windows().size(), 1u);
  EXPECT_EQ(c.backing.window_size(1)->w, 100);
  EXPECT_TRUE(c.logged("window ignored")) << c.log_text();
  c.expect_every_draw_acked_once();
  EXPECT_FALSE(c.pipeline->closed());
}

TEST(HostileServer, RowstridesThatLie) {
  Client c;
  c.window(1, 100, 100);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  // Shorter than a row; data shorter than rowstride * h; zlib data shorter than it says.
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(16 * 64)), 1, 63, o));
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(16 * 64)), 2, 128, o));
  Value oz = o;
  oz.set("zlib", 3);
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(zlib_compress(pixels(16 * 64))), 3, 128, oz));
  for (int64_t seq : {1, 2, 3}) {
    auto a = c.ack(seq);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->first, -1) << seq;
    EXPECT_FALSE(a->second.empty());
  }
  c.expect_every_draw_acked_once();
}

// --- delta buckets ------------------------------------------------------------------------

TEST(HostileServer, DeltasAgainstMissingOrMismatchedBuckets) {
  Client c;
  c.window(1, 100, 100);
  auto rgb = [](int64_t w, int64_t h, Value extra) {
    Value o = dict();
    o.set("rgb_format", "BGRX");
    for (auto& [k, v] : extra.as_dict()) o.set(k.as_view(), v);
    (void)w;
    (void)h;
    return o;
  };
  auto opt = [](std::initializer_list<std::pair<const char*, Value>> kv) {
    Value d = dict();
    for (auto& [k, v] : kv) d.set(k, v);
    return d;
  };
  // delta against an empty bucket
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 1, 32,
                          rgb(8, 8, opt({{"delta", 100}, {"bucket", 0}}))));
  // store 8x8 in bucket 1, then a delta with the wrong sequence, the wrong size, a bucket
  // that does not exist, and the wrong rgb_format
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 2, 32,
                          rgb(8, 8, opt({{"store", 2}, {"bucket", 1}}))));
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 3, 32,
                          rgb(8, 8, opt({{"delta", 99}, {"bucket", 1}}))));
  c.peer.send_packet(draw(1, 0, 0, 4, 4, "rgb32", bytes(pixels(64)), 4, 16,
                          rgb(4, 4, opt({{"delta", 2}, {"bucket", 1}}))));
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 5, 32,
                          rgb(8, 8, opt({{"delta", 2}, {"bucket", 200}}))));
  Value rgbx = opt({{"delta", 2}, {"bucket", 1}, {"rgb_format", "RGBX"}});
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 6, 32, rgbx));
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 7, 32,
                          rgb(8, 8, opt({{"delta", 2}, {"bucket", -1}}))));
  // and the good one still works afterwards
  c.peer.send_packet(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 8, 32,
                          rgb(8, 8, opt({{"delta", 2}, {"bucket", 1}}))));
  for (int64_t seq : {1, 3, 4, 5, 6, 7}) {
    auto a = c.ack(seq);
    ASSERT_TRUE(a) << seq;
    EXPECT_EQ(a->first, -1) << seq;
    EXPECT_FALSE(a->second.empty());
  }
  for (int64_t seq : {2, 8}) {
    auto a = c.ack(seq);
    ASSERT_TRUE(a);
    EXPECT_GT(a->first, 0) << seq << ": " << a->second;
  }
  c.expect_every_draw_acked_once();
}

// --- jpega --------------------------------------------------------------------------------

TEST(HostileServer, JpegaWithABadAlphaOffset) {
  Client c;
  c.window(1, 100, 100);
  Picture rgba = Picture::allocate(PixelFormat::RGBA, 16, 16).value();
  {
    auto v = rgba.write().value();
    for (int y = 0; y < 16; ++y)
      for (auto& b : v.planes[0].row(y)) b = uint8_t(y * 13);
  }
  auto enc = codecs::CodecRegistry::builtin().encoder("jpega")->encode(*rgba.read(), {});
  ASSERT_TRUE(enc.ok()) << enc.error().message();
  const int64_t good = *enc->options.alpha_offset;
  const int64_t size = int64_t(enc->data.size());
  int64_t seq = 0;
  for (int64_t off : {int64_t{-1}, int64_t{0}, int64_t{2}, good - 1, good + 1, size, size + 100,
                      int64_t{1} << 40}) {
    Value o = dict();
    o.set("alpha-offset", off);
    c.peer.send_packet(draw(1, 0, 0, 16, 16, "jpega", bytes(enc->data), ++seq, 0, o));
    auto a = c.ack(seq);
    ASSERT_TRUE(a) << off;
    EXPECT_EQ(a->first, -1) << "alpha-offset " << off << ": " << a->second;
  }
  Value o = dict();
  o.set("alpha-offset", good);
  c.peer.send_packet(draw(1, 0, 0, 16, 16, "jpega", bytes(enc->data), ++seq, 0, o));
  auto a = c.ack(seq);
  ASSERT_TRUE(a);
  EXPECT_GT(a->first, 0) << a->second;
  c.expect_every_draw_acked_once();
}

// --- floods -------------------------------------------------------------------------------

TEST(HostileServer, WindowFloodIsCappedAtMaxWindows) {
  ClientLimits l;
  l.max_windows = 8;
  Client c(l);
  const auto before = counters();
  for (int64_t wid = 1; wid <= 2000; ++wid) {
    c.peer.send_packet(Value::list({"new-window", wid, 0, 0, 1000, 1000, dict(), dict()}));
  }
  c.peer.send_packet(Value::list({"ping", 1, 2}));
  ASSERT_TRUE(c.peer.wait_packet("ping_echo", 0, 20s));
  c.pipeline->run_until([&] { return c.backing.windows().size() == 8; }, 5s);
  EXPECT_EQ(c.backing.windows().size(), 8u);
  EXPECT_EQ(c.peer.count("map-window"), 8u);
  EXPECT_EQ(c.pipeline->stats().windows_refused, 1992u);
  EXPECT_TRUE(c.logged("the limit of 8 windows is reached")) << c.log_text();
  // 8 framebuffers of 4 MB, not 2000.
  EXPECT_LT(counters().live_bytes() - before.live_bytes(), int64_t{40} << 20);
  // A draw for a refused window is skipped (0) by the session itself.
  c.peer.send_packet(draw(1500, 0, 0, 4, 4, "rgb32", bytes(pixels(64)), 77, 16));
  auto a = c.ack(77);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, 0);
  EXPECT_NE(a->second.find("refused"), std::string::npos);
  // Losing a window makes room for one more.
  c.peer.send_packet(Value::list({"lost-window", 3}));
  c.peer.send_packet(Value::list({"new-window", 5000, 0, 0, 10, 10, dict(), dict()}));
  EXPECT_TRUE(c.pipeline->run_until([&] { return c.backing.window_size(5000).has_value(); }, 5s));
}

TEST(HostileServer, WindowAreaIsCapped) {
  ClientLimits l;
  l.max_window_pixels = 1000 * 1000;
  Client c(l);
  c.window(1, 800, 800);
  c.peer.send_packet(Value::list({"new-window", 2, 0, 0, 800, 800, dict(), dict()}));
  c.peer.send_packet(Value::list({"window-move-resize", 1, 0, 0, 2000, 2000}));
  c.peer.send_packet(Value::list({"ping", 1, 2}));
  ASSERT_TRUE(c.peer.wait_packet("ping_echo"));
  c.pipeline->run_for(100ms);
  EXPECT_FALSE(c.backing.window_size(2).has_value());
  EXPECT_EQ(c.backing.window_size(1)->w, 800);
  EXPECT_TRUE(c.logged("limit is 1000000")) << c.log_text();
}

TEST(HostileServer, PacketFloodIsBoundedByTheQueueLimit) {
  ClientLimits l;
  l.max_queued_draws = 16;
  Client c(l);
  c.window(1, 64, 64);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  o.set("zlib", 1);
  const auto data = bytes(zlib_compress(pixels(64 * 64 * 4)));
  // The UI thread does not run while the flood arrives: the queue fills up.
  constexpr int kDraws = 3000;
  std::vector<uint8_t> wire;
  for (int i = 1; i <= kDraws; ++i) {
    auto f = xpra::frame_packet(draw(1, 0, 0, 64, 64, "rgb32", data, i, 256, o));
    wire.insert(wire.end(), f.begin(), f.end());
  }
  ASSERT_TRUE(c.peer.send(wire));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (c.pipeline->stats().session_draws < uint64_t(kDraws) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  auto mid = c.pipeline->stats();
  EXPECT_EQ(mid.session_draws, uint64_t(kDraws));
  EXPECT_LE(mid.engine.queued_draws, 16);
  EXPECT_LE(mid.engine.max_queued_draws_seen, 16);
  EXPECT_GE(mid.engine.refused_queue_full, kDraws - 16 - 2);
  EXPECT_TRUE(c.logged("paint engine queue full")) << c.log_text();
  // Then everything drains and every draw has exactly one ack at the server.
  ASSERT_TRUE(c.pipeline->run_until(
      [&] { return c.peer.count("damage-sequence") == size_t(kDraws); }, 20s))
      << c.peer.count("damage-sequence");
  c.expect_every_draw_acked_once();
  auto s = c.pipeline->stats();
  EXPECT_EQ(s.acks_error, s.engine.refused_queue_full);
  EXPECT_FALSE(c.pipeline->closed());
}

// --- the stream itself --------------------------------------------------------------------

TEST(HostileServer, PacketsSplitAtEveryByte) {
  Client c(ClientLimits{}, 0, /*run_hello=*/false);
  Value caps = dict();
  caps.set("version", "3.1.3");
  std::vector<uint8_t> wire = xpra::frame_packet(Value::list({"hello", caps}));
  auto add = [&](const Value& p) {
    auto f = xpra::frame_packet(p);
    wire.insert(wire.end(), f.begin(), f.end());
  };
  add(Value::list({"new-window", 1, 0, 0, 8, 8, dict(), dict()}));
  Value o = dict();
  o.set("rgb_format", "BGRX");
  add(draw(1, 0, 0, 8, 8, "rgb32", bytes(pixels(256)), 1, 32, o));
  // a draw whose data travels in a raw chunk (index 7) before its main packet
  std::vector<uint8_t> raw = pixels(256, 0x11);
  xpra::append_chunk(wire, xpra::kProtoBencode, 0, 7, raw);
  add(draw(1, 0, 0, 8, 8, "rgb32", "", 2, 32, o));
  // an lz4-compressed packet
  auto ping = xpra::bencode_encode(Value::list({"ping", 9, 9}));
  xpra::append_chunk(wire, xpra::kProtoBencode, xpra::kLevelLz4 | 1, 0,
                     lz4_compress(ping, uint32_t(ping.size())));
  std::thread sender([&] { c.peer.send_bytewise(wire, 100us); });
  auto a = c.ack(2);
  sender.join();
  ASSERT_TRUE(a) << c.log_text();
  EXPECT_GT(a->first, 0) << a->second;
  EXPECT_GT(c.ack(1)->first, 0);
  // The ping comes after draw 2 on the wire: counted once its echo arrived, not at ack 2.
  EXPECT_TRUE(c.peer.wait_packet("ping_echo"));
  EXPECT_GE(c.pipeline->session().packets_received(), 5u);
  EXPECT_FALSE(c.pipeline->closed());
}

TEST(HostileServer, ServerThatStopsReadingEndsTheSessionWithinTheSendTimeout) {
  ClientLimits l;
  l.send_timeout = 500ms;
  Client c(l, /*peer_receive_buffer=*/4096);
  c.peer.pause_reading(true);
  // Every ping makes the client send a ping_echo; nobody reads them.
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> pings;
  for (int i = 0; i < 2000; ++i) {
    auto f = xpra::frame_packet(Value::list({"ping", int64_t(i), int64_t(i)}));
    pings.insert(pings.end(), f.begin(), f.end());
  }
  while (!c.pipeline->closed() && std::chrono::steady_clock::now() - start < 30s) {
    c.peer.send(pings, 200ms);  // the client stops reading too while its send is stuck
    c.pipeline->run_for(20ms);
  }
  auto end = c.pipeline->end();
  ASSERT_TRUE(end) << "the client kept waiting on a server that does not read ("
                   << c.pipeline->session().pings_answered() << " pings answered)";
  ASSERT_TRUE(end->error);
  EXPECT_NE(end->message().find("did not read"), std::string::npos) << end->message();
  EXPECT_TRUE(c.logged("send failed")) << c.log_text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  c.peer.pause_reading(false);
}

TEST(HostileServer, ServerThatStopsSendingMidPacket) {
  ClientLimits l;
  l.stall_timeout = 500ms;
  Client c(l);
  c.window(1, 16, 16);
  auto f = xpra::frame_packet(draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(1024)), 1, 64));
  f.resize(f.size() / 2);
  c.peer.send(f);
  auto end = c.wait_end();
  ASSERT_TRUE(end && end->error) << "no end within the wait";
  EXPECT_NE(end->message().find("stopped sending in the middle of a packet"), std::string::npos)
      << end->message();
  auto d = c.peer.wait_packet("disconnect");
  ASSERT_TRUE(d);
  EXPECT_NE(d->as_list()[1].as_view().find("timeout"), std::string::npos);
}

// 4 Mi tiny values in a 12 MB packet (inside every size limit) would decode into ~40 bytes
// each plus vector growth: ~300 MB. The bencode item limit refuses the packet instead.
TEST(HostileServer, ManyTinyValuesAreCapped) {
  ClientLimits l;
  if (const char* items = std::getenv("PIXPATH_HOSTILE_MAX_ITEMS")) {  // for measuring
    l.frame.max_items = std::strtoull(items, nullptr, 10);
  }
  Client c(l);
  std::vector<uint8_t> body = {'l', '4', ':', 'p', 'i', 'n', 'g'};
  for (int i = 0; i < (4 << 20); ++i) body.insert(body.end(), {'i', '0', 'e'});
  body.push_back('e');
  std::vector<uint8_t> wire;
  xpra::append_chunk(wire, xpra::kProtoBencode, 0, 0, body);
  std::vector<uint8_t>().swap(body);
  const double rss0 = rss_mib();
  c.peer.send(wire);
  auto end = c.wait_end();
  std::printf("rss growth %.1f MiB\n", rss_mib() - rss0);
  ASSERT_TRUE(end && end->error) << c.log_text();
  EXPECT_EQ(end->error->code(), ErrorCode::LimitExceeded) << end->message();
  EXPECT_NE(end->message().find("values in one packet"), std::string::npos) << end->message();
  EXPECT_LT(rss_mib() - rss0, 100.0);
}

TEST(HostileServer, FloodOfInventedPacketTypes) {
  Client c;
  std::vector<uint8_t> wire;
  for (int i = 0; i < 20000; ++i) {
    auto f = xpra::frame_packet(Value::list({"invented-" + std::to_string(i), i}));
    wire.insert(wire.end(), f.begin(), f.end());
  }
  ASSERT_TRUE(c.peer.send(wire));
  c.peer.send_packet(Value::list({"ping", 1, 2}));
  ASSERT_TRUE(c.peer.wait_packet("ping_echo", 0, 20s));
  size_t lines = 0;
  {
    MutexLock lock(c.mu);
    for (const auto& l : c.log) lines += l.find("invented-") != std::string::npos;
  }
  EXPECT_EQ(lines, 64u);
  EXPECT_TRUE(c.logged("further unknown packet types are ignored")) << c.log_text();
  EXPECT_FALSE(c.pipeline->closed());
}

TEST(HostileServer, HugeChunkHeaderAndGarbage) {
  {
    Client c;
    std::vector<uint8_t> h(8);
    xpra::write_chunk_header({0, 0, 0, 0xFFFFFFFFu}, h.data());
    c.peer.send(h);
    auto end = c.wait_end();
    ASSERT_TRUE(end && end->error);
    EXPECT_EQ(end->error->code(), ErrorCode::LimitExceeded);
  }
  {
    Client c;
    c.peer.send({'P', 0, 0, 0, 0, 0, 0, 3, 'i', '1', 'e'});  // a packet that is not a list
    auto end = c.wait_end();
    ASSERT_TRUE(end && end->error);
    EXPECT_EQ(end->error->code(), ErrorCode::Protocol) << end->message();
  }
  {
    Client c;
    std::string deep(100000, 'l');  // nesting bomb
    std::vector<uint8_t> wire;
    xpra::append_chunk(wire, 0, 0, 0, std::vector<uint8_t>(deep.begin(), deep.end()));
    c.peer.send(wire);
    auto end = c.wait_end();
    ASSERT_TRUE(end && end->error);
    EXPECT_EQ(end->error->code(), ErrorCode::LimitExceeded) << end->message();
  }
}

// A server that ignores our goodbye and keeps drawing: the stop sequence paints and acks
// meanwhile, gives up on the server after the disconnect timeout (500 ms here), and every draw
// still ends in exactly one ack, sent or counted as made after close.
TEST(HostileServer, ServerThatIgnoresTheGoodbyeAndKeepsDrawing) {
  Client c;
  c.window(1, 64, 64);
  c.peer.close_on_disconnect(false);
  Value o = dict();
  o.set("rgb_format", "BGRX");
  std::atomic<bool> done{false};
  std::atomic<int64_t> sent{0};
  std::thread flood([&] {
    for (int64_t seq = 1; !done.load(); ++seq) {
      if (!c.peer.send(xpra::frame_packet(
                           draw(1, 0, 0, 64, 64, "rgb32", bytes(pixels(64 * 64 * 4)), seq, 256, o)),
                       200ms))
        break;
      sent++;
      std::this_thread::sleep_for(1ms);
    }
  });
  for (int i = 0; i < 10000 && sent.load() < 50; ++i) std::this_thread::sleep_for(1ms);
  if (sent.load() < 50) {
    done = true;
    flood.join();
    FAIL() << "the flood did not start";
  }
  const auto start = std::chrono::steady_clock::now();
  const bool idle = c.pipeline->stop("test done", 500ms);
  const auto took = std::chrono::steady_clock::now() - start;
  done = true;
  flood.join();
  EXPECT_TRUE(idle);
  EXPECT_LT(took, 5s) << "stop waited on a server that never closes";
  auto s = c.pipeline->stats();
  EXPECT_GT(s.acks_sent, 0);
  EXPECT_EQ(s.acks, s.draws_submitted);
  EXPECT_EQ(s.acks_unmatched, 0);
  EXPECT_EQ(s.outstanding, 0);
  EXPECT_EQ(s.acks_sent + s.acks_after_close + s.acks_send_failed, s.acks);
  EXPECT_EQ(s.acks_send_failed, 0);
  EXPECT_TRUE(c.peer.wait_packet("disconnect"));
}

TEST(HostileServer, NoStorageLeftBehind) {
  const auto before = counters();
  {
    Client c;
    c.window(1, 64, 64);
    Value o = dict();
    o.set("rgb_format", "BGRX");
    o.set("store", 1);
    c.peer.send_packet(draw(1, 0, 0, 64, 64, "rgb32", bytes(pixels(64 * 64 * 4)), 1, 256, o));
    ASSERT_TRUE(c.ack(1));
  }
  const auto after = counters();
  EXPECT_EQ(after.live_storages(), before.live_storages());
  EXPECT_EQ(after.live_bytes(), before.live_bytes());
}

// --- xpra 6.x: rencodeplus, brotli, a server that lies about itself ------------------------

std::vector<uint8_t> rencode_chunk(std::vector<uint8_t> body) {
  std::vector<uint8_t> wire;
  xpra::append_chunk(wire, xpra::kProtoRencodeplus | xpra::kProtoFlush, 0, 0, body);
  return wire;
}

// rencodeplus "ping" as a fixed-form string (0x80 + length).
const std::vector<uint8_t> kPing = {0x84, 'p', 'i', 'n', 'g'};

TEST(HostileServer, TruncatedRencodeplusPackets) {
  {
    // A terminated list (59) whose terminator (127) never comes: the chunk ends first.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> b = {59};
    b.insert(b.end(), kPing.begin(), kPing.end());
    b.insert(b.end(), {1, 2});
    c.peer.send(rencode_chunk(b));
    c.expect_clean_refusal(ErrorCode::Truncated, "rencode decode");
  }
  {
    // A fixed-form list of 3 (0xC3) with 2 items, and an int8 cut after 3 of its 8 bytes.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> b = {0xC3};
    b.insert(b.end(), kPing.begin(), kPing.end());
    b.insert(b.end(), {65, 1, 2, 3});
    c.peer.send(rencode_chunk(b));
    c.expect_clean_refusal(ErrorCode::Truncated, "rencode decode");
  }
  {
    // A byte string that claims 999999999 bytes with 3 left.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> b = {0xC2};
    b.insert(b.end(), kPing.begin(), kPing.end());
    for (char ch : std::string("999999999/abc")) b.push_back(uint8_t(ch));
    c.peer.send(rencode_chunk(b));
    c.expect_clean_refusal(ErrorCode::Truncated, "rencode decode");
  }
}

TEST(HostileServer, RencodeplusValuesOfTheWrongType) {
  {
    // A packet that is a dict, not a list.
    Client c({}, 0, false);
    c.hello6();
    c.peer.send(rencode_chunk({102 + 1, 0x81, 'a', 1}));
    c.expect_clean_refusal(ErrorCode::Protocol, "not a non-empty list");
  }
  {
    // A hello whose capabilities are a list.
    Client c({}, 0, false);
    c.peer.send(Client::rframe(Value::list({"hello", Value::list({1, 2, 3})})));
    auto end = c.wait_end();
    ASSERT_TRUE(end && end->error) << c.log_text();
    EXPECT_NE(end->message().find("capabilities"), std::string::npos) << end->message();
    EXPECT_TRUE(c.peer.wait_client_eof());
  }
  {
    // Invalid UTF-8 in a string (a lone continuation byte).
    Client c({}, 0, false);
    c.hello6();
    c.peer.send(rencode_chunk({0xC1, 0x82, 'p', 0x80}));
    c.expect_clean_refusal(ErrorCode::CorruptData, "UTF-8");
  }
  {
    // Draws whose fields have the wrong types (a string width, a float x, a list for the data,
    // a width beyond 64 bits as a text integer): each acked -1 with the reason; the session
    // goes on.
    Client c({}, 0, false);
    c.hello6();
    c.window(1, 64, 64);
    Value o = dict();
    o.set("rgb_format", "BGRX");
    c.peer.send(Client::rframe(draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(1024)), 1, 64, o)));
    auto bad_w = draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(1024)), 2, 64, o);
    bad_w.as_list()[4] = Value("wide");
    c.peer.send(Client::rframe(bad_w));
    auto bad_x = draw(1, 0, 0, 16, 16, "rgb32", bytes(pixels(1024)), 3, 64, o);
    bad_x.as_list()[2] = Value::from_double(1.5);
    c.peer.send(Client::rframe(bad_x));
    auto bad_data = draw(1, 0, 0, 16, 16, "rgb32", Value::list({1, 2}), 4, 64, o);
    c.peer.send(Client::rframe(bad_data));
    // ["draw", 1, 0, 0, <2^70 as text>, 16, ...]: the text integer form.
    std::vector<uint8_t> b = {0xC0 + 11};
    for (const char* item : {"draw"}) {
      b.push_back(uint8_t(0x80 + std::strlen(item)));
      b.insert(b.end(), item, item + std::strlen(item));
    }
    b.insert(b.end(), {1, 0, 0, 61});
    for (char ch : std::string("1180591620717411303424")) b.push_back(uint8_t(ch));
    b.push_back(127);
    b.push_back(16);
    b.insert(b.end(), {0x85, 'r', 'g', 'b', '3', '2'});
    for (char ch : std::string("4/abcd")) b.push_back(uint8_t(ch));
    b.insert(b.end(), {5, 62, 64, 102});  // sequence 5, rowstride 64, options {}
    c.peer.send(rencode_chunk(b));
    auto ok = c.ack(1);
    ASSERT_TRUE(ok) << c.log_text();
    EXPECT_GT(ok->first, 0) << ok->second;
    for (int64_t seq : {2, 3, 4, 5}) {
      SCOPED_TRACE(seq);
      auto a = c.ack(seq);
      ASSERT_TRUE(a) << c.log_text();
      EXPECT_EQ(a->first, -1);
      EXPECT_FALSE(a->second.empty());
    }
    c.expect_every_draw_acked_once();
    EXPECT_FALSE(c.pipeline->closed());
  }
}

TEST(HostileServer, RencodeplusHugeCountsAndDeepNesting) {
  {
    // A string length beyond 64 bits.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> b = {0xC2};
    b.insert(b.end(), kPing.begin(), kPing.end());
    for (char ch : std::string("99999999999999999999999:x")) b.push_back(uint8_t(ch));
    c.peer.send(rencode_chunk(b));
    c.expect_clean_refusal(ErrorCode::LimitExceeded, "64 bits");
  }
  {
    // 4 Mi one-byte values in one terminated list: refused at the item limit, not decoded
    // into ~300 MB of values.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> b = {59};
    b.insert(b.end(), kPing.begin(), kPing.end());
    b.resize(b.size() + (4u << 20), 0);
    b.push_back(127);
    auto wire = rencode_chunk(b);
    std::vector<uint8_t>().swap(b);
    const double rss0 = rss_mib();
    c.peer.send(wire);
    c.expect_clean_refusal(ErrorCode::LimitExceeded, "values in one packet");
    EXPECT_LT(rss_mib() - rss0, 100.0);
  }
  {
    // 100000 nested one-item lists (fixed form 0xC1) and 100000 nested dicts (0x67 = dict of
    // one entry, key 0): refused at the depth limit, no stack overflow.
    for (std::vector<uint8_t> unit : {std::vector<uint8_t>{0xC1}, std::vector<uint8_t>{103, 0}}) {
      Client c({}, 0, false);
      c.hello6();
      std::vector<uint8_t> b;
      for (int i = 0; i < 100000; ++i) b.insert(b.end(), unit.begin(), unit.end());
      b.push_back(0);
      c.peer.send(rencode_chunk(b));
      c.expect_clean_refusal(ErrorCode::LimitExceeded, "rencode decode");
    }
  }
}

TEST(HostileServer, BrotliPacketBombEndsTheSessionWithoutInflating) {
  ClientLimits l;
  l.frame.max_decompressed_size = 1 << 20;
  Client c(l, 0, false);
  c.hello6();
  // 64 MiB of zeros inside one rencodeplus byte string: a few KB of brotli.
  std::vector<uint8_t> zeros(64u << 20, 0);
  auto body = xpra::rencode_encode(Value::list({"ping", Value(SharedBytes::copy_of(zeros))}));
  std::vector<uint8_t>().swap(zeros);
  auto z = xpra::compress_payload(body, xpra::PacketCompressor::Brotli, 5);
  std::vector<uint8_t>().swap(body);
  ASSERT_TRUE(z.ok()) << z.error().message();
  std::printf("brotli bomb: %zu bytes on the wire\n", z->bytes.size());
  std::vector<uint8_t> wire;
  xpra::append_chunk(wire, xpra::kProtoRencodeplus, z->level, 0, z->bytes);
  const double rss0 = rss_mib();
  c.peer.send(wire);
  c.expect_clean_refusal(ErrorCode::LimitExceeded, "brotli data inflates to more than");
  EXPECT_LT(rss_mib() - rss0, 64.0);
}

TEST(HostileServer, BrotliRawChunkBombAndCorruptBrotli) {
  {
    ClientLimits l;
    l.frame.max_decompressed_size = 1 << 20;
    Client c(l, 0, false);
    c.hello6();
    auto z = xpra::compress_payload(pixels(8u << 20, 0), xpra::PacketCompressor::Brotli, 5);
    ASSERT_TRUE(z.ok());
    std::vector<uint8_t> wire;
    xpra::append_chunk(wire, 0, z->level, 7, z->bytes);  // the draw's data slot
    c.peer.send(wire);
    c.expect_clean_refusal(ErrorCode::LimitExceeded, "brotli data inflates to more than");
  }
  {
    // A packet whose brotli stream is cut in half.
    Client c({}, 0, false);
    c.hello6();
    std::string text(4000, 'x');
    for (size_t i = 0; i < text.size(); ++i) text[i] = char('a' + (i * 7919) % 26);
    auto body = xpra::rencode_encode(Value::list({"ping", text}));
    auto z = xpra::compress_payload(body, xpra::PacketCompressor::Brotli, 5);
    ASSERT_TRUE(z.ok());
    z->bytes.resize(z->bytes.size() / 2);
    std::vector<uint8_t> wire;
    xpra::append_chunk(wire, xpra::kProtoRencodeplus, z->level, 0, z->bytes);
    c.peer.send(wire);
    auto end = c.wait_end();
    ASSERT_TRUE(end && end->error) << c.log_text();
    EXPECT_NE(end->message().find("brotli"), std::string::npos) << end->message();
    EXPECT_TRUE(c.peer.wait_packet("disconnect"));
    EXPECT_TRUE(c.peer.wait_client_eof());
  }
}

// A server that lies about itself: it announced rencodeplus and lz4/brotli (hello6), then
// sends packets in what it never offered and pixpath never asked for.
TEST(HostileServer, PacketsInACompressorOrEncoderNeverNegotiated) {
  const auto body = xpra::rencode_encode(Value::list({"ping", 1, 2}));
  {
    // lzo (level bit 0x20): pixpath never offers it.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> wire;
    xpra::append_chunk(wire, xpra::kProtoRencodeplus, xpra::kLevelLzo | 1, 0, body);
    c.peer.send(wire);
    c.expect_clean_refusal(ErrorCode::Unsupported, "lzo");
  }
  {
    // Compression bits that name no algorithm at all.
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> wire;
    xpra::append_chunk(wire, xpra::kProtoRencodeplus, 0xC1, 0, body);
    c.peer.send(wire);
    c.expect_clean_refusal(ErrorCode::Unsupported, "unknown compression flags");
  }
  // yaml, old rencode, a cipher never negotiated.
  for (auto [flags, text] : {std::pair<uint8_t, std::string>{xpra::kProtoYaml, "protocol flags"},
                             {xpra::kProtoRencode, "protocol flags"},
                             {uint8_t(xpra::kProtoRencodeplus | xpra::kProtoCipher),
                              "encrypted chunk (no cipher configured)"}}) {
    SCOPED_TRACE(int(flags));
    Client c({}, 0, false);
    c.hello6();
    std::vector<uint8_t> wire;
    xpra::append_chunk(wire, flags, 0, 0, body);
    c.peer.send(wire);
    c.expect_clean_refusal(ErrorCode::Unsupported, text);
  }
  {
    // Integer packet types (xpra 3.1's aliases), which a server sends only to a client that
    // asked for them with an "aliases" capability; pixpath never does.
    Client c({}, 0, false);
    c.hello6();
    c.peer.send(Client::rframe(Value::list({7, 1, 2})));
    c.expect_clean_refusal(ErrorCode::Protocol, "packet aliases");
  }
}

// The codings it announces are junk, and it draws in codings nobody can paint: each draw is
// acked -1 with the coding named, the session goes on.
TEST(HostileServer, CodingsItCannotSendOrWeNeverOffered) {
  Client c({}, 0, false);
  c.hello6();
  Value junk = dict();
  junk.set("encodings", Value::list({1, Value::list({}), "png"}));
  c.peer.send(Client::rframe(Value::list({"encodings", junk})));
  c.peer.send(Client::rframe(Value::list({"encodings", "not a dict"})));
  c.window(1, 64, 64);
  c.peer.send(Client::rframe(draw(1, 0, 0, 16, 16, "jxl", bytes(pixels(100)), 1, 0)));
  c.peer.send(Client::rframe(draw(1, 0, 0, 16, 16, "bogus", bytes(pixels(100)), 2, 0)));
  c.peer.send(Client::rframe(draw(1, 0, 0, 16, 16, "", bytes(pixels(100)), 3, 0)));
  for (auto [seq, coding] : {std::pair<int64_t, std::string>{1, "jxl"}, {2, "bogus"}, {3, ""}}) {
    SCOPED_TRACE(coding);
    auto a = c.ack(seq);
    ASSERT_TRUE(a) << c.log_text();
    EXPECT_EQ(a->first, -1);
    if (!coding.empty()) {
      EXPECT_NE(a->second.find(coding), std::string::npos) << a->second;
    }
  }
  c.peer.send(Client::rframe(Value::list({"ping", 1, 2})));
  EXPECT_TRUE(c.peer.wait_packet("ping_echo", 0, 10s)) << c.log_text();
  c.expect_every_draw_acked_once();
  EXPECT_FALSE(c.pipeline->closed());
}

}  // namespace
}  // namespace pixpath::client
