// RawPeer: a one-connection TCP server on 127.0.0.1 for transport tests (TLS, websocket): it
// accepts one client and runs the test's script on the connected socket in a background
// thread (which the destructor joins after shutting the sockets down, so a script blocked in
// a read ends). Real servers are tested against xpra itself, not this.
// Threading: the script runs on the peer's thread; port() from any thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace pixpath::xpra::testing {

class RawPeer {
 public:
  explicit RawPeer(std::function<void(int fd)> script) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_fd_, 1);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, script = std::move(script)] {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 10000) != 1) return;
      client_fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client_fd_ < 0) return;
      script(client_fd_);
    });
  }
  ~RawPeer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    if (client_fd_ >= 0) ::shutdown(client_fd_, SHUT_RDWR);
    thread_.join();
    if (client_fd_ >= 0) ::close(client_fd_);
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }

  // Reads until `marker` arrived or 5 s passed; returns what came.
  static std::string read_until(int fd, const std::string& marker) {
    std::string got;
    char buf[4096];
    while (got.find(marker) == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5000) != 1) break;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, size_t(n));
    }
    return got;
  }
  static void send_text(int fd, const std::string& s) { (void)!::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

 private:
  int listen_fd_ = -1;
  std::atomic<int> client_fd_{-1};
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace pixpath::xpra::testing
