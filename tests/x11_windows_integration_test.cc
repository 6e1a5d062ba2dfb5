// `pixpath attach --backing x11` and `--backing gl-window` (Mesa's software GL on the client
// Xvfb) against real xpra servers (3.1.3 and 6.5.5): the windows sit where the server's are,
// with the server's titles, and show exactly the server window's pixels (read back from the
// client display); a click lands at the right place in a forwarded xev (which logs it); the
// user resizing xev's window on the client (xdotool windowsize) resizes it on the server; keys
// typed with xdotool into the forwarded xterm reach the server's xterm (whose shell writes them
// to a file); the server's cursor (xterm's I-beam, once the pointer is over the xterm) is the
// cursor the client display shows over the forwarded xterm (both read with XFixes); closing
// the xterm's window on the client (WM_DELETE_WINDOW, as a window manager sends it) closes it
// on the server.
#include <gtest/gtest.h>
#include <xcb/xcb.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "support/live_server.h"
#include "support/xvfb.h"

#include <X11/Xlib.h>
#include <X11/extensions/Xfixes.h>

namespace pixpath::testing {
namespace {

using xpra::testing::XpraVersion;

const std::string kInput = "pixpath-input";  // the xterm that writes what is typed to a file
const std::string kClick = "pixpath-click";  // xev, logging the clicks

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

template <class F>
bool eventually(F&& f, std::chrono::milliseconds timeout) {
  for (auto until = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < until;
       std::this_thread::sleep_for(200ms))
    if (f()) return true;
  return f();
}

// What a window manager sends when the user closes a window.
void send_wm_delete(const std::string& display, const std::string& xid_hex) {
  xcb_connection_t* c = xcb_connect(display.c_str(), nullptr);
  auto atom = [&](const char* name) {
    auto* r = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, uint16_t(std::strlen(name)), name), nullptr);
    xcb_atom_t a = r ? r->atom : 0;
    std::free(r);
    return a;
  };
  xcb_client_message_event_t ev{};
  ev.response_type = XCB_CLIENT_MESSAGE;
  ev.format = 32;
  ev.window = uint32_t(std::stoul(xid_hex, nullptr, 16));
  ev.type = atom("WM_PROTOCOLS");
  ev.data.data32[0] = atom("WM_DELETE_WINDOW");
  // Checked: the round trip makes sure the server handled it before we disconnect.
  xcb_generic_error_t* e = xcb_request_check(
      c, xcb_send_event_checked(c, 0, ev.window, XCB_EVENT_MASK_NO_EVENT, reinterpret_cast<const char*>(&ev)));
  EXPECT_EQ(e, nullptr) << "SendEvent failed";
  std::free(e);
  xcb_disconnect(c);
}

struct Case {
  XpraVersion version;
  std::string backing;  // --backing
};

// The cursor display `display` shows now (XFixes), as ARGB words.
struct CursorShot {
  int w = 0, h = 0, xhot = 0, yhot = 0;
  std::vector<uint32_t> argb;
  bool operator==(const CursorShot&) const = default;
  size_t visible() const {
    size_t n = 0;
    for (uint32_t p : argb) n += (p >> 24) != 0;
    return n;
  }
  std::string describe() const {
    const size_t opaque = visible();
    return std::to_string(w) + "x" + std::to_string(h) + " hot spot " + std::to_string(xhot) + "," +
           std::to_string(yhot) + ", " + std::to_string(opaque) + " visible pixels";
  }
};
std::optional<CursorShot> cursor_image(const std::string& display) {
  Display* d = XOpenDisplay(display.c_str());
  if (!d) return std::nullopt;
  std::optional<CursorShot> shot;
  int event_base = 0, error_base = 0;
  if (XFixesQueryExtension(d, &event_base, &error_base)) {
    if (XFixesCursorImage* ci = XFixesGetCursorImage(d)) {
      shot.emplace();
      shot->w = ci->width, shot->h = ci->height, shot->xhot = ci->xhot, shot->yhot = ci->yhot;
      for (size_t i = 0; i < size_t(ci->width) * ci->height; ++i) shot->argb.push_back(uint32_t(ci->pixels[i]));
      XFree(ci);
    }
  }
  XCloseDisplay(d);
  return shot;
}

std::string describe(const std::optional<XWindow>& w) {
  if (!w) return "none";
  return w->xid + " " + std::to_string(w->w) + "x" + std::to_string(w->h) + "+" + std::to_string(w->x) + "+" +
         std::to_string(w->y);
}

