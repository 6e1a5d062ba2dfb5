// Windowed painting under Xvfb: a GlWindow on the X11 platform is presented into an X window,
// a screenshot of the X display (xwd -root, converted by ImageMagick) must show exactly the
// pixels the window texture reads back. Starts its own Xvfb on a free display with bounded
// waits and always stops it.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pixpath/gl/gl_backing.h"
#include "pixpath/gl/gl_context.h"
#include "pixpath/gl/gl_window.h"
#include "support/xvfb.h"

namespace pixpath::gl {
namespace {

using namespace std::chrono_literals;

using testing::have_program;
using testing::Xvfb;

// DISPLAY set to `display` for the scope, restored (or unset) after, an early ASSERT too.
class ScopedDisplay {
 public:
  explicit ScopedDisplay(const std::string& display) {
    if (const char* old = std::getenv("DISPLAY")) saved_ = old;
    setenv("DISPLAY", display.c_str(), 1);
  }
  ~ScopedDisplay() {
    if (saved_) {
      setenv("DISPLAY", saved_->c_str(), 1);
    } else {
      unsetenv("DISPLAY");
    }
  }
  ScopedDisplay(const ScopedDisplay&) = delete;
  ScopedDisplay& operator=(const ScopedDisplay&) = delete;

 private:
  std::optional<std::string> saved_;
};


TEST(GlXvfbTest, PresentedWindowMatchesReadback) {
  for (const char* p : {"Xvfb", "xwd", "convert"}) {
    if (!have_program(p)) GTEST_SKIP() << p << " is not installed";
  }
  Xvfb x;
  std::string why;
  ASSERT_TRUE(x.start(&why)) << why;
  const ScopedDisplay on_xvfb(x.display());
  {
    GlContextOptions co;
    co.platform = GlPlatform::X11;
    auto ctx = GlContext::create(co);
    ASSERT_TRUE(ctx.ok()) << ctx.error().message();
    std::printf("X11 platform: renderer %s, %s\n", (*ctx)->info().renderer.c_str(), (*ctx)->info().version.c_str());
    GlWindowOptions wo;
    wo.windowed = true;
    wo.screen_x = 0;
    wo.screen_y = 0;
    const int w = 120, h = 90;
    auto win = GlWindow::create(*ctx, w, h, wo);
    ASSERT_TRUE(win.ok()) << win.error().message();
    ASSERT_TRUE((*win)->windowed());
    // Content: a BGRX picture through a mapped buffer, YUV in a corner, a scroll.
    auto slot = (*win)->begin_upload(PixelFormat::BGRX, w, h);
    ASSERT_TRUE(slot.ok());
    for (int y = 0; y < h; ++y) {
      uint8_t* row = slot->view().planes[0].unchecked_row(y);
      for (int i = 0; i < w; ++i) {
        row[4 * i] = uint8_t(i * 2), row[4 * i + 1] = uint8_t(y * 2), row[4 * i + 2] = uint8_t((i ^ y) * 3);
        row[4 * i + 3] = 0;
      }
    }
    ASSERT_TRUE((*win)->paint(std::move(*slot), {}).ok());
    auto yuv = Picture::allocate(PixelFormat::YUV420P, 20, 20);
    auto yv = yuv->write();
    for (int p = 0; p < 3; ++p)
      for (int y = 0; y < yv->planes[size_t(p)].height; ++y)
        for (int i = 0; i < yv->planes[size_t(p)].width; ++i) yv->planes[size_t(p)].unchecked_row(y)[i] = uint8_t(60 + p * 50 + i + y);
    ASSERT_TRUE((*win)->paint(*yuv, {.x = 90, .y = 60}).ok());
    const ScrollRect r[] = {{0, 10, 60, 40, 0, -5}};
    ASSERT_TRUE((*win)->scroll(r).ok());
    auto back = (*win)->readback(PixelFormat::RGBA);
    ASSERT_TRUE(back.ok());
    auto bv = back->read();

    // The X server shows the window once it is mapped: present and look, within bounds.
    int bad = -1;
    std::string first;
    for (int attempt = 0; attempt < 20 && bad != 0; ++attempt) {
      ASSERT_TRUE((*win)->present().ok());
      std::this_thread::sleep_for(100ms);
      auto shot = x.screenshot();
      ASSERT_EQ(shot.size(), size_t(Xvfb::kWidth) * Xvfb::kHeight * 3) << "screenshot failed";
      bad = 0;
      for (int y = 0; y < h; ++y) {
        for (int i = 0; i < w; ++i) {
          const uint8_t* s = &shot[(size_t(y) * Xvfb::kWidth + size_t(i)) * 3];
          const uint8_t* g = bv->planes[0].unchecked_row(y) + 4 * i;
          if (s[0] != g[0] || s[1] != g[1] || s[2] != g[2]) {
            if (bad++ == 0) {
              first = "(" + std::to_string(i) + "," + std::to_string(y) + ") screen " + std::to_string(s[0]) + "," +
                      std::to_string(s[1]) + "," + std::to_string(s[2]) + " texture " + std::to_string(g[0]) + "," +
                      std::to_string(g[1]) + "," + std::to_string(g[2]);
            }
          }
        }
      }
    }
    EXPECT_EQ(bad, 0) << "screen differs from the readback, first at " << first;

    // The backing on X11 as the paint engine would use it: presents after each change.
    GlBackingOptions bo;
    bo.shared_context = *ctx;
    bo.windowed = true;
    auto backing = GlBacking::create(bo);
    ASSERT_TRUE(backing.ok()) << backing.error().message();
    ASSERT_TRUE((*backing)->create_window(2, 40, 30).ok());
    ASSERT_TRUE((*backing)->resize_window(2, 60, 50).ok());
  }
}

// The user's input on a windowed GlBacking (what attach forwards to the server): a window placed
// where the hints say; a click, a key and a resize made with xdotool arrive as WindowEvents with
// X button numbers, window and root coordinates, the X keycode, and the new size.
TEST(GlXvfbTest, WindowedBackingReportsInput) {
  for (const char* p : {"Xvfb", "xdotool"}) {
    if (!have_program(p)) GTEST_SKIP() << p << " is not installed";
  }
  Xvfb x;
  std::string why;
  ASSERT_TRUE(x.start(&why)) << why;
  const ScopedDisplay on_xvfb(x.display());
  {
    GlBackingOptions bo;
    bo.windowed = true;
    bo.hints = [](int64_t wid) -> std::optional<paint::WindowHints> {
      return paint::WindowHints{50, 40, false, "pixpath-input-" + std::to_string(wid)};
    };
    auto backing = GlBacking::create(bo);
    ASSERT_TRUE(backing.ok()) << backing.error().message();
    GlBacking& b = **backing;
    ASSERT_TRUE(b.create_window(7, 120, 90).ok());
    ASSERT_TRUE(b.has_native_window(7));
    ASSERT_GE(b.event_fd(), 0);
    std::vector<paint::WindowEvent> seen;
    auto wait_for = [&](auto&& pred, int rounds = 100) {
      for (int i = 0; i < rounds; ++i) {
        auto events = b.poll_events();
        EXPECT_TRUE(events.ok());
        if (events.ok()) seen.insert(seen.end(), events->begin(), events->end());
        for (const auto& e : seen)
          if (pred(e)) return true;
        std::this_thread::sleep_for(50ms);
      }
      return false;
    };
    auto xdotool = [&](const std::string& args) {
      const std::string cmd = "xdotool " + args + " >/dev/null 2>&1";
      EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    };
    (void)b.poll_events();  // mapped, exposed
    xdotool("mousemove --sync 60 52 click 1");
    EXPECT_TRUE(wait_for([](const paint::WindowEvent& e) {
      return e.kind == paint::EventKind::Button && e.wid == 7 && e.button == 1 && e.pressed && e.x == 10 &&
             e.y == 12 && e.root_x == 60 && e.root_y == 52;
    })) << "no press of button 1 at (10, 12) in the window placed at (50, 40)";
    EXPECT_TRUE(wait_for([](const paint::WindowEvent& e) {
      return e.kind == paint::EventKind::Button && e.button == 1 && !e.pressed;
    }));
    xdotool("key --delay 20 shift+a");
    EXPECT_TRUE(wait_for([](const paint::WindowEvent& e) {
      return e.kind == paint::EventKind::Key && e.wid == 7 && e.pressed && e.keycode > 8 && (e.state & 1) &&
             e.modifiers == std::vector<std::string>{"shift"};
    })) << "no key press with shift held";
    xdotool("click 5");  // the wheel, down
    EXPECT_TRUE(wait_for([](const paint::WindowEvent& e) {
      return e.kind == paint::EventKind::Button && e.button == 5 && e.pressed;
    }));
    xdotool("search --name pixpath-input-7 windowsize --sync 150 100");
    EXPECT_TRUE(wait_for([](const paint::WindowEvent& e) {
      return e.kind == paint::EventKind::Configure && e.wid == 7 && e.w == 150 && e.h == 100 && e.root_x == 50 &&
             e.root_y == 40;
    })) << "no Configure for the user's resize";
    // The server moving it is no user action: no Configure event for it.
    ASSERT_TRUE(b.move_window(7, 200, 100).ok());
    ASSERT_TRUE(b.raise_window(7).ok());
    ASSERT_TRUE(b.set_title(7, "renamed").ok());
    seen.clear();
    EXPECT_FALSE(wait_for([](const paint::WindowEvent& e) { return e.kind == paint::EventKind::Configure; }, 10));
  }
}

}  // namespace
}  // namespace pixpath::gl
