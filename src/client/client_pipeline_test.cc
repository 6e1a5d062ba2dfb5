// ClientPipeline against a scripted server (FakePeer): what the observers see and on which
// thread, the window table, resize only on a size change, the stop sequence (acks of draws
// that arrive during the goodbye go out; acks made after the server hung up are counted).
#include "pixpath/client/client_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "net/xpra/testing/fake_peer.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/paint/cpu_backing.h"

namespace pixpath::client {
namespace {

using namespace std::chrono_literals;
using xpra::Value;
using xpra::testing::FakePeer;

Value dict() { return Value(Value::Dict{}); }

// An rgb24 draw of w x h grey pixels.
Value rgb24_draw(int64_t wid, int w, int h, int64_t seq) {
  std::vector<uint8_t> px(size_t(w) * size_t(h) * 3, 0x40);
  return Value::list({"draw", wid, 0, 0, w, h, "rgb24", SharedBytes::copy_of(px), seq, w * 3, dict()});
}

// A CPU backing that counts the framebuffer resizes it is asked for.
class CountingBacking final : public paint::Backing {
 public:
  std::atomic<int> resizes{0};

  std::string_view name() const override { return inner_.name(); }
  PixelFormat format() const override { return inner_.format(); }
  std::shared_ptr<ReleaseDomain> release_domain() const override { return inner_.release_domain(); }
  Result<void> create_window(int64_t wid, int w, int h) override { return inner_.create_window(wid, w, h); }
  Result<void> resize_window(int64_t wid, int w, int h) override {
    resizes++;
    return inner_.resize_window(wid, w, h);
  }
  Result<void> destroy_window(int64_t wid) override { return inner_.destroy_window(wid); }
  std::optional<paint::Size> window_size(int64_t wid) const override { return inner_.window_size(wid); }
  std::vector<int64_t> windows() const override { return inner_.windows(); }
  Result<paint::DirectTarget> begin_direct(int64_t wid, paint::Rect r) override { return inner_.begin_direct(wid, r); }
  Result<void> end_direct(paint::DirectTarget t, bool written) override {
    return inner_.end_direct(std::move(t), written);
  }
  Result<void> paint(int64_t wid, int x, int y, const Picture& p, int w, int h) override {
    return inner_.paint(wid, x, y, p, w, h);
  }
  Result<void> scroll(int64_t wid, std::span<const ScrollRect> rects) override {
    return inner_.scroll(wid, rects);
  }
  Result<Picture> snapshot(int64_t wid) override { return inner_.snapshot(wid); }

 private:
  paint::CpuBacking inner_;
};

// Writes down every call, with the thread it came on.
class CallLog final : public ClientObserver {
 public:
  struct Call {
    std::string what;
    std::thread::id thread;
  };
  std::vector<Call> calls() {
    MutexLock lock(mu_);
    return calls_;
  }
  std::vector<std::string> names() {
    std::vector<std::string> v;
    for (const auto& c : calls()) v.push_back(c.what);
    return v;
  }
  size_t count(const std::string& what) {
    size_t n = 0;
    for (const auto& c : calls()) n += c.what == what;
    return n;
  }
  std::vector<AckDelivery> deliveries() {
    MutexLock lock(mu_);
    return deliveries_;
  }
  std::vector<int64_t> draw_data_sizes() {
    MutexLock lock(mu_);
    return draw_sizes_;
  }

  void on_server_hello(const xpra::ServerInfo& i) override { add("hello " + i.version); }
  void on_window_new(const xpra::WindowInfo& w) override { add("new " + std::to_string(w.wid)); }
  void on_window_lost(int64_t wid) override { add("lost " + std::to_string(wid)); }
  void on_metadata(const xpra::WindowMetadata& m) override {
    add("metadata " + std::to_string(m.wid) + " " + m.title.value_or("-"));
  }
  void on_move_resize(const xpra::WindowGeometry& g, bool resized) override {
    add(std::string(resized ? "resize " : "move ") + std::to_string(g.wid));
  }
  void on_raise(int64_t wid) override { add("raise " + std::to_string(wid)); }
  void on_draw(const DrawPacket& d) override {
    {
      MutexLock lock(mu_);
      draw_sizes_.push_back(int64_t(d.data.size()));
    }
    add("draw " + std::to_string(d.sequence));
  }
  void on_session_end(const xpra::SessionEnd&) override { add("end"); }
  void on_ack(const DamageAck& a, const paint::PaintReport&, AckDelivery d) override {
    {
      MutexLock lock(mu_);
      deliveries_.push_back(d);
    }
    add("ack " + std::to_string(a.sequence) + (a.decode_time_us > 0 ? " painted" : " not painted"));
  }
  void before_window_destroy(int64_t wid) override { add("destroy " + std::to_string(wid)); }
  void before_engine_shutdown(bool idle) override { add(idle ? "shutdown idle" : "shutdown busy"); }

