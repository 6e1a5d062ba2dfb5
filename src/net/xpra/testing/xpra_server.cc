#include "net/xpra/testing/xpra_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

const char* xpra_version_name(XpraVersion v) { return v == XpraVersion::V6 ? "6.5.5" : "3.1"; }

std::string xpra6_prefix() {
  const char* p = std::getenv("PIXPATH_XPRA6_PREFIX");
  return p && *p ? std::string(p) : std::string("/opt/pixpath-xpra6");
}

std::string xpra_command(XpraVersion v) {
  return v == XpraVersion::V6 ? xpra6_prefix() + "/bin/xpra" : std::string("xpra");
}

Result<void> xpra_available(XpraVersion v) {
  if (v == XpraVersion::V6) {
    const std::string prefix = xpra6_prefix();
    if (::access((prefix + "/bin/xpra").c_str(), X_OK) != 0) {
      return server_error(ErrorCode::Unavailable,
                          fmt::format("xpra 6.5.5 is not installed: no {}/bin/xpra (scripts/setup-xpra6 "
                                      "builds it; PIXPATH_XPRA6_PREFIX names another prefix)",
                                      prefix));
    }
    if (!path_exists(prefix + "/etc/xpra/xpra.conf")) {
      return server_error(ErrorCode::Unavailable,
                          fmt::format("xpra 6.5.5 in {} has no etc/xpra/xpra.conf (rerun scripts/setup-xpra6)",
                                      prefix));
    }
    return {};
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    if (!d.empty() && ::access((d + "/xpra").c_str(), X_OK) == 0) return {};
  }
  return server_error(ErrorCode::Unavailable,
                      "xpra 3.1 is not installed: no xpra on PATH (scripts/setup installs Debian's)");
}

namespace {

// The command line of one server version. 6.x refuses some 3.1 switches and needs others
// (audio, dbus, splash, tray): both lists were checked against the real servers.
std::vector<std::string> version_args(XpraVersion v) {
  std::vector<std::string> a = {
      "--daemon=no", "--mdns=no", "--pulseaudio=no", "--notifications=no", "--webcam=no",
      "--printing=no", "--dbus-control=no", "--systemd-run=no", "--html=off",
      "--file-transfer=no", "--open-files=no", "--clipboard=no", "--av-sync=no", "--bell=no",
      "--cursors=no", "--system-tray=no", "--exit-with-children=no"};
  if (v == XpraVersion::V6) {
    for (const char* x : {"--audio=no", "--speaker=disabled", "--microphone=disabled", "--dbus=no",
                          "--dbus-launch=", "--splash=no", "--tray=no", "--opengl=no"}) {
      a.push_back(x);
    }
  } else {
    // --start-new-commands=no: 3.1 then skips loading the xdg application menus. With
    // python3-xdg present (scripts/setup-xpra6 installs it for 6.x) 3.1 parses them at start,
    // and one CI dry run saw it crash there (exit status 11 after "Error parsing xdg menu
    // data"); a test server needs no start menu.
    for (const char* x : {"--speaker=no", "--microphone=no", "--dbus-proxy=no", "--start-new-commands=no"})
      a.push_back(x);
  }
  return a;
}

// Can a client connect to this unix socket now?
bool unix_socket_accepts(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    ::close(fd);
    return false;
  }
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

// Display numbers and ports are picked free but not reserved: a test running beside this one
// can take the same one before xpra binds it. Those starts are retried with fresh ones; every
// other failure is returned at once.
static bool lost_a_race(const Error& e) {
  const std::string m = e.message();
  for (const char* sign : {"Address already in use", "already active for display", "Server is already active",
                           "server already running", "SocketCreateListener() failed", "_XSERVTransMakeAllCOTSServerListeners",
                           "another X server"})
    if (m.find(sign) != std::string::npos) return true;
  return false;
}

Result<std::unique_ptr<XpraServer>> XpraServer::start(XpraServerOptions options) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    auto s = start_once(options);
    if (s.ok() || attempt == kAttempts || !lost_a_race(s.error())) return s;
    std::fprintf(stderr, "xpra test server: display or port taken meanwhile (attempt %d of %d), again: %s\n",
                 attempt, kAttempts, s.error().reason().substr(0, 200).c_str());
  }
}

