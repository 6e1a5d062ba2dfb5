#include "pixpath/net/xpra/local_sessions.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace

std::vector<std::string> local_socket_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](std::string d) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  const std::string configured = env("XPRA_SOCKET_DIRS");
  for (size_t start = 0; start <= configured.size() && !configured.empty();) {
    const size_t end = std::min(configured.find(':', start), configured.size());
    add(configured.substr(start, end - start));
    start = end + 1;
  }
  if (const std::string xdg = env("XDG_RUNTIME_DIR"); !xdg.empty()) add(xdg + "/xpra");
  add(fmt::format("/run/user/{}/xpra", ::getuid()));
  // xpra takes the home directory from the password database, not $HOME.
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && *pw->pw_dir)
    add(std::string(pw->pw_dir) + "/.xpra");
  add("/run/xpra");
  return dirs;
}

Result<std::vector<std::string>> find_local_sockets(int display) {
  const std::string host = host_name();
  std::vector<std::string> found, looked;
  for (const std::string& dir : local_socket_dirs()) {
    std::vector<std::string> candidates;
    if (!host.empty()) candidates.push_back(fmt::format("{}/{}-{}", dir, host, display));
    candidates.push_back(fmt::format("{}/{}/socket", dir, display));
    for (auto& c : candidates) {
      if (is_socket(c)) {
        if (std::find(found.begin(), found.end(), c) == found.end()) found.push_back(c);
      } else {
        looked.push_back(c);
      }
    }
  }
  if (found.empty()) {
    std::string list;
    for (const auto& l : looked) list += (list.empty() ? "" : ", ") + l;
    return Error(ErrorCode::Unavailable, "xpra", "find local session",
                 fmt::format("no xpra session socket for display :{} (looked at {})", display,
                             list));
  }
  return found;
}

std::string abstract_socket_name(int display) { return fmt::format("@xpra/{}", display); }

}  // namespace pixpath::xpra
