#include "pixpath/net/xpra/ssh_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

static_assert(std::is_same_v<pid_t, int>, "SshTransport keeps the child's pid as an int");

namespace pixpath::xpra {
namespace {

Error ssh_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "ssh", std::move(reason));
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "ended";
}

}  // namespace

Result<std::vector<std::string>> split_command(std::string_view s) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 < s.size()) word += s[++i];
      continue;
    }
    if (c == '\'') {
      const size_t close = s.find('\'', i + 1);
      if (close == std::string_view::npos)
        return Error(ErrorCode::InvalidArgument, "xpra", "ssh command",
                     fmt::format("'{}': no closing quotation", s));
      word.append(s.substr(i + 1, close - i - 1));
      i = close;
      continue;
    }
    if (c == '"') {
      size_t j = i + 1;
      for (; j < s.size() && s[j] != '"'; ++j) {
        if (s[j] == '\\' && j + 1 < s.size() && std::strchr("\"\\$`\n", s[j + 1])) ++j;
        word += s[j];
      }
      if (j >= s.size())
        return Error(ErrorCode::InvalidArgument, "xpra", "ssh command",
                     fmt::format("'{}': no closing quotation", s));
      i = j;
      continue;
    }
    word += c;
  }
  if (in_word) words.push_back(word);
  if (words.empty())
    return Error(ErrorCode::InvalidArgument, "xpra", "ssh command", "the ssh command is empty");
  return words;
}

Result<std::string> remote_proxy_command(const SshOptions& o, int display) {
  if (o.remote_xpra.empty())
    return Error(ErrorCode::InvalidArgument, "xpra", "ssh command", "no remote xpra command given");
  auto bad = [](const std::string& v) {
    return v.empty() || v.find_first_of("'\n;&|<>`") != std::string::npos;
  };
  if (!o.socket_dir.empty() && (bad(o.socket_dir) || o.socket_dir.find(' ') != std::string::npos))
    return Error(ErrorCode::InvalidArgument, "xpra", "ssh command",
                 fmt::format("the socket dir '{}' has characters the remote shell would change", o.socket_dir));
  std::string cmd;
  for (const std::string& x : o.remote_xpra) {
    if (bad(x) || x.find(' ') != std::string::npos)
      return Error(ErrorCode::InvalidArgument, "xpra", "ssh command",
                   fmt::format("the remote xpra '{}' has characters the remote shell would change", x));
    const char* check = cmd.empty() ? "if" : "elif";
    // As xpra 6: a bare name is looked up on the remote PATH, a path must be executable.
    cmd += x == "xpra" ? fmt::format("{} command -v \"{}\" > /dev/null 2>&1; then", check, x)
                       : fmt::format("{} [ -x {} ]; then", check, x);
    cmd += " " + x + " _proxy";
    if (display >= 0) cmd += fmt::format(" :{}", display);
    if (!o.socket_dir.empty()) cmd += " --socket-dir=" + o.socket_dir;
    cmd += ";";
  }
  cmd += "else echo \"no xpra command found\"; exit 1; fi";
  return "sh -c '" + cmd + "'";
}

Result<std::vector<std::string>> ssh_argv(const Endpoint& e, const SshOptions& o) {
  if (e.scheme != Scheme::Ssh)
    return Error(ErrorCode::InvalidArgument, "xpra", "ssh", "not an ssh:// endpoint");
  PIXPATH_TRY(auto argv, split_command(o.command == "auto" ? "ssh -x" : o.command));
  if (argv.front() == "paramiko" || argv.front().starts_with("paramiko:"))
    return Error(ErrorCode::Unsupported, "xpra", "ssh command",
                 "paramiko is xpra's built-in ssh client; pixpath runs the system's ssh "
                 "(--ssh \"ssh [OPTIONS]\")");
  if (!e.username.empty()) {
    argv.push_back("-l");
    argv.push_back(e.username);
  }
  if (e.port != 22 && e.port != 0) {
    argv.push_back("-p");
    argv.push_back(std::to_string(e.port));
  }
  argv.push_back("-T");
  argv.push_back(e.host);
  PIXPATH_TRY(auto remote, remote_proxy_command(o, e.display));
  argv.push_back(std::move(remote));
  return argv;
}