Result<std::unique_ptr<XpraServer>> XpraServer::start_once(const XpraServerOptions& options) {
  PIXPATH_CHECK(xpra_available(options.version));
  if (!options.bind_tcp && !options.bind_unix) {
    return server_error(ErrorCode::InvalidArgument, "neither bind_tcp nor bind_unix: nothing to connect to");
  }
  if (options.password && !options.bind_tcp) {
    return server_error(ErrorCode::InvalidArgument, "a password protects the TCP socket: set bind_tcp");
  }
  std::unique_ptr<XpraServer> s(new XpraServer());
  s->version_ = options.version;
  s->stop_timeout_ = options.stop_timeout;
  char tmpl[] = "/tmp/pixpath-xpra-XXXXXX";
  if (!::mkdtemp(tmpl)) return server_error(ErrorCode::Io, std::strerror(errno));
  s->dir_ = tmpl;
  s->log_path_ = s->dir_ + "/server.log";
  PIXPATH_TRY(s->display_, free_display());
  if (options.bind_tcp) {
    PIXPATH_TRY(s->port_, free_loopback_port());
  }
  if ((options.bind_ssl || options.bind_wss) && (options.ssl_cert.empty() || options.ssl_key.empty()))
    return server_error(ErrorCode::InvalidArgument, "bind_ssl / bind_wss need ssl_cert and ssl_key");
  if (options.bind_ssl) {
    PIXPATH_TRY(s->ssl_port_, free_loopback_port());
  }
  if (options.bind_ws) {
    PIXPATH_TRY(s->ws_port_, free_loopback_port());
  }
  if (options.bind_wss) {
    PIXPATH_TRY(s->wss_port_, free_loopback_port());
  }
  const bool v6 = options.version == XpraVersion::V6;
  const std::string command = xpra_command(options.version);

  std::vector<std::string> args = {command, "start", fmt::format(":{}", s->display_)};
  for (auto& a : version_args(options.version)) args.push_back(std::move(a));
  if (options.bind_tcp) args.push_back(fmt::format("--bind-tcp=127.0.0.1:{}", s->port_));
  if (options.bind_unix) {
    s->socket_path_ = s->dir_ + "/server.sock";
    args.push_back("--bind=" + s->socket_path_);
  } else {
    args.push_back(options.bind_auto ? "--bind=auto" : "--bind=none");
  }
  args.push_back(fmt::format("--socket-dirs={}", s->dir_));
  args.push_back(fmt::format("--socket-dir={}", s->dir_));
  args.push_back(fmt::format("--log-dir={}", s->dir_));
  if (options.bind_ssl) args.push_back(fmt::format("--bind-ssl=127.0.0.1:{}", s->ssl_port_));
  if (options.bind_ws) args.push_back(fmt::format("--bind-ws=127.0.0.1:{}", s->ws_port_));
  if (options.bind_wss) args.push_back(fmt::format("--bind-wss=127.0.0.1:{}", s->wss_port_));
  if (!options.ssl_cert.empty()) {
    args.push_back("--ssl-cert=" + options.ssl_cert);
    args.push_back("--ssl-key=" + options.ssl_key);
  }
  if (!v6 && (options.bind_ws || options.bind_wss)) {
    const std::string www = s->dir_ + "/www";
    ::mkdir(www.c_str(), 0700);
    args.push_back("--html=" + www);
  }
  if (!options.start.empty()) args.push_back("--start=" + options.start);
  if (!options.encoding.empty()) args.push_back("--encoding=" + options.encoding);
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
  // Prepared before fork: the child only calls async-signal-safe functions and setenv.
  const std::string conf_dirs = xpra6_prefix() + "/etc/xpra";
  const char* old_path = std::getenv("PATH");
  const std::string path6 = xpra6_prefix() + "/bin:" + (old_path ? old_path : "/usr/bin:/bin");
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
    if (v6) {
      // Its own configuration only: Debian 3.1's /etc/xpra/conf.d limits the packet
      // encoders to ones 6.x does not have. Its own bin first: the server runs `xpra` helpers.
      ::setenv("XPRA_SYSTEM_CONF_DIRS", conf_dirs.c_str(), 1);
      ::setenv("PATH", path6.c_str(), 1);
    }
    for (const auto& [k, v] : options.environment) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(argv[0], argv.data());
    _exit(127);
  }
  ::setpgid(pid, pid);
  s->pid_ = pid;

  auto deadline = std::chrono::steady_clock::now() + options.startup_timeout;
  auto fail = [&](std::string what) -> Error {
    std::string tail = s->log_tail();
    s->stop();
    return server_error(ErrorCode::Unavailable,
                        fmt::format("xpra {}: {}; log:\n{}", xpra_version_name(options.version), what, tail));
  };
  // 3.1 over TCP: a probe session proves it (see below). Otherwise the log line.
  const bool probe_session = !v6 && options.bind_tcp;
  while (true) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      s->pid_ = -1;
      return fail(fmt::format("exited early (status {})", status));
    }
    bool up = (!options.bind_tcp || port_accepts(s->port_)) &&
              (!options.bind_ssl || port_accepts(s->ssl_port_)) &&
              (!options.bind_ws || port_accepts(s->ws_port_)) &&
              (!options.bind_wss || port_accepts(s->wss_port_)) &&
              (!options.bind_unix || unix_socket_accepts(s->socket_path_)) &&
              (probe_session || s->log_contains("xpra is ready."));
    if (up) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return fail(fmt::format("not ready after {} ms (tcp port {}, unix socket '{}')",
                              options.startup_timeout.count(), s->port_, s->socket_path_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!probe_session) return s;
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
      return fail(fmt::format("no hello from a probe session within {} ms", options.startup_timeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return s;
}

XpraServer::~XpraServer() { stop(); }

std::string XpraServer::url() const { return fmt::format("tcp://127.0.0.1:{}/", port_); }
std::string XpraServer::ssl_url() const { return fmt::format("ssl://127.0.0.1:{}/", ssl_port_); }
std::string XpraServer::ws_url() const { return fmt::format("ws://127.0.0.1:{}/", ws_port_); }
std::string XpraServer::wss_url() const { return fmt::format("wss://127.0.0.1:{}/", wss_port_); }

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

std::string XpraServer::unexpected_tracebacks() const {
  return ::pixpath::xpra::testing::unexpected_tracebacks(log_tail(SIZE_MAX));
}

namespace {

// "2026-12-06 21:10:36,085 ...": a log line, which another thread of the server may write in
// the middle of a traceback.
bool timestamped(std::string_view line) {
  if (line.size() < 20) return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
    if (line[i] < '0' || line[i] > '9') return false;
  return line[4] == '-' && line[7] == '-' && line[10] == ' ' && line[13] == ':' && line[16] == ':';
}

bool known_xpra_race(std::string_view traceback) {
  return traceback.find("in _keys_changed") != std::string_view::npos &&
         traceback.find("RuntimeError: dictionary changed size during iteration") != std::string_view::npos;
}

}  // namespace

std::string unexpected_tracebacks(std::string_view log) {
  constexpr std::string_view kStart = "Traceback (most recent call last):";
  std::string out;
  for (size_t at = log.find(kStart); at != std::string_view::npos; at = log.find(kStart, at + 1)) {
    // The frames are indented; the first line that is not ends the traceback (its exception
    // line), unless it is another thread's log line with more frames after it.
    size_t end = log.find('\n', at);
    std::string interleaved;
    while (end != std::string_view::npos && end + 1 < log.size()) {
      if (log[end + 1] == ' ') {
        end = log.find('\n', end + 1);
        continue;
      }
      const size_t next = log.find('\n', end + 1);
      const std::string_view line = log.substr(end + 1, next == log.npos ? log.npos : next - end - 1);
      if (!timestamped(line) || next == log.npos || next + 1 >= log.size() || log[next + 1] != ' ') break;
      interleaved.append(log.substr(at, end + 1 - at));  // the traceback so far, without the line
      at = next + 1;
      end = next;
    }
    if (end != std::string_view::npos) end = log.find('\n', end + 1);  // the exception line
    const std::string tb = interleaved + std::string(log.substr(at, end == std::string_view::npos ? log.npos : end - at));
    if (!known_xpra_race(tb)) {
      out += tb;
      out += '\n';
    }
  }
  return out;
}

bool XpraServer::started_by_this_server(pid_t pid) const {
  if (dir_.empty()) return false;
  std::ifstream f(fmt::format("/proc/{}/environ", pid), std::ios::binary);
  const std::string mine = "XDG_RUNTIME_DIR=" + dir_ + "/run";
  for (std::string var; std::getline(f, var, '\0');)
    if (var == mine) return true;
  return false;
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
    // Xvfb may have left the group; its lock file names its pid. Only this server's Xvfb
    // (it inherited the runtime folder made for this server) is signalled: once ours is gone,
    // a test running beside this one may hold the display number and its lock file.
    std::ifstream lock(fmt::format("/tmp/.X{}-lock", display_));
    long xpid = 0;
    if (lock >> xpid && xpid > 1 && started_by_this_server(pid_t(xpid))) {
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
