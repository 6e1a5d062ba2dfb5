#include "pixpath/paint/paint_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "paint/testing/test_support.h"
#include "pixpath/paint/cpu_backing.h"

namespace pixpath::paint {
namespace {

using testing::bgrx;
using testing::solid_draw;
using testing::window_pixel;

struct Harness {
  CpuBacking backing;
  std::mutex mu;
  std::vector<DamageAck> acks;
  std::vector<PaintReport> reports;
  std::unique_ptr<PaintEngine> engine;

  explicit Harness(int threads = 3, bool direct = true) {
    PaintEngineConfig c;
    c.decode_threads = threads;
    c.direct_decode = direct;
    c.on_ack = [this](const DamageAck& a, const PaintReport& r) {
      std::lock_guard<std::mutex> l(mu);
      acks.push_back(a);
      reports.push_back(r);
    };
    auto e = PaintEngine::create(backing, std::move(c));
    EXPECT_TRUE(e.ok());
    engine = std::move(e).value();
  }
  void settle() { ASSERT_TRUE(engine->wait_idle(std::chrono::seconds(20))); }
  const DamageAck& ack_for(int64_t seq) {
    for (auto& a : acks)
      if (a.sequence == seq) return a;
    static DamageAck none{-1, -1, 0, 0, -99, "no ack"};
    return none;
  }
  // every sequence in [first, last] acked exactly once
  void expect_one_ack_each(int64_t first, int64_t last) {
    std::map<int64_t, int> n;
    for (auto& a : acks) n[a.sequence]++;
    for (int64_t s = first; s <= last; ++s) EXPECT_EQ(n[s], 1) << "sequence " << s;
    EXPECT_EQ(acks.size(), static_cast<size_t>(last - first + 1));
  }
};

TEST(PaintEngine, PaintsAndAcksWithRealTime) {
  Harness h;
  h.engine->window_new(1, 32, 16);
  h.engine->submit(solid_draw(1, 10, 0, 0, 32, 16, bgrx(1, 2, 3)));
  h.engine->submit(solid_draw(1, 11, 4, 4, 8, 8, bgrx(9, 8, 7), false));
  h.settle();
  h.expect_one_ack_each(10, 11);
  EXPECT_GT(h.ack_for(10).decode_time_us, 0);
  EXPECT_EQ(h.ack_for(10).w, 32);
  EXPECT_EQ(window_pixel(h.backing, 1, 0, 0), bgrx(1, 2, 3));
  EXPECT_EQ(window_pixel(h.backing, 1, 5, 5), bgrx(9, 8, 7));
  auto s = h.engine->stats();
  EXPECT_EQ(s.direct_decodes, 1);  // the first one: window idle
  EXPECT_GE(s.private_decodes + s.direct_decodes, 2);
}

TEST(PaintEngine, OrderPerWindowAcrossManyWorkers) {
  Harness h(4);
  const int kPackets = 200;
  h.engine->window_new(1, 64, 64);
  h.engine->window_new(2, 48, 48);
  std::thread feeder([&] {
    for (int i = 0; i < kPackets; ++i) {
      int64_t wid = 1 + (i % 2);
      int size = wid == 1 ? 64 : 48;
      // big and small packets alternate so workers finish out of order
      int w = (i % 3 == 0) ? size : 4;
      h.engine->submit(solid_draw(wid, i, 0, 0, w, w, bgrx(static_cast<uint8_t>(i), 0, 1)));
    }
  });
  feeder.join();
  h.settle();
  h.expect_one_ack_each(0, kPackets - 1);
  std::map<int64_t, int64_t> last;
  for (auto& a : h.acks) {
    EXPECT_GT(a.decode_time_us, 0) << a.message;
    if (last.count(a.wid)) {
      EXPECT_GT(a.sequence, last[a.wid]);
    }
    last[a.wid] = a.sequence;
  }
  // the last packet of each window touching (0, 0) wins
  EXPECT_EQ(window_pixel(h.backing, 1, 0, 0), bgrx(198, 0, 1));
  EXPECT_EQ(window_pixel(h.backing, 2, 0, 0), bgrx(199, 0, 1));
  // (10,10) of window 1: last full-size packet there is i=198? (198 % 3 == 0)
  EXPECT_EQ(window_pixel(h.backing, 1, 10, 10), bgrx(198, 0, 1));
}

TEST(PaintEngine, OneAckPerPacketOnEveryErrorPath) {
  Harness h(2);
  h.engine->window_new(1, 16, 16);
  DrawPacket unknown = solid_draw(1, 1, 0, 0, 4, 4, 0);
  unknown.coding = "h265";
  h.engine->submit(unknown);
  DrawPacket corrupt = solid_draw(1, 2, 0, 0, 4, 4, 0);
  corrupt.data = SharedBytes::copy_of(std::string_view("garbage"));
  h.engine->submit(corrupt);
  h.engine->submit(solid_draw(7, 3, 0, 0, 4, 4, 0));  // no such window
  DrawPacket truncated = solid_draw(1, 4, 0, 0, 4, 4, 0, false);
  truncated.data = truncated.data.slice(0, 10);
  h.engine->submit(truncated);
  DrawPacket bad_delta = solid_draw(1, 5, 0, 0, 4, 4, 0);
  bad_delta.options.delta = 99;
  h.engine->submit(bad_delta);
  DrawPacket bad_format = solid_draw(1, 6, 0, 0, 4, 4, 0);
  bad_format.options.rgb_format = "XYZW";
  h.engine->submit(bad_format);
  h.engine->submit(solid_draw(1, 7, 0, 0, 4, 4, bgrx(5, 5, 5)));  // fine
  h.settle();
  h.expect_one_ack_each(1, 7);
  EXPECT_EQ(h.ack_for(1).decode_time_us, -1);
  EXPECT_NE(h.ack_for(1).message.find("h265"), std::string::npos);
  EXPECT_EQ(h.ack_for(2).decode_time_us, -1);
  EXPECT_EQ(h.ack_for(3).decode_time_us, 0);
  EXPECT_EQ(h.ack_for(4).decode_time_us, -1);
  EXPECT_EQ(h.ack_for(5).decode_time_us, -1);
  EXPECT_NE(h.ack_for(5).message.find("delta"), std::string::npos);
  EXPECT_EQ(h.ack_for(6).decode_time_us, -1);
  EXPECT_GT(h.ack_for(7).decode_time_us, 0);
}

TEST(PaintEngine, LostWindowPaintsWhatCameBeforeAndSkipsWhatCameAfter) {
  Harness h(2);
  std::vector<int64_t> destroyed;
  h.engine->window_new(1, 256, 256);
  for (int i = 0; i < 20; ++i) h.engine->submit(solid_draw(1, i, 0, 0, 256, 256, bgrx(1, 1, 1)));
  h.engine->window_lost(1);
  h.engine->submit(solid_draw(1, 20, 0, 0, 4, 4, 0));  // after the loss
  h.engine->submit(solid_draw(1, 21, 0, 0, 4, 4, 0));
  h.settle();
  h.expect_one_ack_each(0, 21);
  for (int i = 0; i < 20; ++i) EXPECT_GT(h.ack_for(i).decode_time_us, 0);
  EXPECT_EQ(h.ack_for(20).decode_time_us, 0);
  EXPECT_NE(h.ack_for(20).message.find("does not exist"), std::string::npos);
  EXPECT_EQ(h.ack_for(21).decode_time_us, 0);
  EXPECT_FALSE(h.backing.window_size(1));
}

TEST(PaintEngine, ShutdownWithWorkInFlightLosesNoAck) {
  for (int round = 0; round < 5; ++round) {
    Harness h(3);
    h.engine->window_new(1, 512, 512);
    h.engine->window_new(2, 512, 512);
    const int n = 60;
    std::thread feeder([&] {
      for (int i = 0; i < n; ++i)
        h.engine->submit(solid_draw(1 + i % 2, i, 0, 0, 512, 512, bgrx(3, 3, 3)));
    });
    h.engine->run_ui_once();
    feeder.join();
    h.engine->run_ui_once();
    h.engine->shutdown();
    h.engine->submit(solid_draw(1, n, 0, 0, 4, 4, 0));  // after shutdown: acked 0 at once
    h.expect_one_ack_each(0, n);
    EXPECT_EQ(h.ack_for(n).decode_time_us, 0);
  }
}

TEST(PaintEngine, DeltaBucketsThroughTheEngine) {
  Harness h(4);
  h.engine->window_new(1, 8, 8);
  auto base = testing::bgrx_bytes(4, 4, [](int x, int y) { return bgrx(x * 10, y * 10, 99); });
  auto next = testing::bgrx_bytes(4, 4, [](int x, int y) { return bgrx(x * 10, y * 10, 42); });
  std::vector<uint8_t> xored(base.size());
  for (size_t i = 0; i < base.size(); ++i) xored[i] = base[i] ^ next[i];
  DrawPacket p1 = testing::rgb_draw(1, 1, 0, 0, 4, 4, base, true);
  p1.options.store = 1;
  p1.options.bucket = 2;
  DrawPacket p2 = testing::rgb_draw(1, 2, 0, 0, 4, 4, xored, true);
  p2.options.delta = 1;
  p2.options.bucket = 2;
  p2.options.store = 2;
  DrawPacket p3 = p2;  // delta against sequence 1 again: the bucket now holds 2
  p3.sequence = 3;
  p3.x = 4;
  p3.options.store.reset();
  DrawPacket p4 = testing::rgb_draw(1, 4, 4, 4, 4, 4, xored, false);  // uncompressed: read-only
  p4.options.delta = 2;
  p4.options.bucket = 2;
  p4.options.paint = false;  // stored... but not painted
  h.engine->submit(p1);
  h.engine->submit(p2);
  h.engine->submit(p3);
  h.engine->submit(p4);
  h.settle();
  h.expect_one_ack_each(1, 4);
  EXPECT_GT(h.ack_for(2).decode_time_us, 0) << h.ack_for(2).message;
  EXPECT_EQ(window_pixel(h.backing, 1, 3, 2), bgrx(30, 20, 42));
  EXPECT_EQ(h.ack_for(3).decode_time_us, -1);
  EXPECT_EQ(window_pixel(h.backing, 1, 5, 0), bgrx(0, 0, 0));  // nothing painted
  EXPECT_GT(h.ack_for(4).decode_time_us, 0);
  EXPECT_EQ(window_pixel(h.backing, 1, 5, 5), bgrx(0, 0, 0));  // paint=false
}

TEST(PaintEngine, ScrollScaleResizeVoid) {
  Harness h(2);
  h.engine->window_new(1, 8, 8);
  h.engine->submit(solid_draw(1, 1, 0, 0, 8, 4, bgrx(1, 1, 1)));
  h.engine->submit(solid_draw(1, 2, 0, 4, 8, 4, bgrx(2, 2, 2)));
  DrawPacket scroll;
  scroll.wid = 1;
  scroll.sequence = 3;
  scroll.coding = "scroll";
  scroll.options.scroll = {{0, 0, 8, 4, 0, 4}, {0, 4, 8, 4, 0, -4}};
  h.engine->submit(scroll);
  h.settle();
  EXPECT_EQ(window_pixel(h.backing, 1, 0, 0), bgrx(2, 2, 2));
  EXPECT_EQ(window_pixel(h.backing, 1, 0, 7), bgrx(1, 1, 1));
  // scaled: 2x2 data painted as 8x8
  DrawPacket scaled = solid_draw(1, 4, 0, 0, 8, 8, 0);
  scaled = testing::rgb_draw(1, 4, 0, 0, 8, 8,
                             testing::bgrx_bytes(2, 2, [](int, int) { return bgrx(7, 7, 7); }));
  scaled.rowstride = 8;
  scaled.options.scaled_width = 2;
  scaled.options.scaled_height = 2;
  h.engine->submit(scaled);
  h.engine->window_resize(1, 12, 6);
  DrawPacket v;
  v.wid = 1;
  v.sequence = 5;
  v.coding = "void";
  h.engine->submit(v);
  h.engine->submit(solid_draw(1, 6, 8, 0, 4, 4, bgrx(6, 6, 6)));
  h.settle();
  h.expect_one_ack_each(1, 6);
  for (auto& a : h.acks) EXPECT_GT(a.decode_time_us, 0) << a.sequence << " " << a.message;
  EXPECT_EQ(*h.backing.window_size(1), (Size{12, 6}));
  EXPECT_EQ(window_pixel(h.backing, 1, 7, 5), bgrx(7, 7, 7));
  EXPECT_EQ(window_pixel(h.backing, 1, 11, 0), bgrx(6, 6, 6));
  EXPECT_EQ(window_pixel(h.backing, 1, 11, 5), bgrx(0, 0, 0));
}

TEST(PaintEngine, WakeupIsCalled) {
  CpuBacking backing;
  std::atomic<int> wakeups{0};
  std::atomic<int> acks{0};
  PaintEngineConfig c;
  c.wakeup = [&] { wakeups++; };
  c.on_ack = [&](const DamageAck&, const PaintReport&) { acks++; };
  auto e = PaintEngine::create(backing, std::move(c));
  ASSERT_TRUE(e.ok());
  (*e)->window_new(1, 4, 4);
  (*e)->submit(solid_draw(1, 1, 0, 0, 4, 4, 0));
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(10)));
  EXPECT_GT(wakeups.load(), 0);
  EXPECT_EQ(acks.load(), 1);
}

