// SshTransport: an xpra session through the system's ssh client, as `xpra attach
// ssh://USER@HOST[:PORT]/N` does it (endpoint.h). ssh runs as a child process with the remote
// command xpra's own client sends: `sh -c 'if command -v "xpra" ...; then xpra _proxy :N;
// elif [ -x PATH ]; then PATH _proxy :N; ...; else echo "no xpra command found"; exit 1; fi'`,
// trying each of SshOptions::remote_xpra in turn (xpra's --remote-xpra); the session is spoken
// over the child's stdin and stdout. The user's ssh configuration, agent and keys work as
// usual; ssh may prompt on the terminal (the child keeps it; it runs in its own process group,
// so Ctrl-C reaches pixpath only).
//
// Failures say what happened: ssh could not start, ssh exited (its status and the last lines
// it printed on stderr, e.g. "Permission denied (publickey)"), the remote side has no xpra
// ("no xpra command found": --remote-xpra), ssh died in the middle of the session. Other text
// instead of xpra's protocol (a login banner, a server's plain-text refusal relayed by
// `xpra _proxy`) passes to the session, which reports it (and retries a 3.1 server's refusal
// of rencodeplus with bencode, through a new ssh). The child is always reaped: the destructor closes its input, waits
// a bounded time, then SIGTERM and SIGKILL to its process group.
//
// Threading and lifetime: as Transport (transport.h).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/transport.h"

namespace pixpath::xpra {

struct SshOptions {
  // The ssh command and its options (xpra's --ssh), split like a shell command; "auto" (xpra's
  // default) means "ssh -x".
  std::string command = "ssh -x";
  // Where the remote xpra may be, tried in order (xpra 6's default list, less Windows'); a
  // value is a command name or a path that the remote shell expands.
  std::vector<std::string> remote_xpra = {"xpra", "$XDG_RUNTIME_DIR/xpra/run-xpra",
                                          "/usr/local/bin/xpra"};
  std::string socket_dir;  // --socket-dir=DIR for the remote xpra; empty: its default
};

// Splits a command line as a POSIX shell (and Python's shlex.split) does: blanks separate
// words, '...' is literal, "..." keeps blanks and honours \" \\ \$ \`, \x outside quotes is x.
// Errors: InvalidArgument (an unterminated quote, nothing at all).
[[nodiscard]] Result<std::vector<std::string>> split_command(std::string_view command);

// The remote command, one argument to ssh: "sh -c '...'" as xpra's client builds it.
[[nodiscard]] Result<std::string> remote_proxy_command(const SshOptions& options, int display);

// The whole argv: the ssh command, -l USER, -p PORT (when not 22), -T HOST, the remote command.
[[nodiscard]] Result<std::vector<std::string>> ssh_argv(const Endpoint& endpoint,
                                                        const SshOptions& options);

class SshTransport final : public Transport {
 public:
  // Starts ssh for `endpoint` (Scheme::Ssh). Returns once the child runs; a failure to log in
  // or to find the remote xpra shows on the first read_some(), with ssh's own message.
  [[nodiscard]] static Result<std::unique_ptr<SshTransport>> start(
      const Endpoint& endpoint, const SshOptions& options,
      std::chrono::milliseconds send_timeout = std::chrono::seconds(10));
  // Runs `argv` as the "ssh" child (tests: a fake peer); `what` names it in messages.
  [[nodiscard]] static Result<std::unique_ptr<SshTransport>> start_argv(
      std::vector<std::string> argv, std::string what,
      std::chrono::milliseconds send_timeout = std::chrono::seconds(10));

  ~SshTransport() override;
  SshTransport(const SshTransport&) = delete;
  SshTransport& operator=(const SshTransport&) = delete;

  [[nodiscard]] Result<void> send_all(std::span<const uint8_t> bytes) override;
  [[nodiscard]] Result<ReadResult> read_some(std::span<uint8_t> buffer,
                                             std::chrono::milliseconds timeout) override;
  void shutdown() override;
  void shutdown_send() override;
  std::string describe() const override { return description_; }

  // The child's process id (a pid_t; int on Linux, kept out of this public header).
  int pid() const { return pid_; }

 private:
  SshTransport(int pid, int in, int out, int err, std::string description,
               std::chrono::milliseconds send_timeout)
      : pid_(pid), in_(in), out_(out), err_(err), description_(std::move(description)),
        send_timeout_(send_timeout) {}
  void drain_stderr();
  // The child's exit status once it exited within `wait` (reaps it); -1 if it still runs.
  int reap(std::chrono::milliseconds wait);
  std::string failure(std::string_view what);

  const int pid_;
  const int in_;   // the child's stdin (a socket: MSG_NOSIGNAL, shutdown)
  const int out_;  // the child's stdout
  int err_;        // the child's stderr (a pipe), -1 once it reached eof; reader thread only
  const std::string description_;
  const std::chrono::milliseconds send_timeout_;
  Mutex send_mu_;
  std::atomic<bool> send_closed_{false};
  std::atomic<bool> closed_{false};
  // Reader thread only (and the destructor, after it):
  std::string stderr_tail_;
  uint64_t bytes_read_ = 0;
  std::string first_bytes_;  // the start of stdout while it may be "no xpra command found"
  std::string pending_;      // bytes read but not handed out yet
  bool checked_start_ = false;
  bool reaped_ = false;
  int exit_status_ = -1;
};

}  // namespace pixpath::xpra
