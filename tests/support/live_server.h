// Test support: a real xpra server (3.1, or 6.5.5: XpraServerOptions::version) with real X
// clients, and the pixpath binary attached to it. The X clients are started by the test
// (DISPLAY=:N), so it knows their pids (e.g. to freeze an animated one with SIGSTOP) and its
// own window titles.
//
// Static clients (compared pixel for pixel with the X display): an xterm printing fixed text
// then sleeping (title "pixpath-static"), xeyes (static while the pointer does not move).
// Animated clients (compared by geometry and "not blank" only, unless frozen): xclock
// -update 1, glxgears. Windows do not overlap: Xvfb has no backing store, so capturing an
// obscured window (xwd -id) returns whatever covers it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "net/xpra/testing/xpra_server.h"
#include "support/processes.h"
#include "support/x_display.h"

namespace pixpath::testing {

using namespace std::chrono_literals;

inline const std::string kStaticXterm = "pixpath-static";

// The argv of an xterm titled `title`, `cols` x `rows` characters at (x, y), running `command`
// in sh. The shell first asks xterm for that size again (CSI 8;rows;cols t, allowed by
// allowWindowOps): under load the server's window manager (3.1 and 6.x) sometimes maps an
// xterm at one character, 10x17 pixels, and it stays so (6.x then sends it as rgb24 whatever
// the client prefers; wait_for_apps would wait for it in vain).
inline std::vector<std::string> xterm_argv(const std::string& title, int cols, int rows, int x, int y,
                                           const std::string& command) {
  return {"xterm", "-T", title, "-geometry", fmt::format("{}x{}+{}+{}", cols, rows, x, y),
          "-xrm", "*allowWindowOps: true", "-e", "sh", "-c",
          fmt::format("printf '\\033[8;{};{}t'; {}", rows, cols, command)};
}

struct LiveServer {
  std::unique_ptr<xpra::testing::XpraServer> server;
  std::map<std::string, std::unique_ptr<BackgroundProcess>> apps;  // by window title

  int display() const { return server->display(); }
  std::string url() const { return server->url(); }

  // Starts an X client on the server's display; `title` is the window title it will show.
  void start_app(const std::string& title, const std::vector<std::string>& argv, const std::string& tmp) {
    apps[title] = std::make_unique<BackgroundProcess>(
        argv, tmp, std::map<std::string, std::string>{{"DISPLAY", ":" + std::to_string(display())},
                                                      {"LIBGL_ALWAYS_SOFTWARE", "1"}});
  }
  void start_static_xterm(const std::string& tmp) {
    start_app(kStaticXterm,
              xterm_argv(kStaticXterm, 60, 12, 0, 0,
                         "printf 'pixpath static text\\nthe quick brown fox jumps over the lazy dog\\n'; "
                         "seq 1 6; exec sleep 600"),
              tmp);
  }
  void start_xeyes(const std::string& tmp) { start_app("xeyes", {"xeyes", "-geometry", "150x100+420+0"}, tmp); }
  void start_xclock(const std::string& tmp) {
    start_app("xclock", {"xclock", "-update", "1", "-geometry", "164x164+600+0"}, tmp);
  }
  void start_glxgears(const std::string& tmp) {
    start_app("glxgears", {"nice", "-n", "10", "glxgears", "-geometry", "200x200+0+300"}, tmp);
  }
  // Waits until every app's window is mapped at more than one character (wait_for_x_windows;
  // see xterm_argv).
  void wait_for_apps(const std::string& tmp) {
    std::set<std::string> titles;
    for (const auto& [t, _] : apps) titles.insert(t);
    ASSERT_TRUE(wait_for_x_windows(display(), tmp, titles, 30s))
        << "X clients did not map at their sizes";
  }
  ~LiveServer() {
    apps.clear();  // kill the clients first, then the server (its destructor stops it)
  }
};

// Starts the server described by `o` (version, encoding, password, binds: see
// XpraServerOptions) or fails the test with the reason. Call
// xpra::testing::xpra_available(o.version) first to GTEST_SKIP where a version is missing.
inline std::unique_ptr<LiveServer> start_live_server_with(xpra::testing::XpraServerOptions o) {
  auto s = xpra::testing::XpraServer::start(std::move(o));
  if (!s.ok()) {
    ADD_FAILURE() << s.error().message();
    return nullptr;
  }
  auto live = std::make_unique<LiveServer>();
  live->server = std::move(*s);
  return live;
}

// A server (3.1 unless `version` says otherwise) with no started application (the test starts
// its X clients), extra environment and arguments.
inline std::unique_ptr<LiveServer> start_live_server(
    std::vector<std::pair<std::string, std::string>> env = {}, std::vector<std::string> args = {},
    xpra::testing::XpraVersion version = xpra::testing::XpraVersion::V3_1) {
  xpra::testing::XpraServerOptions o;
  o.version = version;
  o.start.clear();
  o.environment = std::move(env);
  o.extra_args = std::move(args);
  return start_live_server_with(std::move(o));
}

// Parses the --json summary of attach/record (fails the test when it is not JSON).
inline nlohmann::json parse_summary(const ProcessResult& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\nstdout: " << r.out << "\nstderr: " << r.err;
    return nlohmann::json::object();
  }
}

