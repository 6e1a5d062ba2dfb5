// xpra::Session: a view-only client session with a real xpra server, over TCP or a local
// Unix socket (endpoint.h).
//
// Servers: xpra 6.x (rencodeplus packets, lz4/brotli compression, the codings in a separate
// "encodings" packet) and xpra 3.1 (bencode, zlib/lz4, delta buckets). With the packet encoder
// left to the session (SessionOptions::packet_encoder empty), it says hello in rencodeplus
// with 6.x's capabilities; a server that cannot read that (3.1 answers with a plain-text line)
// is connected to once more, in bencode with 3.1's capabilities, with a log line saying so.
// Whatever a server says when it refuses us (a plain-text line, a "disconnect" packet, an
// authentication failure) ends the session with that text as the reason.
//
// What it does on its own: sends "hello" with the capabilities a view-only client needs,
// answers a password "challenge", maps every new window ("map-window"), answers every "ping"
// with "ping_echo", acknowledges draws it had to reject (decode_time -1), logs and ignores
// packet types it does not know. What it hands to its owner: windows, metadata, geometry and
// every parsed draw through a SessionListener. The owner owes exactly one send_ack() per
// draw it received through on_draw(); missing acks make the server throttle and then stall.
//
// Threading rules:
//   - The session owns one reader thread. Every SessionListener callback and every
//     packet_hook call runs on that thread, one at a time, in arrival order.
//   - send_ack(), send_packet(), state(), wait_until_ready() may be called from any thread,
//     including from inside a listener callback (e.g. an immediate ack).
//   - disconnect() and the destructor stop and join the reader thread. Call them from any
//     thread except the reader thread (a callback may call request_disconnect() instead).
//   - The listener must outlive the session.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pixpath/core/log.h"
#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/auth.h"
#include "pixpath/net/xpra/chunk_parser.h"
#include "pixpath/net/xpra/input.h"
#include "pixpath/net/xpra/packet_format.h"
#include "pixpath/net/xpra/packet_names.h"
#include "pixpath/net/xpra/connect.h"
#include "pixpath/net/xpra/transport.h"
#include "pixpath/net/xpra/value.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::xpra {

struct ServerInfo {
  std::string version;                 // "3.1.3", "6.5"
  std::vector<std::string> encodings;  // what the server can send (6.x: from its "encodings"
                                       // packet, which follows the hello)
  PacketEncoder packet_encoder = PacketEncoder::Bencode;  // what the session speaks with it
  Value caps;                          // the whole hello dict
};

struct WindowInfo {
  int64_t wid = 0;
  int x = 0, y = 0, w = 0, h = 0;
  bool override_redirect = false;
  std::string title;  // metadata "title", may be empty
  Value metadata;     // the whole metadata dict
};

struct WindowMetadata {
  int64_t wid = 0;
  std::optional<std::string> title;  // present when this update carries "title"
  Value metadata;                    // the whole update dict
};

struct WindowGeometry {
  int64_t wid = 0;
  int x = 0, y = 0, w = 0, h = 0;
  bool override_redirect = false;  // from configure-override-redirect
};

// How a session ended.
struct SessionEnd {
  bool by_client = false;            // we called disconnect()
  std::vector<std::string> reasons;  // the server's "disconnect" reasons, if it sent any
  std::optional<Error> error;        // a protocol / network / auth failure, if any
  std::string message() const;
};

class SessionListener {
 public:
  virtual ~SessionListener() = default;
  virtual void on_server_hello(const ServerInfo&) {}
  // xpra 6.x: the server's codings arrived (ServerInfo::encodings); not called for 3.1, whose
  // hello carries them.
  virtual void on_server_encodings(const std::vector<std::string>& /*encodings*/) {}
  virtual void on_window_new(const WindowInfo&) {}
  virtual void on_window_lost(int64_t /*wid*/) {}
  virtual void on_metadata(const WindowMetadata&) {}
  virtual void on_move_resize(const WindowGeometry&) {}
  virtual void on_raise(int64_t /*wid*/) {}
  // The server's cursor changed (sent only to a client with input: SessionOptions::input).
  virtual void on_cursor(const Cursor&) {}
  // A parsed draw. The listener (or whoever it hands the packet to) must send exactly one
  // DamageAck for draw.sequence through Session::send_ack().
  virtual void on_draw(DrawPacket&& draw) = 0;
  // The last callback; the session is closed (sends fail with Cancelled).
  virtual void on_closed(const SessionEnd&) {}
};

// Sees every decoded packet right after it arrived, before the session handles it; for
// recording. Runs on the reader thread; Packet::received is the arrival time.
using PacketHook = std::function<void(const Packet&)>;
// One log line (no trailing newline). Runs on the reader thread or the caller's thread.
// Receives every line the session logs, whatever its level and the log threshold.
using LogSink = std::function<void(std::string_view)>;

