// Endpoint: where an xpra session is, as a user writes it on the command line (the forms of
// `xpra attach`):
//   tcp://HOST:PORT/          a TCP socket (HOST a name, an IPv4 or a [IPv6] literal)
//   socket:///PATH            a local Unix socket, by path (socket://PATH is accepted too)
//   :N                        the local session on display N, found the way xpra finds it
//                             (local_sessions.h)
// Plain values; parse_url() checks everything it can without touching the network.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pixpath/core/result.h"

namespace pixpath::xpra {

enum class Scheme { Tcp, UnixSocket, LocalDisplay };
std::string_view to_string(Scheme scheme);

struct Endpoint {
  Scheme scheme = Scheme::Tcp;
  std::string host;   // Tcp
  uint16_t port = 0;  // Tcp
  std::string path;   // UnixSocket
  int display = -1;   // LocalDisplay: N of ":N"
};

// Errors: InvalidArgument (malformed), Unsupported (a scheme pixpath does not speak), subject
// "xpra", stage "parse url", the URL in the reason.
[[nodiscard]] Result<Endpoint> parse_url(std::string_view url);

// "tcp://127.0.0.1:10000/", "socket:///run/user/0/xpra/host-100", ":100".
std::string to_url(const Endpoint& endpoint);

}  // namespace pixpath::xpra
