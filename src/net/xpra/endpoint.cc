#include "pixpath/net/xpra/endpoint.h"

#include <charconv>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

constexpr const char* kForms[] = {"tcp://HOST:PORT/",          "ssl://HOST[:PORT]/",
                                  "ws://HOST[:PORT]/",         "wss://HOST[:PORT]/",
                                  "ssh://[USER@]HOST[:PORT]/[N]", "socket:///PATH",
                                  ":DISPLAY",                  nullptr};

Error url_error(ErrorCode code, std::string_view url, std::string_view why) {
  return Error(code, "xpra", "parse url", fmt::format("'{}': {}", url, why));
}

bool parse_uint(std::string_view text, unsigned max, unsigned& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && out <= max;
}

// HOST[:PORT] or [IPV6][:PORT]; `default_port` 0: the port is required.
Result<void> parse_host_port(std::string_view url, std::string_view authority, uint16_t default_port,
                             std::string_view form, Endpoint& e) {
  std::string_view host, port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return url_error(ErrorCode::InvalidArgument, url, "expected [IPV6]:PORT");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return url_error(ErrorCode::InvalidArgument, url, "expected [IPV6]:PORT");
      port = after.substr(1);
      has_port = true;
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon == std::string_view::npos) {
      host = authority;
    } else {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (!has_port && default_port == 0)
    return url_error(ErrorCode::InvalidArgument, url, fmt::format("the port is missing ({})", form));
  unsigned value = default_port;
  if (host.empty() || (has_port && (!parse_uint(port, 65535, value) || value == 0)))
    return url_error(ErrorCode::InvalidArgument, url, "bad host or port");
  if (host.find_first_of("/@ \t") != std::string_view::npos)
    return url_error(ErrorCode::InvalidArgument, url, "bad host name");
  e.host = std::string(host);
  e.port = uint16_t(value);
  return {};
}

// SCHEME://AUTHORITY[/REST]: splits at the first '/' after the authority.
void split_authority(std::string_view rest, std::string_view& authority, std::string_view& path) {
  const size_t slash = rest.find('/');
  authority = rest.substr(0, slash);
  path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
}

Result<Endpoint> parse_network(std::string_view url, Scheme scheme, std::string_view rest) {
  Endpoint e;
  e.scheme = scheme;
  std::string_view authority, path;
  split_authority(rest, authority, path);
  switch (scheme) {
    case Scheme::Tcp:
      PIXPATH_CHECK(parse_host_port(url, authority, 0, "tcp://HOST:PORT/", e));
      break;
    case Scheme::Ssl:
      PIXPATH_CHECK(parse_host_port(url, authority, 443, "ssl://HOST:PORT/", e));
      break;
    case Scheme::Ws:
    case Scheme::Wss:
      PIXPATH_CHECK(parse_host_port(url, authority, scheme == Scheme::Ws ? 80 : 443,
                                    "ws://HOST:PORT/", e));
      e.path = path.empty() ? "/" : std::string(path);
      if (e.path.find_first_of(" \r\n\t") != std::string::npos)
        return url_error(ErrorCode::InvalidArgument, url, "the websocket path has white space");
      break;
    case Scheme::Ssh: {
      const size_t at = authority.rfind('@');
      if (at != std::string_view::npos) {
        e.username = std::string(authority.substr(0, at));
        authority = authority.substr(at + 1);
        if (e.username.empty() || e.username.find_first_of(" \t:") != std::string::npos)
          return url_error(ErrorCode::InvalidArgument, url, "bad user name (ssh://USER@HOST/N)");
      }
      PIXPATH_CHECK(parse_host_port(url, authority, 22, "ssh://HOST:PORT/N", e));
      if (e.host.front() == '-') return url_error(ErrorCode::InvalidArgument, url, "bad host name");
      std::string_view d = path.empty() ? path : path.substr(1);
      if (!d.empty() && d.front() == ':') d.remove_prefix(1);
      if (!d.empty() && d.back() == '/') d.remove_suffix(1);
      if (!d.empty()) {
        unsigned n = 0;
        if (!parse_uint(d, 1u << 20, n))
          return url_error(ErrorCode::InvalidArgument, url,
                           "expected a display number after the host (ssh://USER@HOST/N)");
        e.display = int(n);
      }
      break;
    }
    default: break;
  }
  if (scheme == Scheme::Tcp || scheme == Scheme::Ssl) {
    if (!path.empty() && path != "/")
      return url_error(ErrorCode::InvalidArgument, url, "unexpected text after HOST:PORT/");
  }
  return e;
}

std::string host_port(const Endpoint& e, bool with_port) {
  std::string h = e.host.find(':') != std::string::npos ? "[" + e.host + "]" : e.host;
  return with_port ? fmt::format("{}:{}", h, e.port) : h;
}

}  // namespace

std::string_view to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::Tcp: return "tcp";
    case Scheme::UnixSocket: return "socket";
    case Scheme::LocalDisplay: return "display";
    case Scheme::Ssl: return "ssl";
    case Scheme::Ws: return "ws";
    case Scheme::Wss: return "wss";
    case Scheme::Ssh: return "ssh";
  }
  return "?";
}

const char* const* supported_url_forms() { return kForms; }

Result<Endpoint> parse_url(std::string_view url) {
  struct Prefix {
    std::string_view text;
    Scheme scheme;
  };
  for (const Prefix& p : {Prefix{"tcp://", Scheme::Tcp}, Prefix{"ssl://", Scheme::Ssl},
                          Prefix{"ws://", Scheme::Ws}, Prefix{"wss://", Scheme::Wss},
                          Prefix{"ssh://", Scheme::Ssh}}) {
    if (url.starts_with(p.text)) return parse_network(url, p.scheme, url.substr(p.text.size()));
  }
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
                     fmt::format("the {} transport is not supported (use tcp://, ssl://, ws://, "
                                 "wss://, ssh://, socket:///PATH or :DISPLAY)",
                                 url.substr(0, sep)));
  }
  return url_error(ErrorCode::InvalidArgument, url,
                   "expected tcp://HOST:PORT/, ssl://HOST:PORT/, ws://HOST:PORT/, "
                   "wss://HOST:PORT/, ssh://USER@HOST/N, socket:///PATH or :DISPLAY");
}

std::string to_url(const Endpoint& e) {
  switch (e.scheme) {
    case Scheme::Tcp:
    case Scheme::Ssl: return fmt::format("{}://{}/", to_string(e.scheme), host_port(e, true));
    case Scheme::Ws:
    case Scheme::Wss:
      return fmt::format("{}://{}{}", to_string(e.scheme), host_port(e, true),
                         e.path.empty() ? "/" : e.path);
    case Scheme::Ssh:
      return fmt::format("ssh://{}{}/{}", e.username.empty() ? "" : e.username + "@",
                         host_port(e, e.port != 22),
                         e.display >= 0 ? std::to_string(e.display) : std::string());
    case Scheme::UnixSocket: return "socket://" + e.path;
    case Scheme::LocalDisplay: return fmt::format(":{}", e.display);
  }
  return "?";
}

}  // namespace pixpath::xpra
