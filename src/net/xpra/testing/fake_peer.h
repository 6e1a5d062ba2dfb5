// FakePeer: a scripted xpra "server" on 127.0.0.1 for malformed-input tests. It accepts one
// client, decodes what the client sends (bencode chunks) and lets the test send any bytes,
// well-formed or not. Real-server behaviour is tested against xpra itself, not this.
//
// Threading: one background thread accepts and reads; send(), close_client() and the wait
// functions may be called from the test thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/chunk_parser.h"
#include "pixpath/net/xpra/framing.h"

namespace pixpath::xpra::testing {

class FakePeer {
 public:
  // receive_buffer > 0: SO_RCVBUF of the accepted socket (small, so that a peer that stops
  // reading blocks the client's sends soon). The segment size is made small as well: Linux
  // sizes the client's send buffer from it, and loopback's 64 KiB segments give the client
  // about 4 MiB to fill (some 94,000 ping_echo packets, over 30 s under ThreadSanitizer on a
  // loaded machine) before a send blocks at all; 256-byte segments leave some 6,000-11,000.
  explicit FakePeer(int receive_buffer = 0) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0) {
      ::setsockopt(listen_fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
      int segment = 256;
      ::setsockopt(listen_fd_, IPPROTO_TCP, TCP_MAXSEG, &segment, sizeof segment);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_fd_, 1);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~FakePeer() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    close_client();
    thread_.join();
    ::close(listen_fd_);
    if (client_fd_ >= 0) ::close(client_fd_);
  }

  std::string url() const { return "tcp://127.0.0.1:" + std::to_string(port_) + "/"; }