Result<std::unique_ptr<SshTransport>> SshTransport::start(const Endpoint& e, const SshOptions& o,
                                                          std::chrono::milliseconds send_timeout) {
  PIXPATH_TRY(auto argv, ssh_argv(e, o));
  return start_argv(std::move(argv), "ssh " + to_url(e), send_timeout);
}

Result<std::unique_ptr<SshTransport>> SshTransport::start_argv(std::vector<std::string> argv,
                                                               std::string what,
                                                               std::chrono::milliseconds send_timeout) {
  if (argv.empty()) return ssh_error(ErrorCode::InvalidArgument, "empty command");
  int in[2], out[2], err[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
    return ssh_error(ErrorCode::Io, std::strerror(errno));
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) != 0) {
    const int e = errno;
    ::close(in[0]), ::close(in[1]);
    return ssh_error(ErrorCode::Io, std::strerror(e));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return ssh_error(ErrorCode::Io, std::strerror(e));
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    return ssh_error(ErrorCode::Io, fmt::format("cannot start {}: {}", argv.front(), std::strerror(e)));
  }
  if (pid == 0) {
    // Own process group: a Ctrl-C on the terminal reaches pixpath, which ends the session
    // cleanly; the terminal stays for ssh's prompts.
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in[1], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvp(args[0], args.data());
    const std::string msg = fmt::format("cannot run '{}': {}\n", args[0], std::strerror(errno));
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(in[1]);
  ::close(out[1]);
  ::close(err[1]);
  for (int fd : {in[0], out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::string description = fmt::format("{} (pid {})", what, pid);
  return std::unique_ptr<SshTransport>(
      new SshTransport(pid, in[0], out[0], err[0], std::move(description), send_timeout));
}

SshTransport::~SshTransport() {
  ::close(in_);  // ssh sees the end of its input and ends the remote command
  ::close(out_);
  if (reap(std::chrono::milliseconds(1000)) < 0) {
    ::kill(-pid_, SIGTERM);
    if (reap(std::chrono::milliseconds(2000)) < 0) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
    }
  }
  if (err_ >= 0) ::close(err_);
}

int SshTransport::reap(std::chrono::milliseconds wait) {
  if (reaped_) return exit_status_;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      reaped_ = true;
      exit_status_ = r == pid_ ? status : 0;
      return exit_status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void SshTransport::drain_stderr() {
  if (err_ < 0) return;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(err_, buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, size_t(n));
      if (stderr_tail_.size() > 2048) stderr_tail_.erase(0, stderr_tail_.size() - 2048);
      continue;
    }
    if (n == 0) {
      ::close(err_);
      err_ = -1;
    }
    return;  // EAGAIN, or an error: nothing more now
  }
}

std::string SshTransport::failure(std::string_view what) {
  drain_stderr();
  std::string s = fmt::format("{}: {}", description_, what);
  const std::string said = printable(stderr_tail_);
  if (!said.empty()) s += fmt::format("; ssh said: '{}'", said);
  return s;
}

Result<void> SshTransport::send_all(std::span<const uint8_t> bytes) {
  MutexLock lock(send_mu_);
  const auto deadline = std::chrono::steady_clock::now() + send_timeout_;
  size_t done = 0;
  while (done < bytes.size()) {
    if (send_closed_.load()) return ssh_error(ErrorCode::Cancelled, "send: connection is closed");
    const ssize_t n = ::send(in_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{in_, POLLOUT, 0};
      if (left.count() <= 0 || (::poll(&p, 1, int(left.count())) == 0)) {
        send_closed_ = true;
        return ssh_error(ErrorCode::Io, fmt::format("{}: send: ssh did not read for the send timeout",
                                                    description_));
      }
      continue;
    }
    send_closed_ = true;
    return ssh_error(ErrorCode::Io, fmt::format("{}: send: {} (ssh has ended?)", description_,
                                                std::strerror(errno)));
  }
  return {};
}

