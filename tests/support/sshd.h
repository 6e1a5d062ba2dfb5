// Test support: a private OpenSSH server (Debian's openssh-server, /usr/sbin/sshd) on a free
// loopback port, for the ssh:// transport tests. Everything lives in the test's directory: a
// host key and a client key made by ssh-keygen, authorized_keys, an sshd_config (key login
// only, UsePAM no, StrictModes no: the files belong to whoever runs the test), the pid file
// and the server's log. The server runs in the foreground (-D) as a BackgroundProcess and is
// stopped (its process group killed) when the object goes. The login user is whoever runs the
// test (root in CI).
//
// client_command(): the --ssh value that logs in with the generated key and trusts the host
// key without asking (-F /dev/null: the user's own ssh configuration is not read).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "net/xpra/testing/xpra_server.h"
#include "support/processes.h"

namespace pixpath::testing {

inline std::string sshd_binary() { return "/usr/sbin/sshd"; }

class TestSshd {
 public:
  // Ok, or the reason the server cannot run here (for GTEST_SKIP/FAIL). `set_env`: KEY=VALUE
  // pairs the server sets for every login (sshd_config SetEnv).
  static std::unique_ptr<TestSshd> start(const std::string& dir, std::string* why,
                                         const std::vector<std::string>& set_env = {}) {
    if (::access(sshd_binary().c_str(), X_OK) != 0) {
      *why = "no /usr/sbin/sshd (scripts/setup installs openssh-server)";
      return nullptr;
    }
    auto s = std::unique_ptr<TestSshd>(new TestSshd());
    s->dir_ = dir + "/sshd";
    ::mkdir(s->dir_.c_str(), 0700);
    auto port = xpra::testing::free_loopback_port();
    if (!port.ok()) {
      *why = port.error().message();
      return nullptr;
    }
    s->port_ = *port;
    for (const char* key : {"host_key", "client_key"}) {
      auto r = run_process({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", s->dir_ + "/" + key},
                           s->dir_, std::chrono::seconds(30));
      if (r.exit_code != 0) {
        *why = "ssh-keygen failed: " + r.err;
        return nullptr;
      }
    }
    {
      std::ofstream(s->dir_ + "/authorized_keys") << read_text(s->dir_ + "/client_key.pub");
    }
    // Privilege separation needs this directory (root only; a non-root sshd does without).
    if (::geteuid() == 0) ::mkdir("/run/sshd", 0755);
    const passwd* pw = ::getpwuid(::geteuid());
    s->user_ = pw ? pw->pw_name : "root";
    std::ofstream conf(s->dir_ + "/sshd_config");
    conf << "Port " << s->port_ << "\nListenAddress 127.0.0.1\n"
         << "HostKey " << s->dir_ << "/host_key\n"
         << "AuthorizedKeysFile " << s->dir_ << "/authorized_keys\n"
         << "PidFile " << s->dir_ << "/sshd.pid\n"
         << "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
         << "UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
         << "AllowUsers " << s->user_ << "\nX11Forwarding no\nAllowTcpForwarding no\n"
         << "PrintMotd no\nLogLevel VERBOSE\n";
    for (const auto& e : set_env) conf << "SetEnv " << e << "\n";
    conf.close();
    s->server_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{sshd_binary(), "-D", "-e", "-f", s->dir_ + "/sshd_config"}, s->dir_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      if (!s->server_->running()) {
        auto r = s->server_->wait(std::chrono::seconds(1));
        *why = "sshd exited at start: " + r.err;
        return nullptr;
      }
      if (port_accepts(s->port_)) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    *why = "sshd did not listen within 15 s";
    return nullptr;
  }

  int port() const { return port_; }
  const std::string& user() const { return user_; }
  // ssh://USER@127.0.0.1:PORT/N
  std::string url(int display) const {
    return "ssh://" + user_ + "@127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(display);
  }
  std::string client_command() const {
    return "ssh -F /dev/null -i " + dir_ + "/client_key -o IdentitiesOnly=yes -o BatchMode=yes "
           "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR";
  }
  std::string client_key() const { return dir_ + "/client_key"; }

 private:
  TestSshd() = default;
  static bool port_accepts(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
  }
  std::string dir_, user_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> server_;
};

}  // namespace pixpath::testing
