// XpraServer: starts a real xpra server for a test and always stops it.
//
// Two server versions (XpraVersion): Debian 12's xpra 3.1.3 ("xpra" on PATH), and xpra 6.5.5
// built by scripts/setup-xpra6 into its own prefix (/opt/pixpath-xpra6, or
// PIXPATH_XPRA6_PREFIX). Each gets its own flags (a 6.x server refuses some 3.1 ones and needs
// others, see docs/xpra-servers.md) and environment (6.x: XPRA_SYSTEM_CONF_DIRS=PREFIX/etc/xpra,
// else it also reads Debian 3.1's /etc/xpra/conf.d). Tests that need a version call
// xpra_available() first and GTEST_SKIP with its reason (CI always has both: setup builds 6.x).
//
// Each server gets a free X display number (:100 and up, checked against /tmp/.X11-unix and
// the lock files), a free loopback TCP port and/or a unix socket, its own socket directory and
// log file in a fresh temporary directory, and runs in its own process group (xpra, Xvfb and
// the started application) so that stop() can end all of it. The destructor calls stop().
//
// Readiness: 3.1 with TCP: a pixpath probe session reaches Ready (pixpath's client speaks
// 3.1's protocol). Otherwise (6.x, or no TCP): the socket accepts connections and the log says
// "xpra is ready." (both versions print it once their sockets and encoders are set up).
//
// Debugging: PIXPATH_XPRA_SERVER_ARGS adds server arguments (e.g. "-d encoding");
// PIXPATH_KEEP_XPRA_LOGS=1 keeps the temporary directory with the server log.
// Threading: one thread owns an XpraServer.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pixpath/core/result.h"

namespace pixpath::xpra::testing {

// Which xpra runs the server.
enum class XpraVersion {
  V3_1,  // Debian 12's xpra 3.1.3: bencode/rencode packets, zlib, delta buckets
  V6,    // xpra 6.5.5 from scripts/setup-xpra6: rencodeplus packets only, lz4/brotli
};
// "3.1" or "6.5.5", for test names and messages.
const char* xpra_version_name(XpraVersion v);
// The prefix xpra 6.x is installed in: PIXPATH_XPRA6_PREFIX, default /opt/pixpath-xpra6.
std::string xpra6_prefix();
// The xpra command of that version ("xpra", or PREFIX/bin/xpra).
std::string xpra_command(XpraVersion v);
// Ok when that version can be started here; else the reason (what is missing, what installs
// it), for GTEST_SKIP.
[[nodiscard]] Result<void> xpra_available(XpraVersion v);

struct XpraServerOptions {
  XpraVersion version = XpraVersion::V3_1;
  std::string start = "xterm";             // --start=...; empty for none
  std::optional<std::string> password;     // protects the TCP socket (file auth)
  std::string encoding;                    // --encoding=...; empty: the server's default
  bool bind_tcp = true;                    // --bind-tcp=127.0.0.1:PORT (url())
  bool bind_unix = false;                  // --bind=DIR/server.sock (socket_path())
  // Else --bind=auto instead of --bind=none: the server's own local sockets in its socket dir
  // (DIR/HOSTNAME-N), where `xpra attach :N` (and `pixpath attach :N` with
  // XPRA_SOCKET_DIRS=dir()) finds them.
  bool bind_auto = false;
  // TLS and websocket sockets on free loopback ports (ssl_url(), ws_url(), wss_url()); ssl
  // and wss need a certificate and key (testing/tls_certs.h makes them). A 3.1 server gets
  // --html=DIR (an empty web root) with them: it hands wss connections to its websocket
  // handler only when its html server is on.
  bool bind_ssl = false;
  bool bind_ws = false;
  bool bind_wss = false;
  std::string ssl_cert, ssl_key;
  std::vector<std::string> extra_args;     // appended to the command line
  // Extra environment for the server, e.g. {"XPRA_ENCODING_STRICT_MODE", "1"}: a 3.1 server
  // otherwise sends rgb24 for every window narrower than its "rgb auto threshold" (it
  // compares the width, not the pixel count), whatever codings the client lists.
  std::vector<std::pair<std::string, std::string>> environment;
  std::chrono::milliseconds startup_timeout{45000};
  std::chrono::milliseconds stop_timeout{10000};
};

// The Python tracebacks in an xpra log (each from "Traceback (most recent call last):" through
// its exception line), less those of known races inside xpra that no client can cause or
// avoid:
//   - 3.1.3, input_server.py _keys_changed: "RuntimeError: dictionary changed size during
//     iteration" when a client (the start-up probe) disconnects as keymap changes are
//     re-enabled (CI dry run, 2026-12-03).
// Concatenated; "" when none is left.
std::string unexpected_tracebacks(std::string_view log);

class XpraServer {
 public:
  // Starts `xpra start` and waits until its TCP port accepts connections. On failure the
  // error's reason ends with the tail of the server log, and nothing is left running. A start
  // that lost its display number or port to another process meanwhile is retried (3 attempts).
  [[nodiscard]] static Result<std::unique_ptr<XpraServer>> start(XpraServerOptions options = {});
  ~XpraServer();
  XpraServer(const XpraServer&) = delete;
  XpraServer& operator=(const XpraServer&) = delete;

  // SIGTERM to the process group, bounded wait, then SIGKILL; removes the temporary directory.
  // Idempotent.
  void stop();

  XpraVersion version() const { return version_; }
  int display() const { return display_; }
  int port() const { return port_; }       // 0 without bind_tcp
  std::string url() const;                 // "tcp://127.0.0.1:PORT/"
  int ssl_port() const { return ssl_port_; }
  int ws_port() const { return ws_port_; }
  int wss_port() const { return wss_port_; }
  std::string ssl_url() const;             // "ssl://127.0.0.1:PORT/"
  std::string ws_url() const;              // "ws://127.0.0.1:PORT/"
  std::string wss_url() const;             // "wss://127.0.0.1:PORT/"
  // The unix socket (bind_unix), else empty.
  const std::string& socket_path() const { return socket_path_; }
  // The server's private folder (socket dir, logs, password file); removed by stop().
  const std::string& dir() const { return dir_; }
  const std::string& password_file() const { return password_file_; }
  const std::string& log_path() const { return log_path_; }
  std::string log_tail(size_t bytes = 4000) const;
  // Does the server log contain `text`?
  bool log_contains(std::string_view text) const;
  // The server log's Python tracebacks (each with its exception line), less the known races
  // inside xpra itself (known_xpra_race); "" when there are none.
  std::string unexpected_tracebacks() const;

 private:
  XpraServer() = default;
  [[nodiscard]] static Result<std::unique_ptr<XpraServer>> start_once(const XpraServerOptions& options);
  // Whether process `pid` runs in this server's environment (its XDG_RUNTIME_DIR).
  bool started_by_this_server(pid_t pid) const;
  pid_t pid_ = -1;
  XpraVersion version_ = XpraVersion::V3_1;
  int display_ = 0;
  int port_ = 0;
  int ssl_port_ = 0, ws_port_ = 0, wss_port_ = 0;
  std::string dir_;
  std::string log_path_;
  std::string password_file_;
  std::string socket_path_;
  std::chrono::milliseconds stop_timeout_{10000};
};

// A TCP port on 127.0.0.1 that was free a moment ago.
[[nodiscard]] Result<int> free_loopback_port();
// An X display number with no socket and no lock file.
[[nodiscard]] Result<int> free_display();

}  // namespace pixpath::xpra::testing
