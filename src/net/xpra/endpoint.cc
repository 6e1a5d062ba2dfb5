#include "pixpath/net/xpra/endpoint.h"

#include <charconv>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

Error url_error(ErrorCode code, std::string_view url, std::string_view why) {
  return Error(code, "xpra", "parse url", fmt::format("'{}': {}", url, why));
}

bool parse_uint(std::string_view text, unsigned max, unsigned& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && out <= max;
}

Result<Endpoint> parse_tcp(std::string_view url, std::string_view rest) {
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::string_view host, port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      return url_error(ErrorCode::InvalidArgument, url, "expected [IPV6]:PORT");
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos)
      return url_error(ErrorCode::InvalidArgument, url, "the port is missing (tcp://HOST:PORT/)");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  unsigned value = 0;
  if (host.empty() || !parse_uint(port, 65535, value) || value == 0)
    return url_error(ErrorCode::InvalidArgument, url, "bad host or port");
  Endpoint e;
  e.scheme = Scheme::Tcp;
  e.host = std::string(host);
  e.port = uint16_t(value);
  return e;
}

}  // namespace

std::string_view to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::Tcp: return "tcp";
    case Scheme::UnixSocket: return "socket";
    case Scheme::LocalDisplay: return "display";
  }
  return "?";
}

Result<Endpoint> parse_url(std::string_view url) {
  if (url.starts_with("tcp://")) return parse_tcp(url, url.substr(6));
  if (url.starts_with("socket://")) {
    std::string_view path = url.substr(9);
    if (path.empty())
      return url_error(ErrorCode::InvalidArgument, url, "the socket path is missing (socket:///PATH)");
    Endpoint e;
    e.scheme = Scheme::UnixSocket;
    e.path = std::string(path);
    return e;
  }
  if (url.starts_with(":")) {
    unsigned n = 0;
    if (!parse_uint(url.substr(1), 1u << 20, n))
      return url_error(ErrorCode::InvalidArgument, url, "expected :N with N a display number");
    Endpoint e;
    e.scheme = Scheme::LocalDisplay;
    e.display = int(n);
    return e;
  }
  const size_t sep = url.find("://");
  if (sep != std::string_view::npos) {
    return url_error(ErrorCode::Unsupported, url,
                     fmt::format("the {} transport is not supported (use tcp://HOST:PORT/, "
                                 "socket:///PATH or :DISPLAY)",
                                 url.substr(0, sep)));
  }
  return url_error(ErrorCode::InvalidArgument, url,
                   "expected tcp://HOST:PORT/, socket:///PATH or :DISPLAY");
}

std::string to_url(const Endpoint& e) {
  switch (e.scheme) {
    case Scheme::Tcp:
      return e.host.find(':') != std::string::npos ? fmt::format("tcp://[{}]:{}/", e.host, e.port)
                                                   : fmt::format("tcp://{}:{}/", e.host, e.port);
    case Scheme::UnixSocket: return "socket://" + e.path;
    case Scheme::LocalDisplay: return fmt::format(":{}", e.display);
  }
  return "?";
}

}  // namespace pixpath::xpra