Result<Transport::ReadResult> SshTransport::read_some(std::span<uint8_t> buffer,
                                                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (closed_.load()) return ReadResult{0, true};
    if (!pending_.empty()) {
      const size_t n = std::min(buffer.size(), pending_.size());
      std::memcpy(buffer.data(), pending_.data(), n);
      pending_.erase(0, n);
      bytes_read_ += n;
      return ReadResult{n, false};
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int n = ::poll(p, err_ >= 0 ? 2 : 1, int(std::max<int64_t>(0, left.count())));
    if (n < 0 && errno != EINTR) return ssh_error(ErrorCode::Io, failure(std::strerror(errno)));
    if (n <= 0) {
      if (std::chrono::steady_clock::now() >= deadline) return ReadResult{};
      continue;
    }
    if (err_ >= 0 && p[1].revents) drain_stderr();
    if (!p[0].revents) continue;
    const ssize_t got = ::recv(out_, buffer.data(), buffer.size(), 0);
    if (got < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == ECONNRESET) return ReadResult{0, true};
      return ssh_error(ErrorCode::Io, failure(std::strerror(errno)));
    }
    if (got == 0) {
      if (closed_.load()) return ReadResult{0, true};
      // ssh closed its output: it has ended or is about to. Its status says why.
      const int status = reap(std::chrono::milliseconds(2000));
      const bool clean = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!first_bytes_.empty())
        return ssh_error(ErrorCode::Unavailable,
                         failure(fmt::format("the remote command printed '{}' and ended",
                                             printable(first_bytes_))));
      if (bytes_read_ == 0)
        return ssh_error(ErrorCode::Unavailable,
                         failure(status < 0 ? std::string("ssh closed its output before the session started")
                                            : fmt::format("ssh {} before the session started",
                                                          exit_text(status))));
      if (clean) return ReadResult{0, true};
      return ssh_error(ErrorCode::Io,
                       failure(status < 0 ? std::string("ssh closed its output in the middle of the session")
                                          : fmt::format("ssh {} in the middle of the session",
                                                        exit_text(status))));
    }
    if (!checked_start_) {
      // xpra's remote command prints this line when it finds no xpra there (3.1 said
      // "run-xpra"): say so with the option that fixes it. Anything else passes to the
      // session, which reports a plain-text reply itself.
      first_bytes_.append(reinterpret_cast<const char*>(buffer.data()), size_t(got));
      bool maybe = false;
      for (std::string_view sentinel : {"no xpra command found", "no run-xpra command found"}) {
        if (first_bytes_.starts_with(sentinel))
          return ssh_error(ErrorCode::Unavailable,
                           failure(fmt::format("the remote side has no xpra: it printed '{}' (name "
                                               "the remote xpra with --remote-xpra PATH)",
                                               sentinel)));
        maybe |= sentinel.starts_with(first_bytes_);
      }
      if (maybe) continue;  // a prefix of it so far: read on (bounded by the timeout)
      checked_start_ = true;
      pending_ = std::move(first_bytes_);
      first_bytes_.clear();
    }
    if (!pending_.empty()) {
      const size_t take = std::min(buffer.size(), pending_.size());
      std::memcpy(buffer.data(), pending_.data(), take);
      pending_.erase(0, take);
      bytes_read_ += take;
      return ReadResult{take, false};
    }
    bytes_read_ += uint64_t(got);
    return ReadResult{size_t(got), false};
  }
}

// Neither takes send_mu_: shutting the sockets down is what unblocks a waiting sender.
void SshTransport::shutdown() {
  closed_ = true;
  send_closed_ = true;
  ::shutdown(in_, SHUT_RDWR);
  ::shutdown(out_, SHUT_RDWR);
}

void SshTransport::shutdown_send() {
  send_closed_ = true;
  ::shutdown(in_, SHUT_WR);
}

}  // namespace pixpath::xpra