struct SessionOptions {
  std::string url;                     // endpoint.h: tcp://, ssl://, ws://, wss://, ssh://, socket:///PATH, :N
  std::vector<std::string> encodings;  // codings the client can paint (required, non-empty)
  std::string preferred_encoding;      // "encoding"; default: the first of `encodings`
  std::vector<std::string> rgb_formats{"BGRX", "BGRA", "RGBX", "RGBA", "RGB", "BGR"};
  int quality = -1;                    // -1: let the server choose
  // Encoding speed 1..100 (-1: the server's, which it tunes as it goes): lower asks for more
  // compression. (A 6.x server would look for scrolled regions only below 50; "scroll" is not
  // offered to 6.x, see session_hello.cc.)
  int speed = -1;
  std::vector<std::string> delta_encodings{"rgb24", "rgb32", "png"};  // "supports_delta"
  // Video codings (h264, vp8, vp9): the input colourspaces each takes ("full_csc_modes"),
  // advertised only for the codings also in `encodings`; empty: no video. The client fills it
  // from the codings this build decodes (codecs::video_csc_modes).
  std::map<std::string, std::vector<std::string>> video_csc_modes;
  int video_max_width = 8192, video_max_height = 8192;  // "video_max_size"
  bool video_scaling = true;  // the server may send scaled_size frames (painted scaled)
  int delta_buckets = 5;               // 0 disables delta
  int desktop_width = 1920, desktop_height = 1080;
  bool share = true;                   // share the session with other clients
  // Take the session over from another client. On by default, as xpra's own client: 6.x
  // refuses steal=false even when no other client is attached.
  bool steal = true;
  // The packet encoder: empty = rencodeplus, then bencode once if the server cannot read it.
  std::optional<PacketEncoder> packet_encoder;
  bool lz4 = true, zlib = true, brotli = true;  // packet compression we accept
  // Sent as "username" (6.x's file authentication checks it when the server runs as root);
  // default: the local user's name.
  std::string username;
  std::string client_type = "pixpath";
  std::string uuid;                    // default: a random one
  PasswordSource password;             // used only when the server sends a challenge
  Value extra_caps;                    // a dict merged into hello last (may override)
  // Keyboard and pointer input (input.h): the hello says so and carries this keymap; the owner
  // sends the input packets. Empty: a view-only client (no keyboard, no pointer).
  std::optional<Keymap> input;
  FrameLimits limits;
  // Windows: at most max_windows at once (normal and override-redirect) and at most
  // max_window_pixels of window area in all (w x h summed; a BGRX framebuffer costs 4 bytes a
  // pixel). A window over either limit is refused with a log line: not mapped, not reported,
  // and its draws are acknowledged 0 ("window refused") by the session itself; a resize over
  // the area limit is ignored with a log line. 0 = no limit.
  int max_windows = 64;
  int64_t max_window_pixels = int64_t{128} << 20;
  // A send (ack, ping_echo, ...) that cannot write for this long fails, and the session ends
  // with that reason (the server stopped reading).
  std::chrono::milliseconds send_timeout{10000};
  // A packet started but not finished for this long ends the session ("the server stopped
  // sending in the middle of a packet"). 0 = wait for ever.
  std::chrono::milliseconds stall_timeout{30000};
  std::chrono::milliseconds connect_timeout{5000};
  TransportOptions transport;          // TLS verification, the ssh command (connect.h)
  std::chrono::milliseconds disconnect_timeout{2000};  // wait for the server to close
  PacketHook packet_hook;
  LogSink log;                         // default: the pixpath log (core/log.h)
  PacketNames names = kXpra31Names;
};

class Session {
 public:
  enum class State { Connecting, Authenticating, Ready, Closed };

  // Connects, sends hello and starts the reader thread; returns once hello is sent. Use
  // wait_until_ready() to wait for the server's hello.
  [[nodiscard]] static Result<std::unique_ptr<Session>> start(SessionOptions options,
                                                             SessionListener& listener);
  ~Session();  // disconnect("client exit") if still open; joins the reader
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Ok once the server's hello was handled; the end's error once the session closed first;
  // a Cancelled-free Unavailable error after `timeout`.
  [[nodiscard]] Result<void> wait_until_ready(std::chrono::milliseconds timeout);
  // Waits until the session is closed (by either side), up to `timeout`; true when closed.
  bool wait_until_closed(std::chrono::milliseconds timeout);

  // Sends "damage-sequence" for one draw. Any thread.
  [[nodiscard]] Result<void> send_ack(const DamageAck& ack);
  // Sends any packet (a list whose first item is the type). Any thread.
  [[nodiscard]] Result<void> send_packet(const Value& packet);

  // Sends "disconnect" with `reason`, waits (bounded by disconnect_timeout) for the server to
  // close, closes the socket and joins the reader. Not from the reader thread.
  Result<void> disconnect(std::string reason = "client exit");
  // From a listener callback: sends "disconnect" and stops reading; the owner still calls
  // disconnect() or destroys the session to join the reader.
  void request_disconnect(std::string reason);