TEST(PaintEngine, FullQueueRefusesDrawsWithMinusOne) {
  CpuBacking backing;
  std::mutex mu;
  std::vector<DamageAck> acks;
  std::vector<std::string> log;
  PaintEngineConfig c;
  c.max_queued_draws = 3;
  c.on_ack = [&](const DamageAck& a, const PaintReport&) {
    std::lock_guard<std::mutex> l(mu);
    acks.push_back(a);
  };
  c.log = [&](std::string_view line) {
    std::lock_guard<std::mutex> l(mu);
    log.emplace_back(line);
  };
  auto e = PaintEngine::create(backing, std::move(c));
  ASSERT_TRUE(e.ok());
  (*e)->window_new(1, 8, 8);
  // The UI thread does not run: the first 3 wait, the other 7 are refused at once.
  for (int i = 1; i <= 10; ++i) (*e)->submit(solid_draw(1, i, 0, 0, 8, 8, bgrx(1, 2, 3)));
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(acks.size(), 7u);
    for (const auto& a : acks) {
      EXPECT_EQ(a.decode_time_us, -1);
      EXPECT_NE(a.message.find("queue full"), std::string::npos) << a.message;
    }
    ASSERT_EQ(log.size(), 1u);  // rate-limited: one line for the burst
  }
  auto s = (*e)->stats();
  EXPECT_EQ(s.queued_draws, 3);
  EXPECT_EQ(s.refused_queue_full, 7);
  EXPECT_EQ(s.max_queued_draws_seen, 3);
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(10)));
  EXPECT_EQ((*e)->stats().queued_draws, 0);
  EXPECT_EQ((*e)->stats().queued_bytes, 0u);
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(acks.size(), 10u);
}

TEST(PaintEngine, RejectsBadConfig) {
  CpuBacking backing;
  PaintEngineConfig c;
  c.decode_threads = 0;
  EXPECT_FALSE(PaintEngine::create(backing, c).ok());
}

}  // namespace
}  // namespace pixpath::paint
