// open_transport(): the byte stream to an Endpoint (endpoint.h). A local display (:N) tries
// each of its sockets (local_sessions.h) in turn, so a stale socket of an ended session does
// not hide the live one.
#pragma once

#include <chrono>
#include <memory>

#include "pixpath/core/result.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/transport.h"

namespace pixpath::xpra {

struct ConnectOptions {
  std::chrono::milliseconds timeout{5000};       // the whole connect, name lookup included
  std::chrono::milliseconds send_timeout{10000};  // Transport::send_all's bound
};

[[nodiscard]] Result<std::unique_ptr<Transport>> open_transport(const Endpoint& endpoint,
                                                                const ConnectOptions& options);

}  // namespace pixpath::xpra