 private:
  void add(std::string what) {
    MutexLock lock(mu_);
    calls_.push_back({std::move(what), std::this_thread::get_id()});
  }
  Mutex mu_;
  std::vector<Call> calls_ PIXPATH_GUARDED_BY(mu_);
  std::vector<AckDelivery> deliveries_ PIXPATH_GUARDED_BY(mu_);
  std::vector<int64_t> draw_sizes_ PIXPATH_GUARDED_BY(mu_);
};

struct Client {
  FakePeer peer;
  CountingBacking backing;
  CallLog first, second;
  std::unique_ptr<ClientPipeline> pipeline;

  explicit Client(std::chrono::milliseconds disconnect_timeout = 2000ms) {
    ClientPipelineOptions o;
    o.session.url = peer.url();
    o.session.encodings = {"rgb24", "rgb32", "png"};
    o.session.log = [](std::string_view) {};
    o.session.disconnect_timeout = disconnect_timeout;
    o.engine.decode_threads = 1;
    o.observers = {&first, &second};
    auto p = ClientPipeline::start(backing, std::move(o));
    EXPECT_TRUE(p.ok()) << p.error().message();
    if (p.ok()) pipeline = std::move(p).value();
    EXPECT_TRUE(peer.wait_packet("hello").has_value());
    Value caps = dict();
    caps.set("version", "3.1.3");
    caps.set("encodings", Value::string_list({"rgb24", "png"}));
    peer.send_packet(Value::list({"hello", caps}));
    auto r = pipeline->wait_until_ready(5s);
    EXPECT_TRUE(r.ok()) << r.error().message();
  }
  ~Client() {
    if (pipeline) pipeline->stop("test done", 500ms, 2000ms);
  }
  void window(int64_t wid, int w, int h) {
    peer.send_packet(Value::list({"new-window", wid, 0, 0, w, h, dict(), dict()}));
    ASSERT_TRUE(pipeline->run_until([&] { return backing.window_size(wid).has_value(); }, 5s));
  }
  // The decode time the peer got for `seq`, if it got one within `timeout`.
  std::optional<int64_t> ack_at_peer(int64_t seq, std::chrono::milliseconds timeout = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    do {
      for (size_t i = 0;; ++i) {
        auto a = peer.wait_packet("damage-sequence", i, 0ms);
        if (!a) break;
        if (a->as_list()[1].as_int() == seq) return a->as_list()[5].as_int();
      }
      std::this_thread::sleep_for(5ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return std::nullopt;
  }
};

TEST(ClientPipeline, ObserversSeeEveryEventInOrderOnTheDocumentedThreads) {
  Client c;
  const auto ui = std::this_thread::get_id();
  c.window(1, 64, 32);
  Value meta = dict();
  meta.set("title", "xterm: ~");
  c.peer.send_packet(Value::list({"window-metadata", 1, meta}));
  c.peer.send_packet(Value::list({"raise-window", 1}));
  c.peer.send_packet(rgb24_draw(1, 64, 32, 5));
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.first.count("ack 5 painted") == 1; }, 5s));
  EXPECT_GT(c.ack_at_peer(5).value_or(-9), 0);
  c.peer.send_packet(Value::list({"lost-window", 1}));
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.first.count("destroy 1") == 1; }, 5s));
  c.peer.close_client();
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.pipeline->closed(); }, 5s));
  EXPECT_TRUE(c.pipeline->stop("test done"));

  // Each thread's calls in order; across the two threads only cause and effect orders them
  // (a draw before its ack, the end before the shutdown; a lost window's before_window_destroy
  // on the UI thread may come before or after on_window_lost on the reader thread).
  const std::vector<std::string> reader = {"hello 3.1.3", "new 1", "metadata 1 xterm: ~",
                                           "raise 1",     "draw 5", "lost 1", "end"};
  const std::vector<std::string> ui_thread = {"ack 5 painted", "destroy 1", "shutdown idle"};
  for (CallLog* log : {&c.first, &c.second}) {  // every observer sees everything
    std::vector<std::string> on_reader, on_ui;
    for (const auto& call : log->calls()) (call.thread == ui ? on_ui : on_reader).push_back(call.what);
    EXPECT_EQ(on_reader, reader);
    EXPECT_EQ(on_ui, ui_thread);
    const auto names = log->names();
    auto at = [&](const std::string& what) { return std::find(names.begin(), names.end(), what); };
    EXPECT_LT(at("draw 5"), at("ack 5 painted"));
    EXPECT_LT(at("end"), at("shutdown idle"));
  }
  EXPECT_EQ(c.first.deliveries(), std::vector<AckDelivery>{AckDelivery::Sent});
  EXPECT_EQ(c.first.draw_data_sizes(), std::vector<int64_t>{64 * 32 * 3});

  // The window table keeps what the server said, lost windows included.
  auto w = c.pipeline->window(1);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->title, "xterm: ~");
  EXPECT_EQ(w->w, 64);
  EXPECT_EQ(w->h, 32);
  EXPECT_TRUE(w->lost);
  EXPECT_EQ(c.pipeline->windows().size(), 1u);
  const auto s = c.pipeline->stats();
  EXPECT_EQ(s.acks_sent, 1);
  EXPECT_EQ(s.acks_after_close, 0);
}

