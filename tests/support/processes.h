// Test support: run programs (the pixpath binary, X clients, xwd) with bounded waits.
//
// Child processes get their own process group, stdout/stderr go to files, and every wait has
// a timeout after which the child's group is killed. A BackgroundProcess is killed (group,
// SIGTERM then SIGKILL) when it goes out of scope.
// Threading: one thread owns these objects.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace pixpath::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A temporary directory removed at scope exit (kept when PIXPATH_KEEP_TEST_FILES is set).
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/pixpath-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    if (!std::getenv("PIXPATH_KEEP_TEST_FILES")) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal or timed out
  bool timed_out = false;
  std::string out, err;
};

class BackgroundProcess {
 public:
  // Starts argv[0] (searched in PATH) with extra environment `env`, output to files in `dir`.
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& dir,
                    const std::map<std::string, std::string>& env = {}) {
    static int counter = 0;
    const std::string base = dir + "/proc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    out_path_ = base + ".out";
    err_path_ = base + ".err";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      int o = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int e = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int in = ::open("/dev/null", O_RDONLY);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::dup2(in, 0);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    if (pid_ > 0) ::setpgid(pid_, pid_);
  }
  ~BackgroundProcess() { kill_group(); }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) {
    if (pid_ > 0 && !done_) ::kill(pid_, sig);
  }
  // Waits up to `timeout` for the process to exit; on timeout kills its group.
  ProcessResult wait(std::chrono::milliseconds timeout) {
    ProcessResult r;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done_ && std::chrono::steady_clock::now() < deadline) {
      poll();
      if (!done_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!done_) {
      r.timed_out = true;
      kill_group();
    }
    r.exit_code = status_ >= 0 && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
    r.out = read_text(out_path_);
    r.err = read_text(err_path_);
    return r;
  }
  bool running() {
    poll();
    return !done_;
  }
  void kill_group() {
    if (pid_ <= 0 || done_) return;
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 100 && !done_; ++i) {
      poll();
      if (!done_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!done_) {
      ::kill(-pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
      status_ = st;
      done_ = true;
    }
  }

 private:
  void poll() {
    if (done_ || pid_ <= 0) return;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      status_ = st;
      done_ = true;
      ::kill(-pid_, SIGKILL);  // anything the child left behind in its group
    }
  }
  pid_t pid_ = -1;
  bool done_ = false;
  int status_ = -1;
  std::string out_path_, err_path_;
};

// Runs a command to completion (bounded).
inline ProcessResult run_process(const std::vector<std::string>& argv, const std::string& dir,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                 const std::map<std::string, std::string>& env = {}) {
  BackgroundProcess p(argv, dir, env);
  return p.wait(timeout);
}

// The pixpath binary of this build (PIXPATH_BINARY_DIR, set by ctest).
inline std::string pixpath_binary() {
  const char* dir = std::getenv("PIXPATH_BINARY_DIR");
  return std::string(dir ? dir : "build/default") + "/src/tools/pixpath";
}

inline std::string test_data_dir() {
  const char* dir = std::getenv("PIXPATH_TEST_DATA");
  return dir ? dir : "tests/data";
}

// Lines of `text` (for checking "one-line" errors).
inline int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

}  // namespace pixpath::testing