inline const nlohmann::json* window_by_title(const nlohmann::json& summary, const std::string& title) {
  for (const auto& w : summary["windows"])
    if (w["title"] == title) return &w;
  return nullptr;
}

// How many draws of `coding` the summary says were painted (0 when none came).
inline int64_t painted(const nlohmann::json& summary, const std::string& coding) {
  for (const auto& c : summary["per_coding"])
    if (c["coding"] == coding) return c["painted"].get<int64_t>();
  return 0;
}

// One line per coding for the test log: what the server sent.
inline void log_codings(const std::string& what, const nlohmann::json& s) {
  std::fprintf(stderr, "== %s: %s draws, %s painted, %s errors, %s delta (%s painted), %s store\n",
               what.c_str(), s["all"]["draws"].dump().c_str(), s["all"]["painted"].dump().c_str(),
               s["all"]["errors"].dump().c_str(), s["delta"]["draws"].dump().c_str(),
               s["delta"]["painted"].dump().c_str(), s["store"]["draws"].dump().c_str());
  for (const auto& c : s["per_coding"])
    std::fprintf(stderr, "   %-8s %5s draws, latency p50 %s us, p99 %s us\n",
                 c["coding"].get<std::string>().c_str(), c["draws"].dump().c_str(),
                 c["latency"]["p50_us"].dump().c_str(), c["latency"]["p99_us"].dump().c_str());
}

// Every draw painted, none failed, every draw acked, clean disconnect on the server's side.
inline void expect_clean_session(const nlohmann::json& s, const xpra::testing::XpraServer& server) {
  EXPECT_GT(s["all"]["painted"].get<int64_t>(), 0);
  EXPECT_EQ(s["all"]["errors"].get<int64_t>(), 0) << s["errors"].dump();
  EXPECT_EQ(s["ack_failures"].get<int64_t>(), 0);
  // Every draw received got exactly one ack from the engine; each was sent, or was made after
  // the server had already closed the connection at the end (a draw in flight at goodbye).
  EXPECT_EQ(s["all"]["draws"].get<int64_t>(), s["draws_received"].get<int64_t>()) << "one ack per draw";
  EXPECT_EQ(s["acks_sent"].get<int64_t>() + s["acks_after_close"].get<int64_t>(),
            s["draws_received"].get<int64_t>())
      << "every ack sent while the connection was open";
  EXPECT_LE(s["acks_after_close"].get<int64_t>(), 8) << "only draws in flight at goodbye";
  EXPECT_TRUE(s["end"]["by_client"].get<bool>()) << s["end"].dump();
  EXPECT_TRUE(server.log_contains("has requested disconnection")) << server.log_tail();
  EXPECT_FALSE(server.log_contains("timeout on screen updates")) << server.log_tail();
  EXPECT_FALSE(server.log_contains("delayed region timeout")) << server.log_tail();
  EXPECT_FALSE(server.log_contains("client ping timeout")) << server.log_tail();
  EXPECT_EQ(server.unexpected_tracebacks(), "") << server.log_tail();
}

// Compares a window's snapshot with the X display's picture of it; returns the difference
// (nullopt when the window could not be captured).
inline std::optional<PictureDiff> compare_with_display(const LiveServer& live, const nlohmann::json& window,
                                                       const std::string& tmp) {
  const std::string title = window["title"];
  auto xw = find_x_window(live.display(), tmp, title, window["w"], window["h"]);
  if (!xw) {
    ADD_FAILURE() << "no X window '" << title << "' of " << window["w"] << "x" << window["h"];
    return std::nullopt;
  }
  const std::string cap = tmp + "/x-" + xw->xid + ".png";
  if (!capture_x_window(live.display(), xw->xid, cap, tmp)) {
    ADD_FAILURE() << "cannot capture X window " << xw->xid << " '" << title << "'";
    return std::nullopt;
  }
  auto want = load_png(cap);
  auto got = load_png(window["snapshot"].get<std::string>());
  if (!want || !got) {
    ADD_FAILURE() << "cannot read " << cap << " or " << window["snapshot"];
    return std::nullopt;
  }
  return compare_rgb(*want, *got);
}

}  // namespace pixpath::testing
