// Xvfb for tests: a private X server on a free display number, started with bounded waits and
// always stopped (TERM, then KILL) by its destructor. Used by the windowed GL tests and the
// windowed attach test.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace pixpath::testing {

inline bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline bool have_program(const char* name) {
  std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// An Xvfb server on its own display, stopped (TERM, then KILL) by the destructor.
class Xvfb {
 public:
  static constexpr int kWidth = 320, kHeight = 240;  // default screen size
  Xvfb() = default;
  Xvfb(int width, int height) : width_(width), height_(height) {}
  int width() const { return width_; }
  int height() const { return height_; }

  // Tries a few free display numbers (another process may take one between the check and
  // Xvfb's start).
  bool start(std::string* why) {
    int next = 150 + getpid() % 400;
    for (int attempt = 0; attempt < 4; ++attempt) {
      display_ = -1;
      for (int n = next; n < 700; ++n) {
        if (path_exists("/tmp/.X11-unix/X" + std::to_string(n)) || path_exists("/tmp/.X" + std::to_string(n) + "-lock")) continue;
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
      std::string screen = std::to_string(width_) + "x" + std::to_string(height_) + "x24";
      execlp("Xvfb", "Xvfb", d.c_str(), "-screen", "0", screen.c_str(), "-nolisten", "tcp", "-noreset",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid_ < 0) return *why = "fork failed", false;
    const std::string socket = "/tmp/.X11-unix/X" + std::to_string(display_);
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10); std::chrono::steady_clock::now() < deadline;) {
      if (path_exists(socket)) return true;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return *why = "Xvfb exited at start", false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
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
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string display() const { return ":" + std::to_string(display_); }

  // The root window as RGB bytes (width() x height()), through xwd and ImageMagick.
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
  int width_ = kWidth, height_ = kHeight;
  int display_ = -1;
  pid_t pid_ = -1;
};

}  // namespace pixpath::testing
