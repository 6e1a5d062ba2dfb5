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
#include <string>
#include <thread>
#include <vector>

#include "pixpath/gl/gl_backing.h"
#include "pixpath/gl/gl_context.h"
#include "pixpath/gl/gl_window.h"

namespace pixpath::gl {
namespace {

using namespace std::chrono_literals;

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool have_program(const char* name) {
  std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// An Xvfb server on its own display, stopped (TERM, then KILL) by the destructor.
class Xvfb {
 public:
  static constexpr int kWidth = 320, kHeight = 240;

  // Tries a few free display numbers (another process may take one between the check and
  // Xvfb's start).
  bool start(std::string* why) {
    int next = 150 + getpid() % 200;
    for (int attempt = 0; attempt < 4; ++attempt) {
      display_ = -1;
      for (int n = next; n < 700; ++n) {
        if (exists("/tmp/.X11-unix/X" + std::to_string(n)) || exists("/tmp/.X" + std::to_string(n) + "-lock")) continue;
        display_ = n;
        break;
      }
      if (display_ < 0) return *why = "no free display number", false;
      next = display_ + 1;
      if (start_on_display(why)) return true;
    }
    return false;
  }

  bool start_on_display(std::string* why) {
    pid_ = fork();
    if (pid_ == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      std::string d = ":" + std::to_string(display_);
      std::string screen = std::to_string(kWidth) + "x" + std::to_string(kHeight) + "x24";
      execlp("Xvfb", "Xvfb", d.c_str(), "-screen", "0", screen.c_str(), "-nolisten", "tcp", "-noreset",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid_ < 0) return *why = "fork failed", false;
    const std::string socket = "/tmp/.X11-unix/X" + std::to_string(display_);
    for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
      if (exists(socket)) return true;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return *why = "Xvfb exited at start", false;
      }
      std::this_thread::sleep_for(50ms);
    }
    stop();
    return *why = "Xvfb did not create its socket within 10 s", false;
  }

  ~Xvfb() { stop(); }

  // TERM, up to 2 s, then KILL; always reaps.
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string display() const { return ":" + std::to_string(display_); }

  // The root window as RGB bytes (kWidth x kHeight), through xwd and ImageMagick.
  std::vector<uint8_t> screenshot() const {
    const std::string base = "/tmp/pixpath_xvfb_" + std::to_string(getpid());
    const std::string cmd = "timeout 20 xwd -root -silent -display " + display() + " > " + base +
                            ".xwd && timeout 20 convert xwd:" + base + ".xwd -depth 8 rgb:" + base + ".rgb";
    std::vector<uint8_t> out;
    if (std::system(cmd.c_str()) == 0) {
      std::ifstream f(base + ".rgb", std::ios::binary);
      out.assign(std::istreambuf_iterator<char>(f), {});
    }
    std::remove((base + ".xwd").c_str());
    std::remove((base + ".rgb").c_str());
    return out;
  }

 private:
  int display_ = -1;
  pid_t pid_ = -1;
};

TEST(GlXvfbTest, PresentedWindowMatchesReadback) {
  for (const char* p : {"Xvfb", "xwd", "convert"}) {
    if (!have_program(p)) GTEST_SKIP() << p << " is not installed";
  }
  Xvfb x;
  std::string why;
  ASSERT_TRUE(x.start(&why)) << why;
  const char* old_display = std::getenv("DISPLAY");
  const std::string saved = old_display ? old_display : "";
  setenv("DISPLAY", x.display().c_str(), 1);
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
  if (old_display) {
    setenv("DISPLAY", saved.c_str(), 1);
  } else {
    unsetenv("DISPLAY");
  }
}

}  // namespace
}  // namespace pixpath::gl
