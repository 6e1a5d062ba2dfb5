#include "pixpath/net/xpra/tcp_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

Error net_error(ErrorCode code, std::string stage, std::string reason) {
  return Error(code, "xpra", std::move(stage), std::move(reason));
}

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

Result<TcpEndpoint> parse_tcp_url(std::string_view url) {
  constexpr std::string_view scheme = "tcp://";
  if (url.substr(0, scheme.size()) != scheme) {
    return net_error(ErrorCode::Unsupported, "parse url",
                     fmt::format("'{}': only tcp://HOST:PORT/ is supported", url));
  }
  std::string_view rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::string_view host, port;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return net_error(ErrorCode::InvalidArgument, "parse url",
                       fmt::format("'{}': expected [IPV6]:PORT", url));
    }
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      return net_error(ErrorCode::InvalidArgument, "parse url",
                       fmt::format("'{}': the port is missing (tcp://HOST:PORT/)", url));
    }
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (host.empty() || port.empty() || ec != std::errc() || end != port.data() + port.size() ||
      value == 0 || value > 65535) {
    return net_error(ErrorCode::InvalidArgument, "parse url",
                     fmt::format("'{}': bad host or port", url));
  }
  return TcpEndpoint{std::string(host), uint16_t(value)};
}

Result<std::unique_ptr<TcpConnection>> TcpConnection::connect(
    const TcpEndpoint& ep, std::chrono::milliseconds timeout,
    std::chrono::milliseconds send_timeout) {
  const std::string where = fmt::format("{}:{}", ep.host, ep.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(ep.port);
  if (int rc = getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return net_error(ErrorCode::Unavailable, "connect",
                     fmt::format("{}: {}", where, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);
  std::string last = "no address";
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      ai->ai_protocol);
    if (fd < 0) {
      last = errno_text(errno);
      continue;
    }
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLOUT, 0};
      int n = ::poll(&p, 1, int(std::max<int64_t>(0, left.count())));
      if (n == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        rc = -1;
        errno = n == 0 ? ETIMEDOUT : errno;
      }
    }
    if (rc != 0) {
      last = errno_text(errno);
      ::close(fd);
      continue;
    }
    // Back to blocking mode; reads go through poll, writes are bounded by SO_SNDTIMEO.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{};
    tv.tv_sec = send_timeout.count() / 1000;
    tv.tv_usec = (send_timeout.count() % 1000) * 1000;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return std::unique_ptr<TcpConnection>(new TcpConnection(fd, ep));
  }
  return net_error(ErrorCode::Unavailable, "connect", fmt::format("{}: {}", where, last));
}

TcpConnection::~TcpConnection() { ::close(fd_); }

Result<void> TcpConnection::send_all(std::span<const uint8_t> bytes) {
  std::lock_guard lock(send_mu_);
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

Result<TcpConnection::ReadResult> TcpConnection::read_some(std::span<uint8_t> buffer,
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
void TcpConnection::shutdown() {
  send_closed_ = true;
  ::shutdown(fd_, SHUT_RDWR);
}

void TcpConnection::shutdown_send() {
  send_closed_ = true;
  ::shutdown(fd_, SHUT_WR);
}

}  // namespace pixpath::xpra
