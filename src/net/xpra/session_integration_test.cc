// Against REAL xpra servers started by the test (see testing/xpra_server.h): Debian's 3.1.3
// (bencode, after the rencodeplus hello it cannot read) and 6.5.5 (rencodeplus, lz4/brotli),
// every test for both.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "net/xpra/testing/recording_listener.h"
#include "net/xpra/testing/xpra_server.h"
#include "pixpath/net/xpra/session.h"

namespace pixpath::xpra {
namespace {

using namespace std::chrono_literals;
using testing::RecordingListener;
using testing::XpraServer;
using testing::XpraServerOptions;
using testing::XpraVersion;

class XpraRealServer : public ::testing::TestWithParam<XpraVersion> {
 protected:
  void SetUp() override {
    if (auto a = testing::xpra_available(GetParam()); !a.ok()) GTEST_SKIP() << a.error().message();
  }
  bool v6() const { return GetParam() == XpraVersion::V6; }
};

// Starts a server of the test's version (a failure is a test failure: SetUp skipped already
// where the version is missing).
std::unique_ptr<XpraServer> start_server(XpraVersion version, XpraServerOptions o = {}) {
  o.version = version;
  o.extra_args.push_back("--pings=1");  // a ping every second, to see them answered
  auto s = XpraServer::start(o);
  if (!s.ok()) {
    ADD_FAILURE() << s.error().message();
    return nullptr;
  }
  return std::move(*s);
}

SessionOptions options_for(const XpraServer& server, std::vector<std::string> encodings) {
  SessionOptions o;
  o.url = server.url();
  o.encodings = std::move(encodings);
  o.log = [](std::string_view line) { std::fprintf(stderr, "  [session] %.*s\n", int(line.size()), line.data()); };
  return o;
}

std::string describe(const DrawPacket& d) {
  std::string s = d.coding + " " + std::to_string(d.w) + "x" + std::to_string(d.h) +
                  " seq=" + std::to_string(d.sequence) + " stride=" + std::to_string(d.rowstride) +
                  " bytes=" + std::to_string(d.data.size());
  const auto& o = d.options;
  if (!o.rgb_format.empty()) s += " rgb_format=" + o.rgb_format;
  if (o.zlib) s += " zlib=" + std::to_string(o.zlib);
  if (o.lz4) s += " lz4=" + std::to_string(o.lz4);
  if (o.store) s += " store=" + std::to_string(*o.store);
  if (o.delta) s += " delta=" + std::to_string(*o.delta);
  if (o.store || o.delta) s += " bucket=" + std::to_string(o.bucket);
  if (o.flush) s += " flush=" + std::to_string(*o.flush);
  if (o.quality >= 0) s += " quality=" + std::to_string(o.quality);
  if (o.scaled_width) s += " scaled";
  if (!o.scroll.empty()) s += " scrolls=" + std::to_string(o.scroll.size());
  return s;
}

void check_draw_fields(const DrawPacket& d, const std::map<int64_t, WindowInfo>& windows) {
  SCOPED_TRACE(describe(d));
  ASSERT_TRUE(windows.count(d.wid)) << "draw for unknown window " << d.wid;
  const WindowInfo& w = windows.at(d.wid);
  EXPECT_GT(d.w, 0);
  EXPECT_GT(d.h, 0);
  EXPECT_GE(d.x, 0);
  EXPECT_GE(d.y, 0);
  EXPECT_LE(d.x + d.w, w.w + 64);  // the window may have grown since new-window
  EXPECT_LE(d.y + d.h, w.h + 64);
  EXPECT_GE(d.sequence, 0);
  EXPECT_NE(d.received, std::chrono::steady_clock::time_point{});
  if (d.coding == "rgb24" || d.coding == "rgb32") {
    // rgb_format gives the bytes per pixel: a 3.1 server sends "rgb24" draws as BGRX.
    int bpp = int(d.options.rgb_format.size());
    EXPECT_TRUE(bpp == 3 || bpp == 4) << "rgb_format '" << d.options.rgb_format << "'";
    EXPECT_GE(d.rowstride, d.w * bpp);
    EXPECT_FALSE(d.options.zlib && d.options.lz4);
    if (!d.options.zlib && !d.options.lz4) {
      EXPECT_EQ(d.data.size(), size_t(d.rowstride) * d.h);
    } else {
      EXPECT_GT(d.data.size(), 0u);
    }
  } else if (d.coding == "png" || d.coding == "png/L" || d.coding == "png/P") {
    ASSERT_GE(d.data.size(), 8u);
    EXPECT_EQ(d.data.view().substr(0, 4), "\x89PNG");
  } else if (d.coding == "jpeg") {
    ASSERT_GE(d.data.size(), 4u);
    EXPECT_EQ(uint8_t(d.data.data()[0]), 0xFF);
    EXPECT_EQ(uint8_t(d.data.data()[1]), 0xD8);
  } else if (d.coding == "scroll") {
    EXPECT_FALSE(d.options.scroll.empty());
  }
}

struct SessionRun {
  RecordingListener::Events events;
  uint64_t pings = 0, acks = 0, compressed = 0, rejected = 0;
  std::set<std::string> packet_types;
  std::set<std::string> compressed_types;  // "hello/lz4": packet-level compression seen
  SessionEnd end;
};

// One session: connect, wait for a window and `want_draws` draws of `coding` ("": any), and a
// ping answered; then disconnect cleanly.
SessionRun run_session(const XpraServer& server, std::vector<std::string> encodings,
                       const std::string& coding, int want_draws = 1) {
  SessionRun run;
  RecordingListener listener;
  std::mutex types_mu;
  SessionOptions o = options_for(server, encodings);
  o.preferred_encoding = coding.empty() ? encodings.front() : coding;
  o.packet_hook = [&](const Packet& p) {
    std::lock_guard lock(types_mu);
    run.packet_types.insert(p.type);
    if (p.compressed) {
      run.compressed_types.insert(p.type + (p.main_level & kLevelLz4      ? "/lz4"
                                            : p.main_level & kLevelBrotli ? "/brotli"
                                            : p.main_level                ? "/zlib"
                                                                          : "/raw-chunk"));
    }
  };
  auto started = Session::start(std::move(o), listener);
  if (!started.ok()) {
    ADD_FAILURE() << started.error().message();
    return run;
  }
  Session& session = **started;
  listener.set_session(&session);
  auto ready = session.wait_until_ready(20s);
  EXPECT_TRUE(ready.ok()) << (ready.ok() ? "" : ready.error().message()) << "\n" << server.log_tail();
  EXPECT_TRUE(listener.wait_for(30s, [](const auto& e) { return !e.windows.empty(); }))
      << "no new-window";
  EXPECT_TRUE(listener.wait_for(30s, [&](const auto& e) {
    int n = 0;
    for (const auto& d : e.draws) n += coding.empty() || d.coding == coding;
    return n >= want_draws;
  })) << "no '" << coding << "' draw\n" << server.log_tail();
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (session.pings_answered() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(session.pings_answered(), 0u) << "no ping within 15 s";
  auto closed = session.disconnect("pixpath test done");
  EXPECT_TRUE(closed.ok()) << closed.error().message();
  EXPECT_EQ(session.state(), Session::State::Closed);
  run.events = listener.snapshot();
  run.pings = session.pings_answered();
  run.acks = session.acks_sent();
  run.compressed = session.compressed_packets();
  run.rejected = session.draws_rejected();
  EXPECT_EQ(listener.ack_failures(), 0u);
  if (!run.events.ends.empty()) run.end = run.events.ends.back();
  return run;
}

void report(const std::string& title, const SessionRun& run) {
  std::fprintf(stderr, "== %s: %zu windows, %zu draws, %llu acks, %llu pings answered, %llu "
               "compressed packets, %llu rejected draws\n",
               title.c_str(), run.events.windows.size(), run.events.draws.size(),
               (unsigned long long)run.acks, (unsigned long long)run.pings,
               (unsigned long long)run.compressed, (unsigned long long)run.rejected);
  std::string types;
  for (const auto& t : run.packet_types) types += t + " ";
  std::fprintf(stderr, "   packet types seen: %s\n", types.c_str());
  std::string comp;
  for (const auto& t : run.compressed_types) comp += t + " ";
  std::fprintf(stderr, "   compressed packets: %s\n", comp.c_str());
  for (const auto& w : run.events.windows) {
    std::fprintf(stderr, "   window %lld %dx%d+%d+%d title='%s' OR=%d\n", (long long)w.wid, w.w,
                 w.h, w.x, w.y, w.title.c_str(), int(w.override_redirect));
  }
  size_t shown = 0;
  for (const auto& d : run.events.draws) {
    if (shown++ < 12) std::fprintf(stderr, "   draw %s\n", describe(d).c_str());
  }
}

void check_run(const SessionRun& run) {
  std::map<int64_t, WindowInfo> windows;
  for (const auto& w : run.events.windows) windows[w.wid] = w;
  ASSERT_FALSE(windows.empty());
  for (const auto& d : run.events.draws) check_draw_fields(d, windows);
  // Every draw was acknowledged exactly once by the listener.
  EXPECT_EQ(run.acks, run.events.draws.size() + run.rejected);
  EXPECT_EQ(run.rejected, 0u);
  ASSERT_EQ(run.events.ends.size(), 1u);
  EXPECT_TRUE(run.end.by_client) << run.end.message();
  EXPECT_FALSE(run.end.error.has_value()) << run.end.message();
  EXPECT_TRUE(run.packet_types.count("hello"));
  EXPECT_TRUE(run.packet_types.count("new-window"));
  EXPECT_TRUE(run.packet_types.count("ping"));
}

TEST_P(XpraRealServer, HelloWindowRgbDrawsPingsAndCleanDisconnect) {
  auto server = start_server(GetParam());
  ASSERT_TRUE(server);
  // What a stock server sends a client that can paint rgb24, png and jpeg: 3.1 sends a narrow
  // window as rgb24; 6.x chooses per content (an idle xterm: one jpeg q100 of the window).
  SessionRun run = run_session(*server, {"rgb24", "png", "jpeg"}, v6() ? "" : "rgb24", v6() ? 1 : 2);
  report(std::string("stock ") + testing::xpra_version_name(GetParam()) +
             " server, client paints rgb24+png+jpeg",
         run);
  check_run(run);
  ASSERT_FALSE(run.events.hellos.empty());
  EXPECT_EQ(run.events.hellos[0].version.substr(0, 3), v6() ? "6.5" : "3.1");
  EXPECT_EQ(run.events.hellos[0].packet_encoder,
            v6() ? PacketEncoder::Rencodeplus : PacketEncoder::Bencode);
  EXPECT_GE(run.pings, 1u);
  if (v6()) {
    EXPECT_TRUE(run.packet_types.count("encodings"));  // 6.x: the codings after the hello
  } else {
    EXPECT_TRUE(server->log_contains("pixpath client version"));
  }
  EXPECT_FALSE(server->log_contains("client ping timeout"));
  EXPECT_EQ(server->unexpected_tracebacks(), "") << server->log_tail();
}

TEST_P(XpraRealServer, PngAndJpegDraws) {
  // Strict mode makes the server use the client's preferred coding for every update; without
  // it a 3.1 server sends windows narrower than ~3000 px as rgb24 (see XpraServerOptions), and
  // 6.x sends an xterm ("text" content) as lossless webp or png whatever the client prefers.
  XpraServerOptions so;
  so.environment.push_back({"XPRA_ENCODING_STRICT_MODE", "1"});
  auto server = start_server(GetParam(), so);
  ASSERT_TRUE(server);
  for (std::string coding : {"png", "jpeg"}) {
    SCOPED_TRACE(coding);
    SessionRun run = run_session(*server, {coding, "rgb24"}, coding);
    report("strict server, preferred " + coding, run);
    check_run(run);
  }
  EXPECT_EQ(server->unexpected_tracebacks(), "") << server->log_tail();
}

TEST_P(XpraRealServer, PasswordProtectedServer) {
  XpraServerOptions so;
  so.password = "s3cret pixpath";
  auto server = start_server(GetParam(), so);
  ASSERT_TRUE(server);

  {  // Right password, from the server's own password file.
    RecordingListener listener;
    SessionOptions o = options_for(*server, {"rgb24"});
    o.password.file = server->password_file();
    o.password.env_var.clear();
    auto s = Session::start(std::move(o), listener);
    ASSERT_TRUE(s.ok()) << s.error().message();
    listener.set_session(s->get());
    auto ready = (*s)->wait_until_ready(20s);
    EXPECT_TRUE(ready.ok()) << (ready.ok() ? "" : ready.error().message()) << "\n"
                            << server->log_tail();
    EXPECT_TRUE(listener.wait_for(30s, [](const auto& e) { return !e.draws.empty(); }));
    EXPECT_TRUE((*s)->disconnect("done").ok());
  }
  {  // Right password from an environment variable.
    RecordingListener listener;
    SessionOptions o = options_for(*server, {"rgb24"});
    ::setenv("PIXPATH_TEST_XPRA_PASSWORD", "s3cret pixpath", 1);
    o.password.env_var = "PIXPATH_TEST_XPRA_PASSWORD";
    auto s = Session::start(std::move(o), listener);
    ASSERT_TRUE(s.ok()) << s.error().message();
    listener.set_session(s->get());
    auto ready = (*s)->wait_until_ready(20s);
    EXPECT_TRUE(ready.ok()) << (ready.ok() ? "" : ready.error().message());
    EXPECT_TRUE((*s)->disconnect("done").ok());
  }
  {  // Wrong password: the server refuses; the session ends with the server's reason.
    RecordingListener listener;
    SessionOptions o = options_for(*server, {"rgb24"});
    o.password.literal = "wrong";
    auto s = Session::start(std::move(o), listener);
    ASSERT_TRUE(s.ok()) << s.error().message();
    auto ready = (*s)->wait_until_ready(20s);
    ASSERT_FALSE(ready.ok());
    std::fprintf(stderr, "== wrong password: %s\n", ready.error().message().c_str());
    ASSERT_TRUE(listener.wait_for(10s, [](const auto& e) { return !e.ends.empty(); }));
    auto end = listener.snapshot().ends.back();
    EXPECT_FALSE(end.by_client);
    EXPECT_FALSE(end.reasons.empty()) << end.message();
  }
  {  // No password at all: a clear error, no hang.
    RecordingListener listener;
    SessionOptions o = options_for(*server, {"rgb24"});
    o.password.env_var = "PIXPATH_TEST_XPRA_UNSET_VARIABLE";
    auto s = Session::start(std::move(o), listener);
    ASSERT_TRUE(s.ok()) << s.error().message();
    auto ready = (*s)->wait_until_ready(20s);
    ASSERT_FALSE(ready.ok());
    std::fprintf(stderr, "== no password: %s\n", ready.error().message().c_str());
    EXPECT_NE(ready.error().message().find("password"), std::string::npos);
  }
}

// 6.x without strict mode: a client that lists jpeg but neither png nor webp gets jpeg for an
// xterm (docs/xpra-servers.md, "How 6.5.5 chooses").
TEST_P(XpraRealServer, JpegWithoutStrictMode) {
  if (!v6()) GTEST_SKIP() << "6.x only: a 3.1 server needs strict mode (PngAndJpegDraws)";
  auto server = start_server(GetParam());
  ASSERT_TRUE(server);
  SessionRun run = run_session(*server, {"jpeg", "rgb24", "rgb32"}, "jpeg");
  report("stock 6.x server, client paints jpeg+rgb", run);
  check_run(run);
}

// A local session through its Unix socket, as `pixpath attach socket:///PATH` reaches it.
TEST_P(XpraRealServer, UnixSocket) {
  XpraServerOptions so;
  so.bind_tcp = false;
  so.bind_unix = true;
  auto server = start_server(GetParam(), so);
  ASSERT_TRUE(server);
  RecordingListener listener;
  SessionOptions o = options_for(*server, {"rgb24", "png"});
  o.url = "socket://" + server->socket_path();
  auto s = Session::start(std::move(o), listener);
  ASSERT_TRUE(s.ok()) << s.error().message();
  listener.set_session(s->get());
  auto ready = (*s)->wait_until_ready(20s);
  ASSERT_TRUE(ready.ok()) << ready.error().message() << "\n" << server->log_tail();
  EXPECT_TRUE(listener.wait_for(30s, [](const auto& e) { return !e.draws.empty(); }));
  EXPECT_TRUE((*s)->disconnect("done").ok());
}

INSTANTIATE_TEST_SUITE_P(Versions, XpraRealServer,
                         ::testing::Values(XpraVersion::V3_1, XpraVersion::V6),
                         [](const auto& version) {
                           return version.param == XpraVersion::V6 ? std::string("xpra6")
                                                                : std::string("xpra31");
                         });

}  // namespace
}  // namespace pixpath::xpra