  State state() const { return state_.load(); }
  // The server hello, once Ready (empty before).
  ServerInfo server_info() const;
  // Counters, readable from any thread.
  uint64_t packets_received() const { return packets_received_.load(); }
  uint64_t draws_received() const { return draws_received_.load(); }
  uint64_t draws_rejected() const { return draws_rejected_.load(); }
  uint64_t acks_sent() const { return acks_sent_.load(); }
  uint64_t pings_answered() const { return pings_answered_.load(); }
  uint64_t compressed_packets() const { return compressed_packets_.load(); }
  uint64_t windows_refused() const { return windows_refused_.load(); }

 private:
  Session(SessionOptions options, SessionListener& listener, Endpoint endpoint,
          std::unique_ptr<Transport> connection, PacketEncoder encoder);
  Value make_hello() const;
  Value make_hello_6x() const;
  Value make_hello_31() const;
  std::shared_ptr<Transport> transport() const;
  // Before any packet of the server: the stream did not start with an xpra chunk. Reads the
  // server's plain-text line (bounded) and returns it as the error that ends the session.
  Error plain_text_reply(std::span<const uint8_t> first, std::chrono::steady_clock::time_point deadline);
  // Whether a failure before the server's hello means "it cannot read this packet encoder"
  // and the session may try bencode once.
  bool may_retry_with_bencode() const;
  // Connects again with bencode (reader thread). Ordering rule: the refused connection is
  // closed first, its end awaited (bounded: kRefusedCloseWait) and kRefusedCloseGrace let
  // pass; never left open across the new connect (xpra 3.1 would read the new connection
  // with the old one's reader: session.cc, close_refused_connection).
  Result<void> retry_with_bencode(const Error& why);
  void close_refused_connection(Transport& old);
  static constexpr std::chrono::milliseconds kRefusedCloseWait{1000};
  static constexpr std::chrono::milliseconds kRefusedCloseGrace{250};
  void handle_encodings(const Packet& packet);
  void reader_loop();
  Result<void> handle(Packet& packet);  // an error ends the session
  Result<void> handle_hello(const Packet& packet);
  Result<void> handle_challenge(const Packet& packet);
  void handle_new_window(const Packet& packet, bool override_redirect);
  void handle_draw(Packet& packet);
  void handle_ping(const Packet& packet);
  void handle_geometry(const Packet& packet, bool override_redirect);
  // Why a new window cannot be accepted under the limits, if it cannot (reader thread).
  std::optional<std::string> refuse_window(int64_t wid, int w, int h) const;
  void finish(SessionEnd end);
  // To options_.log when set, else to the pixpath log (core/log.h) at `level`.
  void log(LogLevel level, std::string_view line) const;
  void log(std::string_view line) const { log(LogLevel::Info, line); }
  bool on_reader_thread() const { return std::this_thread::get_id() == reader_id_.load(); }

  SessionOptions options_;
  SessionListener& listener_;
  const Endpoint endpoint_;
  mutable Mutex transport_mu_;
  std::shared_ptr<Transport> connection_ PIXPATH_GUARDED_BY(transport_mu_);
  std::atomic<PacketEncoder> encoder_;
  bool retried_encoder_ = false;     // reader thread only
  bool any_packet_ = false;          // reader thread only: a packet of the server was parsed
  std::thread reader_;
  std::atomic<std::thread::id> reader_id_{};
  std::atomic<State> state_{State::Connecting};
  std::atomic<bool> stop_reading_{false};
  std::atomic<bool> client_disconnect_{false};
  bool challenge_answered_ = false;  // reader thread only
  std::vector<std::string> unknown_types_logged_;  // reader thread only
  struct WindowArea {
    int w = 0, h = 0;
  };
  std::map<int64_t, WindowArea> windows_;  // reader thread only: windows reported
  int64_t window_pixels_ = 0;              // reader thread only: their area
  std::set<int64_t> refused_windows_;      // reader thread only (bounded)
  // A send failed for good (e.g. timed out): the reader ends the session with it.
  std::optional<Error> send_error_ PIXPATH_GUARDED_BY(mu_);
  std::atomic<bool> send_failed_{false};

  mutable Mutex mu_;  // guards the members that name it; cv_ waits on it
  std::condition_variable_any cv_;
  ServerInfo server_info_ PIXPATH_GUARDED_BY(mu_);
  std::optional<SessionEnd> end_ PIXPATH_GUARDED_BY(mu_);

  std::atomic<uint64_t> packets_received_{0}, draws_received_{0}, draws_rejected_{0},
      acks_sent_{0}, pings_answered_{0}, compressed_packets_{0}, windows_refused_{0};
};

}  // namespace pixpath::xpra
