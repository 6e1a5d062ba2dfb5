#include "pixpath/net/xpra/socket_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

Error net_error(ErrorCode code, std::string stage, std::string reason) {
  return Error(code, "xpra", std::move(stage), std::move(reason));
}

std::string errno_text(int e) { return std::strerror(e); }

// Waits for a non-blocking connect() to finish; 0 or -1 with errno set.
int finish_connect(int fd, int rc, std::chrono::steady_clock::time_point deadline) {
  if (rc == 0 || errno != EINPROGRESS) return rc;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  pollfd p{fd, POLLOUT, 0};
  int n = ::poll(&p, 1, int(std::max<int64_t>(0, left.count())));
  if (n != 1) {
    errno = n == 0 ? ETIMEDOUT : errno;
    return -1;
  }
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  errno = err;
  return err == 0 ? 0 : -1;
}

// Back to blocking mode (reads go through poll); writes bounded by SO_SNDTIMEO.
void make_blocking_with_send_timeout(int fd, std::chrono::milliseconds send_timeout) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv{};
  tv.tv_sec = send_timeout.count() / 1000;
  tv.tv_usec = (send_timeout.count() % 1000) * 1000;
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

Result<int> connect_tcp_socket(const std::string& host, uint16_t port,
                               std::chrono::milliseconds timeout, std::string* where_out) {
  const std::string where = host.find(':') != std::string::npos
                                ? fmt::format("[{}]:{}", host, port)
                                : fmt::format("{}:{}", host, port);
  if (where_out) *where_out = where;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found); rc != 0) {
    return net_error(ErrorCode::Unavailable, "connect",
                     fmt::format("tcp {}: {}", where, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);
  std::string last = "no address";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      ai->ai_protocol);
    if (fd < 0) {
      last = errno_text(errno);
      continue;
    }
    if (finish_connect(fd, ::connect(fd, ai->ai_addr, ai->ai_addrlen), deadline) != 0) {
      last = errno_text(errno);
      ::close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
  }
  return net_error(ErrorCode::Unavailable, "connect", fmt::format("tcp {}: {}", where, last));
}

Result<std::unique_ptr<SocketTransport>> SocketTransport::connect_tcp(
    const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
    std::chrono::milliseconds send_timeout) {
  std::string where;
  PIXPATH_TRY(int fd, connect_tcp_socket(host, port, timeout, &where));
  make_blocking_with_send_timeout(fd, send_timeout);
  return std::unique_ptr<SocketTransport>(new SocketTransport(fd, "tcp " + where));
}

Result<std::unique_ptr<SocketTransport>> SocketTransport::connect_unix(
    const std::string& path, std::chrono::milliseconds timeout,
    std::chrono::milliseconds send_timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return net_error(ErrorCode::InvalidArgument, "connect",
                     fmt::format("unix socket '{}': the path must be 1..{} bytes", path,
                                 sizeof addr.sun_path - 1));
  }
  // A leading '@' names a socket in Linux's abstract namespace (xpra 6.x's "@xpra/N").
  std::memcpy(addr.sun_path, path.data(), path.size());
  socklen_t addr_len = sizeof addr;
  if (path.front() == '@') {
    addr.sun_path[0] = '\0';
    addr_len = socklen_t(offsetof(sockaddr_un, sun_path) + path.size());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return net_error(ErrorCode::Io, "connect", "unix socket: " + errno_text(errno));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (finish_connect(fd, ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), addr_len),
                     deadline) != 0) {
    const int e = errno;
    ::close(fd);
    return net_error(ErrorCode::Unavailable, "connect",
                     fmt::format("unix socket {}: {}", path,
                                 e == ECONNREFUSED ? "connection refused (no server listens "
                                                     "there: a stale socket of an ended session?)"
                                                   : errno_text(e)));
  }
  make_blocking_with_send_timeout(fd, send_timeout);
  return std::unique_ptr<SocketTransport>(new SocketTransport(fd, "unix " + path));
}

SocketTransport::~SocketTransport() { ::close(fd_); }

Result<void> SocketTransport::send_all(std::span<const uint8_t> bytes) {
  MutexLock lock(send_mu_);
  if (send_closed_) return net_error(ErrorCode::Cancelled, "send", "connection is closed");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      send_closed_ = true;  // a partial write leaves the stream unusable
      return net_error(ErrorCode::Io, "send",
                       e == EAGAIN || e == EWOULDBLOCK
                           ? std::string("the server did not read for the send timeout")
                           : errno_text(e));
    }
    done += size_t(n);
  }
  return {};
}

Result<Transport::ReadResult> SocketTransport::read_some(std::span<uint8_t> buffer,
                                                           std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  int n = ::poll(&p, 1, int(timeout.count()));
  if (n < 0) {
    if (errno == EINTR) return ReadResult{};
    return net_error(ErrorCode::Io, "read", errno_text(errno));
  }
  if (n == 0) return ReadResult{};
  ssize_t got = ::recv(fd_, buffer.data(), buffer.size(), 0);
  if (got < 0) {
    if (errno == EINTR || errno == EAGAIN) return ReadResult{};
    if (errno == ECONNRESET) return ReadResult{0, true};
    return net_error(ErrorCode::Io, "read", errno_text(errno));
  }
  if (got == 0) return ReadResult{0, true};
  return ReadResult{size_t(got), false};
}

// Neither takes send_mu_: shutting the socket down is what unblocks a sender stuck in send().
void SocketTransport::shutdown() {
  send_closed_ = true;
  ::shutdown(fd_, SHUT_RDWR);
}

void SocketTransport::shutdown_send() {
  send_closed_ = true;
  ::shutdown(fd_, SHUT_WR);
}

}  // namespace pixpath::xpra
