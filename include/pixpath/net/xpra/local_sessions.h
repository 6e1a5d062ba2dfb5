// Local sessions: where an xpra server on this machine listens for display :N, the way
// `xpra attach :N` finds it. Servers put a Unix socket in each of their socket directories:
//   xpra 3.1: DIR/HOSTNAME-N
//   xpra 6.x: DIR/HOSTNAME-N too, and its session directory DIR/N/socket
// where DIR is, in order: the directories of XPRA_SOCKET_DIRS (':'-separated; the
// --socket-dirs of a server started with them), $XDG_RUNTIME_DIR/xpra, /run/user/UID/xpra,
// ~/.xpra (the home directory of the password database, as xpra takes it) and /run/xpra.
// 6.x also listens on the abstract socket "@xpra/N" (abstract_socket_name()). A socket left
// behind by a server that has ended refuses connections; the caller tries the candidates in
// order (connect.h does).
#pragma once

#include <string>
#include <vector>

#include "pixpath/core/result.h"

namespace pixpath::xpra {

// The socket directories searched, in order, without duplicates (existing or not).
std::vector<std::string> local_socket_dirs();

// The sockets that exist for display N, most likely first. Fails (Unavailable, subject
// "xpra", stage "find local session") naming every path looked at when there is none.
[[nodiscard]] Result<std::vector<std::string>> find_local_sockets(int display);

// "@xpra/N": xpra 6.x's abstract Unix socket for display N (SocketTransport::connect_unix
// reads a leading '@' as the abstract namespace).
std::string abstract_socket_name(int display);

}  // namespace pixpath::xpra
