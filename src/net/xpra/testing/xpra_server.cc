#include "net/xpra/testing/xpra_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "net/xpra/testing/recording_listener.h"
#include "pixpath/net/xpra/session.h"

namespace pixpath::xpra::testing {
namespace {

Error server_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "start test server", std::move(reason));
}

bool port_accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

bool path_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

Result<int> free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return server_error(ErrorCode::Io, std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = 0;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    int e = errno;
    ::close(fd);
    return server_error(ErrorCode::Io, std::strerror(e));
  }
  ::close(fd);
  return int(ntohs(a.sin_port));
}

Result<int> free_display() {
  std::random_device rd;
  int start = 100 + int(rd() % 800);
  for (int i = 0; i < 800; ++i) {
    int d = 100 + (start - 100 + i) % 800;
    if (!path_exists(fmt::format("/tmp/.X11-unix/X{}", d)) &&
        !path_exists(fmt::format("/tmp/.X{}-lock", d))) {
      return d;
    }
  }
  return server_error(ErrorCode::Unavailable, "no free X display number in 100..899");
}

Result<std::unique_ptr<XpraServer>> XpraServer::start(XpraServerOptions options) {
  std::unique_ptr<XpraServer> s(new XpraServer());
  s->stop_timeout_ = options.stop_timeout;
  char tmpl[] = "/tmp/pixpath-xpra-XXXXXX";
  if (!::mkdtemp(tmpl)) return server_error(ErrorCode::Io, std::strerror(errno));
  s->dir_ = tmpl;
  s->log_path_ = s->dir_ + "/server.log";
  PIXPATH_TRY(s->display_, free_display());
  PIXPATH_TRY(s->port_, free_loopback_port());

  std::vector<std::string> args = {
      "xpra", "start", fmt::format(":{}", s->display_),
      fmt::format("--bind-tcp=127.0.0.1:{}", s->port_), "--daemon=no",
      "--mdns=no", "--pulseaudio=no", "--notifications=no", "--webcam=no", "--speaker=no",
      "--microphone=no", "--printing=no", "--dbus-proxy=no", "--dbus-control=no",
      "--systemd-run=no", "--html=off", "--file-transfer=no", "--open-files=no",
      "--clipboard=no", "--av-sync=no", "--bell=no", "--cursors=no", "--system-tray=no",
      "--exit-with-children=no", "--bind=none",
      fmt::format("--socket-dirs={}", s->dir_), fmt::format("--socket-dir={}", s->dir_),
      fmt::format("--log-dir={}", s->dir_)};
  if (!options.start.empty()) args.push_back("--start=" + options.start);
  if (options.password) {
    s->password_file_ = s->dir_ + "/password";
    std::ofstream(s->password_file_, std::ios::binary) << *options.password;
    args.push_back(fmt::format("--tcp-auth=file:filename={}", s->password_file_));
  }
  for (auto& a : options.extra_args) args.push_back(a);
  // Debugging aid: PIXPATH_XPRA_SERVER_ARGS="-d encoding" adds arguments (split on spaces).
  if (const char* more = std::getenv("PIXPATH_XPRA_SERVER_ARGS")) {
    std::istringstream words(more);
    for (std::string w; words >> w;) args.push_back(w);
  }

  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string runtime = s->dir_ + "/run";
  ::mkdir(runtime.c_str(), 0700);
  pid_t pid = ::fork();
  if (pid < 0) return server_error(ErrorCode::Io, std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // own process group: stop() signals xpra and everything it started
    int fd = ::open(s->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
    ::unsetenv("DBUS_SESSION_BUS_ADDRESS");
    ::unsetenv("DISPLAY");
    for (const auto& [k, v] : options.environment) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp("xpra", argv.data());
    _exit(127);
  }
  ::setpgid(pid, pid);
  s->pid_ = pid;

  auto deadline = std::chrono::steady_clock::now() + options.startup_timeout;
  while (true) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      s->pid_ = -1;
      std::string tail = s->log_tail();
      s->stop();
      return server_error(ErrorCode::Unavailable,
                          fmt::format("xpra exited early (status {}); log:\n{}", status, tail));
    }
    if (port_accepts(s->port_)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::string tail = s->log_tail();
      s->stop();
      return server_error(ErrorCode::Unavailable,
                          fmt::format("port {} not open after {} ms; log:\n{}", s->port_,
                                      options.startup_timeout.count(), tail));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The port opens before the server has loaded its encoders; a client whose hello is parsed
  // in that window gets only rgb (and one asking for png alone is refused). The server
  // answers a hello only after that initialisation, so one probe session that reaches
  // Ready proves the server is fully up.
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    RecordingListener listener;
    SessionOptions o;
    o.url = s->url();
    o.encodings = {"rgb24"};
    o.client_type = "pixpath-probe";
    o.password.literal = options.password.value_or("");
    o.log = [](std::string_view) {};
    auto probe = Session::start(std::move(o), listener);
    if (probe.ok()) {
      listener.set_session(probe->get());
      auto ready = (*probe)->wait_until_ready(std::max(left, std::chrono::milliseconds(1)));
      (void)(*probe)->disconnect("pixpath probe done");
      if (ready.ok()) break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::string tail = s->log_tail();
      s->stop();
      return server_error(ErrorCode::Unavailable,
                          fmt::format("no hello from a probe session within {} ms; log:\n{}",
                                      options.startup_timeout.count(), tail));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return s;
}

XpraServer::~XpraServer() { stop(); }

std::string XpraServer::url() const { return fmt::format("tcp://127.0.0.1:{}/", port_); }

std::string XpraServer::log_tail(size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

bool XpraServer::log_contains(std::string_view text) const {
  return log_tail(SIZE_MAX).find(text) != std::string::npos;
}

void XpraServer::stop() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + stop_timeout_;
    bool reaped = false;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!reaped) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    // Anything of the group still alive (Xvfb, xterm) goes too.
    ::kill(-pid_, SIGKILL);
    pid_ = -1;
  }
  if (display_ > 0) {
    // Xvfb may have left the group; its lock file names its pid.
    std::ifstream lock(fmt::format("/tmp/.X{}-lock", display_));
    long xpid = 0;
    if (lock >> xpid && xpid > 1) {
      if (::kill(pid_t(xpid), 0) == 0) {
        ::kill(pid_t(xpid), SIGTERM);
        for (int i = 0; i < 40 && ::kill(pid_t(xpid), 0) == 0; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (::kill(pid_t(xpid), 0) == 0) ::kill(pid_t(xpid), SIGKILL);
      }
    }
  }
  if (!dir_.empty() && !std::getenv("PIXPATH_KEEP_XPRA_LOGS")) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

}  // namespace pixpath::xpra::testing
