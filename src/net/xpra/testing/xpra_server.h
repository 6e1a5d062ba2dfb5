// XpraServer: starts a real xpra server for a test and always stops it.
//
// Each server gets a free X display number (:100 and up, checked against /tmp/.X11-unix and
// the lock files) and a free loopback TCP port, its own socket directory and log file in a
// fresh temporary directory, and runs in its own process group (xpra, Xvfb and the started
// application) so that stop() can end all of it. The destructor calls stop().
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

struct XpraServerOptions {
  std::string start = "xterm";             // --start=...; empty for none
  std::optional<std::string> password;     // protects the TCP socket (file auth)
  std::vector<std::string> extra_args;     // appended to the command line
  // Extra environment for the server, e.g. {"XPRA_ENCODING_STRICT_MODE", "1"}: a 3.1 server
  // otherwise sends rgb24 for every window narrower than its "rgb auto threshold" (it
  // compares the width, not the pixel count), whatever codings the client lists.
  std::vector<std::pair<std::string, std::string>> environment;
  std::chrono::milliseconds startup_timeout{45000};
  std::chrono::milliseconds stop_timeout{10000};
};

class XpraServer {
 public:
  // Starts `xpra start` and waits until its TCP port accepts connections. On failure the
  // error's reason ends with the tail of the server log, and nothing is left running.
  [[nodiscard]] static Result<std::unique_ptr<XpraServer>> start(XpraServerOptions options = {});
  ~XpraServer();
  XpraServer(const XpraServer&) = delete;
  XpraServer& operator=(const XpraServer&) = delete;

  // SIGTERM to the process group, bounded wait, then SIGKILL; removes the temporary directory.
  // Idempotent.
  void stop();

  int display() const { return display_; }
  int port() const { return port_; }
  std::string url() const;                 // "tcp://127.0.0.1:PORT/"
  const std::string& password_file() const { return password_file_; }
  const std::string& log_path() const { return log_path_; }
  std::string log_tail(size_t bytes = 4000) const;
  // Does the server log contain `text`?
  bool log_contains(std::string_view text) const;

 private:
  XpraServer() = default;
  pid_t pid_ = -1;
  int display_ = 0;
  int port_ = 0;
  std::string dir_;
  std::string log_path_;
  std::string password_file_;
  std::chrono::milliseconds stop_timeout_{10000};
};

// A TCP port on 127.0.0.1 that was free a moment ago.
[[nodiscard]] Result<int> free_loopback_port();
// An X display number with no socket and no lock file.
[[nodiscard]] Result<int> free_display();

}  // namespace pixpath::xpra::testing