class X11Attach : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (auto a = xpra::testing::xpra_available(GetParam().version); !a.ok()) GTEST_SKIP() << a.error().message();
    for (const char* p : {"Xvfb", "xwd", "convert", "xdotool", "xev", "stdbuf"})
      if (!have_program(p)) GTEST_SKIP() << p << " is not installed";
  }
};

TEST_P(X11Attach, WindowsLikeTheServersWithKeyboardPointerAndClose) {
  TempDir tmp;
  auto live = start_live_server({}, {"--cursors=yes"}, GetParam().version);
  ASSERT_TRUE(live);
  const std::string typed = tmp / "typed.txt", clicks = tmp / "xev.txt";
  live->start_app(kInput, xterm_argv(kInput, 30, 4, 40, 30, "exec cat > " + typed), tmp.path);
  live->start_app(kClick, {"sh", "-c", "exec stdbuf -oL xev -geometry 200x120+400+60 -name " + kClick + " > " + clicks},
                  tmp.path);
  live->wait_for_apps(tmp.path);

  Xvfb client(1024, 768);
  std::string why;
  ASSERT_TRUE(client.start(&why)) << why;
  const int cd = std::stoi(client.display().substr(1));
  const auto default_cursor = cursor_image(client.display());  // the root window's
  ASSERT_TRUE(default_cursor) << "no XFixes cursor image on " << client.display();
  std::map<std::string, std::string> env = {{"DISPLAY", client.display()}};
  if (GetParam().backing == "gl-window") {
    // Under ASan: Mesa's llvmpipe leaks JIT allocations LeakSanitizer cannot attribute (frames in
    // "<unknown module>"), as in the GL tests (src/gl/CMakeLists.txt); address checks stay on.
    const char* asan = std::getenv("ASAN_OPTIONS");
    env["ASAN_OPTIONS"] = std::string(asan && *asan ? std::string(asan) + ":" : "") + "detect_leaks=0";
  }
  BackgroundProcess p({pixpath_binary(), "-v", "attach", live->url(), "--backing", GetParam().backing, "--json", "--exit-after", "90"},
                      tmp.path, env);

  // Placed and titled like the server's windows.
  std::optional<XWindow> server_input, server_click, input, click;
  const bool appeared = eventually(
      [&] {
        server_input = find_x_window(live->display(), tmp.path, kInput);
        server_click = find_x_window(live->display(), tmp.path, kClick);
        input = find_x_window(cd, tmp.path, kInput);
        click = find_x_window(cd, tmp.path, kClick);
        return server_input && server_click && input && click;
      },
      20s);
  if (!appeared) {
    p.signal(SIGINT);
    auto r = p.wait(30s);
    FAIL() << "the windows did not appear on " << client.display() << " (server: " << (server_input ? "xterm " : "")
           << (server_click ? "xev" : "") << "; client: " << (input ? "xterm " : "") << (click ? "xev" : "")
           << "); pixpath attach (exit " << r.exit_code << (r.timed_out ? ", timed out" : "") << ") said:\n" << r.out << "\n"
           << r.err;
  }
  EXPECT_EQ(input->x, server_input->x);
  EXPECT_EQ(input->y, server_input->y);
  EXPECT_EQ(input->w, server_input->w);
  EXPECT_EQ(input->h, server_input->h);
  EXPECT_EQ(click->x, server_click->x);
  EXPECT_EQ(click->y, server_click->y);

  // The same pixels (rgb24 is lossless): compare until equal (bounded), both sides captured
  // each round (the xterm may still draw at first).
  std::optional<PictureDiff> diff;
  eventually(
      [&] {
        const std::string want = tmp / "server.png", got = tmp / "client.png";
        if (!capture_x_window(live->display(), server_click->xid, want, tmp.path) ||
            !capture_x_window(cd, click->xid, got, tmp.path))
          return false;
        auto a = load_png(want);
        auto b = load_png(got);
        if (a && b) diff = compare_rgb(*a, *b);
        return diff && diff->same_size && diff->differing_pixels == 0;
      },
      20s);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->differing_pixels, 0) << diff->describe();

  // A click at (150, 90) inside xev's window on the client lands at (150, 90) on the server.
  const std::string display = client.display();
  auto xdotool = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "xdotool");
    auto r = run_process(args, tmp.path, 20s, {{"DISPLAY", display}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  xdotool({"mousemove", "--sync", std::to_string(click->x + 150), std::to_string(click->y + 90)});
  xdotool({"click", "1"});
  EXPECT_TRUE(eventually(
      [&] {
        const std::string log = read_all(clicks);
        return log.find("ButtonPress") != std::string::npos && log.find("(150,90)") != std::string::npos;
      },
      10s))
      << "xev saw: " << read_all(clicks).substr(0, 2000);

  // The user resizing xev's window on the client resizes it on the server (configure-window).
  xdotool({"windowsize", "--sync", click->xid, "260", "150"});
  std::optional<XWindow> resized;
  EXPECT_TRUE(eventually(
      [&] {
        resized = find_x_window(live->display(), tmp.path, kClick);
        return resized && resized->w == 260 && resized->h == 150;
      },
      10s))
      << "the server's xev window is " << (resized ? std::to_string(resized->w) + "x" + std::to_string(resized->h) : "gone");
  const auto client_click = find_x_window(cd, tmp.path, kClick);
  ASSERT_TRUE(client_click);
  EXPECT_EQ(client_click->w, 260);
  EXPECT_EQ(client_click->h, 150);

  // The middle of the xterm: under load 6.x sometimes maps it at 10x17 (one cell) first.
  xdotool({"mousemove", "--sync", std::to_string(input->x + input->w / 2), std::to_string(input->y + input->h / 2)});
  // The server's cursor over its xterm (the pointer is there now: pointer-position), xterm's
  // I-beam, is what the client shows over the forwarded xterm: the same image and hot spot, not
  // the default. (Checked before typing: xterm hides its pointer while one types.)
  const std::string server_display = ":" + std::to_string(live->display());
  std::optional<CursorShot> server_cursor, client_cursor;
  EXPECT_TRUE(eventually(
      [&] {
        server_cursor = cursor_image(server_display);
        client_cursor = cursor_image(display);
        return server_cursor && client_cursor && server_cursor->visible() > 0 && server_cursor != default_cursor &&
               *server_cursor == *client_cursor;
      },
      10s))
      << "server cursor " << (server_cursor ? server_cursor->describe() : "none") << ", client cursor "
      << (client_cursor ? client_cursor->describe() : "none") << ", client default " << default_cursor->describe()
      << (server_cursor == default_cursor ? " (the server shows the default cursor)" : "")
      << "; windows now: client xterm " << describe(find_x_window(cd, tmp.path, kInput)) << ", server xterm "
      << describe(find_x_window(live->display(), tmp.path, kInput)) << "; client display:\n"
      << run_process({"xwininfo", "-display", display, "-root", "-tree"}, tmp.path, 10s).out;

  // Keys typed into the forwarded xterm reach the server's xterm.
  xdotool({"type", "--delay", "60", "hello pixpath"});
  xdotool({"key", "Return"});
  EXPECT_TRUE(eventually([&] { return read_all(typed) == "hello pixpath\n"; }, 10s))
      << "the server's xterm got: '" << read_all(typed) << "'";

  // Closing the xterm's window on the client closes it on the server (and then here).
  send_wm_delete(display, input->xid);
  EXPECT_TRUE(eventually([&] { return !find_x_window(live->display(), tmp.path, kInput); }, 15s))
      << "the server's xterm is still there";
  EXPECT_TRUE(eventually([&] { return !find_x_window(cd, tmp.path, kInput); }, 10s))
      << "the client's window is still there (closed " << input->xid << "); client display:\n"
      << run_process({"xwininfo", "-display", display, "-root", "-tree"}, tmp.path, 10s).out;

  p.signal(SIGINT);
  auto r = p.wait(60s);
  if (HasFailure()) std::fprintf(stderr, "pixpath attach said:\n%s\n", r.err.c_str());
  ASSERT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto s = parse_summary(r);
  EXPECT_EQ(s["all"]["errors"].get<int64_t>(), 0) << s["errors"].dump();
}

INSTANTIATE_TEST_SUITE_P(VersionsAndBackings, X11Attach,
                         ::testing::Values(Case{XpraVersion::V3_1, "x11"}, Case{XpraVersion::V6, "x11"},
                                           Case{XpraVersion::V3_1, "gl-window"}, Case{XpraVersion::V6, "gl-window"}),
                         [](const auto& p) {
                           return std::string(p.param.version == XpraVersion::V6 ? "V6" : "V3_1") + "_" +
                                  (p.param.backing == "x11" ? "x11" : "gl_window");
                         });

}  // namespace
}  // namespace pixpath::testing