  // Sends all of `bytes`; false when the client went away first or did not read for
  // `timeout` (a test must never hang on a client that stopped reading).
  bool send(const std::vector<uint8_t>& bytes,
            std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    wait_connected();
    size_t done = 0;
    while (done < bytes.size()) {
      pollfd p{client_fd_, POLLOUT, 0};
      if (::poll(&p, 1, int(timeout.count())) != 1) return false;
      ssize_t n = ::send(client_fd_, bytes.data() + done, bytes.size() - done,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      done += size_t(n);
    }
    return true;
  }
  // Sends `bytes` one byte per TCP segment (TCP_NODELAY), `gap` apart, so that the client
  // reads the stream split at (nearly) every byte.
  bool send_bytewise(const std::vector<uint8_t>& bytes,
                     std::chrono::microseconds gap = std::chrono::microseconds(0)) {
    wait_connected();
    int one = 1;
    ::setsockopt(client_fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (uint8_t b : bytes) {
      if (::send(client_fd_, &b, 1, MSG_NOSIGNAL) != 1) return false;
      if (gap.count() > 0) std::this_thread::sleep_for(gap);
    }
    return true;
  }
  // Stops (true) or resumes (false) reading what the client sends: a server that stops
  // reading.
  void pause_reading(bool paused) { paused_ = paused; }
  // false: stay connected after the client's "disconnect" (default: close at once, as xpra
  // does), so that a test can send more before it calls close_client().
  void close_on_disconnect(bool close) { close_on_disconnect_ = close; }
  void send_packet(const Value& packet) { send(frame_packet(packet)); }
  void close_client() {
    if (client_fd_ >= 0) ::shutdown(client_fd_, SHUT_RDWR);
  }

  // The first client (the second, too, with refuse_second_client_with) gets `line` as plain
  // text after its first packet and is disconnected, as a server that cannot read its packet
  // encoder does; the next client is served as usual. Call before the client connects.
  void refuse_first_client(std::string line) {
    MutexLock lock(mu_);
    refusals_.insert(refusals_.begin(), std::move(line));
  }
  // As xpra 3.1 does after a refusal: the refused socket stays open until the client closes
  // its end. Then overlapping_retry() says whether the client's next connection was already
  // waiting (connected before the refused one was closed).
  void keep_refused_open_until_client_closes() {
    MutexLock lock(mu_);
    keep_refused_open_ = true;
  }
  bool overlapping_retry() {
    MutexLock lock(mu_);
    return overlapping_retry_;
  }
  void refuse_second_client_with(std::string line) {
    MutexLock lock(mu_);
    refusals_.push_back(std::move(line));
  }
  // The packet encoder of the refused first client's packet, and of the last packet read.
  std::optional<PacketEncoder> first_client_encoder() {
    MutexLock lock(mu_);
    return first_encoder_;
  }
  std::optional<PacketEncoder> last_encoder() {
    MutexLock lock(mu_);
    return last_encoder_;
  }

  // Waits for the n-th (0-based) packet of `type` from the client.
  std::optional<Value> wait_packet(const std::string& type, size_t n = 0,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    MutexLock lock(mu_);
    std::optional<Value> found;
    cv_.wait_for(mu_, timeout, [&]() PIXPATH_REQUIRES(mu_) {
      size_t seen = 0;
      for (const auto& p : packets_) {
        if (p.type == type && seen++ == n) {
          found = p.body;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  size_t count(const std::string& type) {
    MutexLock lock(mu_);
    size_t c = 0;
    for (const auto& p : packets_) c += p.type == type;
    return c;
  }
  // True once the client closed its side.
  bool wait_client_eof(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    MutexLock lock(mu_);
    return cv_.wait_for(mu_, timeout, [&]() PIXPATH_REQUIRES(mu_) { return eof_; });
  }

 private:
  void wait_connected() {
    MutexLock lock(mu_);
    cv_.wait_for(mu_, std::chrono::seconds(5), [&] { return client_fd_ >= 0; });
  }
  // Reads until the client's first packet (bounded), returns its encoder.
  std::optional<PacketEncoder> first_packet_encoder(int fd) {
    ChunkParser parser;
    std::vector<uint8_t> buf(65536);
    for (int i = 0; i < 200; ++i) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) != 1) continue;
      ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      std::vector<Packet> got;
      (void)parser.feed({buf.data(), size_t(n)}, got);
      if (!got.empty()) return got.front().encoder;
    }
    return std::nullopt;
  }
  void run() {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    for (bool first = true;; first = false) {
      std::string line;
      {
        MutexLock lock(mu_);
        if (refusals_.empty()) break;
        line = refusals_.front();
        refusals_.erase(refusals_.begin());
      }
      auto encoder = first_packet_encoder(fd);
      if (first) {
        MutexLock lock(mu_);
        first_encoder_ = encoder;
      }
      (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
      bool keep_open = false;
      {
        MutexLock lock(mu_);
        keep_open = keep_refused_open_;
      }
      if (keep_open) {
        char sink[4096];
        for (int i = 0; i < 500; ++i) {
          pollfd p{fd, POLLIN, 0};
          if (::poll(&p, 1, 10) == 1 && ::recv(fd, sink, sizeof sink, 0) <= 0) break;
        }
        pollfd next{listen_fd_, POLLIN, 0};
        const bool waiting = ::poll(&next, 1, 0) == 1;
        MutexLock lock(mu_);
        overlapping_retry_ |= waiting;
      }
      ::shutdown(fd, SHUT_RDWR);
      ::close(fd);
      fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
    }
    {
      MutexLock lock(mu_);
      client_fd_ = fd;
    }
    cv_.notify_all();
    ChunkParser parser;
    std::vector<uint8_t> buf(65536);
    while (!stop_) {
      if (paused_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      std::vector<Packet> got;
      (void)parser.feed({buf.data(), size_t(n)}, got);
      bool bye = false;
      {
        MutexLock lock(mu_);
        for (auto& p : got) {
          bye |= p.type == "disconnect";  // like xpra: close once the client said goodbye
          last_encoder_ = p.encoder;
          packets_.push_back(std::move(p));
        }
      }
      if (bye && close_on_disconnect_) ::shutdown(fd, SHUT_RDWR);
      cv_.notify_all();
    }
    {
      MutexLock lock(mu_);
      eof_ = true;
    }
    cv_.notify_all();
  }

  int listen_fd_ = -1;
  std::atomic<int> client_fd_{-1};
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> close_on_disconnect_{true};
  std::thread thread_;
  Mutex mu_;
  std::condition_variable_any cv_;
  std::vector<Packet> packets_ PIXPATH_GUARDED_BY(mu_);
  bool eof_ PIXPATH_GUARDED_BY(mu_) = false;
  std::vector<std::string> refusals_ PIXPATH_GUARDED_BY(mu_);
  bool keep_refused_open_ PIXPATH_GUARDED_BY(mu_) = false;
  bool overlapping_retry_ PIXPATH_GUARDED_BY(mu_) = false;
  std::optional<PacketEncoder> first_encoder_ PIXPATH_GUARDED_BY(mu_);
  std::optional<PacketEncoder> last_encoder_ PIXPATH_GUARDED_BY(mu_);
};

}  // namespace pixpath::xpra::testing
