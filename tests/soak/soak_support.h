// What the soak tests share: their run time (PIXPATH_SOAK_SECONDS, PIXPATH_SOAK_SHORT_SECONDS),
// resident memory, and X clients started on the server's display and killed by pid (never
// by name).
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace pixpath::soak {

// Seconds for one case. PIXPATH_SOAK_SECONDS (the user's, per case) wins over
// PIXPATH_SOAK_SHORT_SECONDS (ctest's short form: the total for all `cases`, split evenly).
inline int soak_seconds(int cases) {
  if (const char* s = std::getenv("PIXPATH_SOAK_SECONDS")) return std::max(5, std::atoi(s));
  if (const char* s = std::getenv("PIXPATH_SOAK_SHORT_SECONDS")) return std::max(5, std::atoi(s) / cases);
  return 600;
}

inline double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// tick() starts the next client (argv from make_argv(n), n = 0, 1, ...), first killing the
// oldest when `max_alive` run; the destructor kills the rest.
class ProcessChurn {
 public:
  ProcessChurn(int display, std::function<std::vector<std::string>(int)> make_argv, size_t max_alive)
      : display_(":" + std::to_string(display)), make_argv_(std::move(make_argv)), max_alive_(max_alive) {}
  ~ProcessChurn() {
    while (!alive_.empty()) kill_oldest();
  }
  ProcessChurn(const ProcessChurn&) = delete;
  ProcessChurn& operator=(const ProcessChurn&) = delete;

  void tick() {
    if (alive_.size() >= max_alive_) kill_oldest();
    std::vector<std::string> args = make_argv_(n_++);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
      if (std::string_view(*e).substr(0, 8) != "DISPLAY=") env_s.emplace_back(*e);
    }
    env_s.push_back("DISPLAY=" + display_);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()) == 0) {
      alive_.push_back(pid);
      started_++;
    }
  }
  int started() const { return started_; }

 private:
  void kill_oldest() {
    pid_t pid = alive_.front();
    alive_.pop_front();
    ::kill(pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 50 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20000);
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  std::string display_;
  std::function<std::vector<std::string>(int)> make_argv_;
  size_t max_alive_;
  std::deque<pid_t> alive_;
  int n_ = 0, started_ = 0;
};

}  // namespace pixpath::soak
