// Endpoint: where an xpra session is, as a user writes it on the command line (the forms of
// `xpra attach`):
//   tcp://HOST:PORT/          a TCP socket (HOST a name, an IPv4 or a [IPv6] literal)
//   ssl://HOST[:PORT]/        TLS over TCP (default port 443, as xpra)
//   ws://HOST[:PORT]/[PATH]   a websocket (RFC 6455; default port 80)
//   wss://HOST[:PORT]/[PATH]  a websocket over TLS (default port 443)
//   ssh://[USER@]HOST[:PORT]/[N]  the system ssh running `xpra _proxy [:N]` on HOST (port 22)
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

enum class Scheme { Tcp, UnixSocket, LocalDisplay, Ssl, Ws, Wss, Ssh };
std::string_view to_string(Scheme scheme);

struct Endpoint {
  Scheme scheme = Scheme::Tcp;
  std::string host;      // Tcp, Ssl, Ws, Wss, Ssh (an IPv6 literal without brackets)
  uint16_t port = 0;     // Tcp, Ssl, Ws, Wss, Ssh (the scheme's default when the URL has none)
  std::string path;      // UnixSocket: the socket; Ws, Wss: the request path ("/" default)
  int display = -1;      // LocalDisplay: N of ":N"; Ssh: N of ssh://host/N, -1 when none
  std::string username;  // Ssh: USER of USER@HOST, empty when none
};

// Errors: InvalidArgument (malformed), Unsupported (a scheme pixpath does not speak), subject
// "xpra", stage "parse url", the URL in the reason.
[[nodiscard]] Result<Endpoint> parse_url(std::string_view url);

// "tcp://127.0.0.1:10000/", "socket:///run/user/0/xpra/host-100", ":100",
// "ssh://user@host:2222/100", "wss://[::1]:443/".
std::string to_url(const Endpoint& endpoint);

// The URL forms parse_url() accepts, for help texts and `pixpath info`.
const char* const* supported_url_forms();

}  // namespace pixpath::xpra
