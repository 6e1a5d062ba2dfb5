// The packet type names pixpath speaks, in one table so that a newer server generation
// (which renames e.g. "draw" to "window-draw" and "damage-sequence" to "window-ack") can be
// added as a second table without touching the session logic.
#pragma once

#include <string_view>

namespace pixpath::xpra {

struct PacketNames {
  // server -> client
  std::string_view hello = "hello";
  std::string_view challenge = "challenge";
  std::string_view disconnect = "disconnect";
  std::string_view new_window = "new-window";
  std::string_view new_override_redirect = "new-override-redirect";
  std::string_view lost_window = "lost-window";
  std::string_view window_metadata = "window-metadata";
  std::string_view window_move_resize = "window-move-resize";
  std::string_view configure_override_redirect = "configure-override-redirect";
  std::string_view raise_window = "raise-window";
  std::string_view cursor = "cursor";
  std::string_view draw = "draw";
  std::string_view ping = "ping";
  std::string_view ping_echo = "ping_echo";
  std::string_view startup_complete = "startup-complete";
  // xpra 6.x: the server's codings, after its hello ("encoding-set" without backwards
  // compatibility).
  std::string_view encodings = "encodings";
  std::string_view encoding_set = "encoding-set";
  // client -> server
  std::string_view map_window = "map-window";
  std::string_view damage_sequence = "damage-sequence";
};

// xpra 3.1 (Debian 12's xpra 3.1.x).
inline constexpr PacketNames kXpra31Names{};

}  // namespace pixpath::xpra