TEST(ClientPipeline, ResizesTheFramebufferOnlyWhenTheSizeChanges) {
  Client c;
  c.window(3, 100, 50);
  // A move (same size): the table follows, the framebuffer is left alone.
  c.peer.send_packet(Value::list({"window-move-resize", 3, 40, 20, 100, 50}));
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.first.count("move 3") == 1; }, 5s));
  // A real resize, then the draw after it shows that both were handled in order.
  c.peer.send_packet(Value::list({"window-move-resize", 3, 40, 20, 120, 60}));
  c.peer.send_packet(rgb24_draw(3, 120, 60, 1));
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.first.count("ack 1 painted") == 1; }, 5s));
  EXPECT_EQ(c.backing.resizes.load(), 1);
  EXPECT_EQ(c.first.count("resize 3"), 1u);
  auto size = c.backing.window_size(3);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->w, 120);
  EXPECT_EQ(size->h, 60);
  auto w = c.pipeline->window(3);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->x, 40);
  EXPECT_EQ(w->y, 20);
  EXPECT_EQ(w->w, 120);
}

// The goodbye: the server keeps the connection after our "disconnect" and sends one more draw;
// it is painted and its ack reaches the server before the server closes.
TEST(ClientPipeline, StopAcksDrawsThatArriveDuringTheGoodbye) {
  Client c(5000ms);
  c.window(1, 32, 32);
  c.peer.close_on_disconnect(false);
  std::optional<int64_t> late_ack;
  std::thread server([&] {
    if (!c.peer.wait_packet("disconnect", 0, 5s)) return;
    c.peer.send_packet(rgb24_draw(1, 32, 32, 9));
    late_ack = c.ack_at_peer(9, 4s);
    c.peer.close_client();
  });
  const bool idle = c.pipeline->stop("test done");
  server.join();
  EXPECT_TRUE(idle);
  ASSERT_TRUE(late_ack.has_value()) << "the draw sent during the goodbye was not acked in time";
  EXPECT_GT(*late_ack, 0);
  const auto s = c.pipeline->stats();
  EXPECT_EQ(s.acks_sent, 1);
  EXPECT_EQ(s.acks_after_close, 0);
  EXPECT_EQ(s.outstanding, 0);
  // The end comes first, then the last look at the framebuffers; once.
  const auto names = c.first.names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[names.size() - 2], "end");
  EXPECT_EQ(names.back(), "shutdown idle");
  EXPECT_TRUE(c.pipeline->stop("again"));
  EXPECT_EQ(c.first.count("shutdown idle"), 1u);
}

// A draw arrives and the server hangs up before it is painted: its ack is counted as made
// after close, not sent and not a failure.
TEST(ClientPipeline, AcksMadeAfterTheServerHungUpAreCounted) {
  Client c;
  c.window(1, 32, 32);
  c.peer.send_packet(rgb24_draw(1, 32, 32, 4));
  c.peer.close_client();
  // No UI work until the session is closed: the draw cannot be painted before.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!c.pipeline->closed() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(c.pipeline->closed());
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.pipeline->stats().outstanding == 0; }, 5s));
  const auto s = c.pipeline->stats();
  EXPECT_EQ(s.acks, 1);
  EXPECT_EQ(s.acks_painted, 1);
  EXPECT_EQ(s.acks_sent, 0);
  EXPECT_EQ(s.acks_after_close, 1);
  EXPECT_EQ(s.acks_send_failed, 0);
  EXPECT_EQ(c.first.deliveries(), std::vector<AckDelivery>{AckDelivery::AfterClose});
}

TEST(ClientPipeline, LostWindowsInTheTableAreBounded) {
  Client c;
  const int n = ClientPipeline::kMaxLostWindows + 10;
  for (int wid = 1; wid <= n; ++wid) {
    c.peer.send_packet(Value::list({"new-window", wid, 0, 0, 8, 8, dict(), dict()}));
    c.peer.send_packet(Value::list({"lost-window", wid}));
  }
  ASSERT_TRUE(c.pipeline->run_until([&] { return c.first.count("lost " + std::to_string(n)) == 1; }, 20s));
  const auto windows = c.pipeline->windows();
  EXPECT_EQ(windows.size(), size_t(ClientPipeline::kMaxLostWindows));
  EXPECT_EQ(windows.front().wid, 11) << "the oldest lost windows go first";
  EXPECT_FALSE(c.pipeline->window(1).has_value());
  EXPECT_TRUE(c.pipeline->window(n).has_value());
}

TEST(ClientPipeline, ANullObserverIsRefused) {
  paint::CpuBacking backing;
  ClientPipelineOptions o;
  o.session.url = "tcp://127.0.0.1:1/";
  o.session.encodings = {"rgb24"};
  o.observers = {nullptr};
  auto p = ClientPipeline::start(backing, std::move(o));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code(), ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace pixpath::client
