#include "pixpath/net/xpra/session.h"

#include <pwd.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "pixpath/net/xpra/connect.h"
#include "pixpath/net/xpra/draw_parser.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/framing.h"

namespace pixpath::xpra {
namespace {


std::string random_uuid() {
  std::array<uint8_t, 16> r{};
  if (getrandom(r.data(), r.size(), 0) != ssize_t(r.size())) {
    for (auto& b : r) b = uint8_t(std::rand());
  }
  std::string s;
  for (uint8_t b : r) s += fmt::format("{:02x}", b);
  return s;
}

std::string local_user_name() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name) return pw->pw_name;
  if (const char* u = std::getenv("USER"); u && *u) return u;
  return std::to_string(::getuid());
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string SessionEnd::message() const {
  std::string m = error ? "failed" : by_client ? "closed by the client" : "closed by the server";
  if (!reasons.empty()) m += " (server reason: " + joined(reasons) + ")";
  if (error) m += ": " + error->message();
  return m;
}

Session::Session(SessionOptions options, SessionListener& listener, Endpoint endpoint,
                 std::unique_ptr<Transport> connection, PacketEncoder encoder)
    : options_(std::move(options)),
      listener_(listener),
      endpoint_(std::move(endpoint)),
      connection_(std::move(connection)),
      encoder_(encoder) {}

std::shared_ptr<Transport> Session::transport() const {
  MutexLock lock(transport_mu_);
  return connection_;
}

Result<std::unique_ptr<Session>> Session::start(SessionOptions options,
                                                SessionListener& listener) {
  if (options.encodings.empty()) {
    return Error(ErrorCode::InvalidArgument, "xpra", "start session",
                 "no paintable codings given (SessionOptions::encodings is empty)");
  }
  if (options.preferred_encoding.empty()) options.preferred_encoding = options.encodings.front();
  if (options.uuid.empty()) options.uuid = random_uuid();
  if (options.username.empty()) options.username = local_user_name();
  PIXPATH_TRY(Endpoint ep, parse_url(options.url));
  PIXPATH_TRY(auto conn, open_transport(ep, ConnectOptions{options.connect_timeout,
                                                           options.send_timeout, options.transport}));
  const PacketEncoder encoder = options.packet_encoder.value_or(PacketEncoder::Rencodeplus);
  std::unique_ptr<Session> s(
      new Session(std::move(options), listener, std::move(ep), std::move(conn), encoder));
  PIXPATH_CHECK(s->send_packet(Value::list({"hello", s->make_hello()})));
  s->reader_ = std::thread([p = s.get()] { p->reader_loop(); });
  return s;
}

Session::~Session() {
  if (reader_.joinable()) {
    if (on_reader_thread()) {
      // Documented misuse; avoid self-join.
      log_line(LogLevel::Error, "xpra: Session destroyed on its own reader thread (aborting)");
      std::abort();
    }
    (void)disconnect("client exit");
  }
}

void Session::log(LogLevel level, std::string_view line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    PIXPATH_LOG(level, "xpra: {}", line);
  }
}

Result<void> Session::send_packet(const Value& packet) {
  if (state_.load() == State::Closed) {
    return Error(ErrorCode::Cancelled, "xpra", "send", "the session is closed");
  }
  // Our packets are small (acks, pings, the hello): sent uncompressed, in the session's encoder.
  PacketFormat format;
  format.encoder = encoder_.load();
  PIXPATH_TRY(std::vector<uint8_t> bytes, frame_packet(packet, format));
  auto sent = transport()->send_all(bytes);
  if (!sent.ok() && sent.error().code() != ErrorCode::Cancelled) {
    // The stream is unusable (a partial write, a timeout): end the session with the reason.
    bool first = false;
    {
      MutexLock lock(mu_);
      if (!send_error_) {
        send_error_ = sent.error();
        first = true;
      }
    }
    send_failed_ = true;
    if (first) log(LogLevel::Warning, "send failed, ending the session: " + sent.error().message());
  }
  return sent;
}

Result<void> Session::send_ack(const DamageAck& ack) {
  PIXPATH_CHECK(send_packet(Value::list({options_.names.damage_sequence, ack.sequence, ack.wid,
                                         ack.w, ack.h, ack.decode_time_us, ack.message})));
  acks_sent_.fetch_add(1);
  return {};
}

ServerInfo Session::server_info() const {
  MutexLock lock(mu_);
  return server_info_;
}

Result<void> Session::wait_until_ready(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  bool done = cv_.wait_for(mu_, timeout, [&]() PIXPATH_REQUIRES(mu_) {
    return state_.load() == State::Ready || end_.has_value();
  });
  if (state_.load() == State::Ready && !end_) return {};
  if (end_) {
    if (end_->error) return end_->error->within("xpra", "wait for server hello");
    return Error(ErrorCode::Unavailable, "xpra", "wait for server hello",
                 "session ended: " + end_->message());
  }
  (void)done;
  return Error(ErrorCode::Unavailable, "xpra", "wait for server hello",
               fmt::format("no hello from the server within {} ms", timeout.count()));
}

bool Session::wait_until_closed(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  return cv_.wait_for(mu_, timeout, [&]() PIXPATH_REQUIRES(mu_) { return end_.has_value(); });
}

Result<void> Session::disconnect(std::string reason) {
  if (on_reader_thread()) {
    request_disconnect(std::move(reason));
    return {};
  }
  Result<void> sent;
  if (state_.load() != State::Closed) {
    client_disconnect_ = true;
    sent = send_packet(Value::list({"disconnect", reason}));
    // The server closes its side when it has read our disconnect; wait for that, bounded.
    if (sent.ok()) wait_until_closed(options_.disconnect_timeout);
  }
  stop_reading_ = true;
  transport()->shutdown();
  if (reader_.joinable()) reader_.join();
  if (!sent.ok() && sent.error().code() == ErrorCode::Cancelled) return {};  // closed already
  return sent;
}

void Session::request_disconnect(std::string reason) {
  if (state_.load() != State::Closed) {
    client_disconnect_ = true;
    (void)send_packet(Value::list({"disconnect", reason}));
  }
  stop_reading_ = true;
}

void Session::finish(SessionEnd end) {
  {
    MutexLock lock(mu_);
    if (end_) return;
    end_ = end;
    state_ = State::Closed;
  }
  cv_.notify_all();
  transport()->shutdown();
  if (end.error) log(LogLevel::Warning, "session ended: " + end.message());
  listener_.on_closed(end);
}

void Session::reader_loop() {
  reader_id_ = std::this_thread::get_id();
  auto parser = std::make_unique<ChunkParser>(options_.limits);
  std::vector<uint8_t> buffer(256 * 1024);
  std::vector<Packet> packets;
  size_t stream_bytes = 0;  // read from the current connection
  auto last_data = std::chrono::steady_clock::now();
  // Before the server's first packet: it could not read our hello. Try bencode once (3.1),
  // else end the session with what it said.
  std::string first_refusal;  // what the server said to rencodeplus, when bencode was tried
  auto refused = [&](Error why) {
    if (!may_retry_with_bencode()) {
      if (!first_refusal.empty())
        why = Error(why.code(), why.subject(), why.stage(),
                    why.reason() + " (and to rencodeplus: " + first_refusal + ")");
      finish(SessionEnd{client_disconnect_.load(), {}, std::move(why)});
      return false;
    }
    first_refusal = why.reason();
    if (auto r = retry_with_bencode(why); !r.ok()) {
      finish(SessionEnd{false, {}, r.error()});
      return false;
    }
    parser = std::make_unique<ChunkParser>(options_.limits);
    stream_bytes = 0;
    last_data = std::chrono::steady_clock::now();
    return true;
  };
  while (true) {
    if (send_failed_) {
      std::optional<Error> e;
      {
        MutexLock lock(mu_);
        e = send_error_;
      }
      finish(SessionEnd{false, {}, e->within("xpra", "send")});
      return;
    }
    if (stop_reading_) {
      finish(SessionEnd{true, {}, std::nullopt});
      return;
    }
    auto got = transport()->read_some(buffer, std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (got.ok() && got->bytes > 0) last_data = now;
    if (got.ok() && got->bytes == 0 && !got->eof && !parser->idle() &&
        options_.stall_timeout.count() > 0 && now - last_data > options_.stall_timeout) {
      Error e(ErrorCode::Unavailable, "xpra", "read",
              fmt::format("the server stopped sending in the middle of a packet (nothing for "
                          "{} ms)",
                          options_.stall_timeout.count()));
      (void)send_packet(Value::list({"disconnect", "timeout: " + e.reason()}));
      finish(SessionEnd{false, {}, e});
      return;
    }
    if (!got.ok()) {
      finish(SessionEnd{client_disconnect_.load(), {}, got.error()});
      return;
    }
    if (got->eof) {
      if (stream_bytes == 0 && !client_disconnect_.load()) {
        if (refused(Error(ErrorCode::Unavailable, "xpra", "hello",
                          fmt::format("the server closed the connection without a word (it "
                                      "may not read {} packets)",
                                      to_string(encoder_.load())))))
          continue;
        return;
      }
      SessionEnd end{client_disconnect_.load(), {}, std::nullopt};
      if (!end.by_client) {
        end.error = Error(ErrorCode::Unavailable, "xpra", "read",
                          parser->idle() ? "the server closed the connection"
                                         : "the server closed the connection mid-packet");
      }
      finish(std::move(end));
      return;
    }
    if (got->bytes == 0) continue;
    if (stream_bytes == 0 && !any_packet_ && buffer[0] != 'P') {
      Error said = plain_text_reply({buffer.data(), got->bytes}, now + std::chrono::seconds(2));
      if (said.code() != ErrorCode::Protocol && refused(said)) continue;
      if (said.code() == ErrorCode::Protocol) finish(SessionEnd{false, {}, said});
      return;
    }
    stream_bytes += got->bytes;
    packets.clear();
    auto fed = parser->feed({buffer.data(), got->bytes}, packets);
    // Handle the packets completed before a framing error first.
    for (Packet& p : packets) {
      any_packet_ = true;
      packets_received_.fetch_add(1);
      if (p.compressed) compressed_packets_.fetch_add(1);
      if (options_.packet_hook) options_.packet_hook(p);
      auto handled = handle(p);
      if (!handled.ok()) {
        (void)send_packet(Value::list({"disconnect", "protocol error: " + handled.error().message()}));
        finish(SessionEnd{false, {}, handled.error()});
        return;
      }
      if (state_.load() == State::Closed) return;  // a disconnect packet ended it
    }
    if (!fed.ok()) {
      (void)send_packet(Value::list({"disconnect", "protocol error: " + fed.error().message()}));
      finish(SessionEnd{false, {}, fed.error()});
      return;
    }
  }
}

Error Session::plain_text_reply(std::span<const uint8_t> first,
                                std::chrono::steady_clock::time_point deadline) {
  constexpr size_t kMaxLine = 1024;
  std::string line(first.begin(), first.begin() + std::min(first.size(), kMaxLine));
  std::vector<uint8_t> more(256);
  while (line.find('\n') == std::string::npos && line.size() < kMaxLine &&
         std::chrono::steady_clock::now() < deadline) {
    auto got = transport()->read_some(more, std::chrono::milliseconds(100));
    if (!got.ok() || got->eof) break;
    line.append(more.begin(), more.begin() + std::min(got->bytes, kMaxLine - line.size()));
  }
  if (const size_t nl = line.find('\n'); nl != std::string::npos) line.resize(nl);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  const bool text = !line.empty() && std::all_of(line.begin(), line.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
  if (!text) {
    // Protocol: not an xpra peer at all; never a reason to try another encoder.
    return Error(ErrorCode::Protocol, "xpra", "parse chunk",
                 fmt::format("the stream starts with byte 0x{:02x}, not 'P': not an xpra peer ({})",
                             first.empty() ? 0 : first[0], transport()->describe()));
  }
  std::string_view said = line;
  for (std::string_view prefix : {"disconnect: ", "disconnect "}) {
    if (said.starts_with(prefix)) {
      said.remove_prefix(prefix.size());
      break;
    }
  }
  return Error(ErrorCode::Unavailable, "xpra", "hello",
               fmt::format("the server refused the connection: {}", said));
}

bool Session::may_retry_with_bencode() const {
  return !options_.packet_encoder && encoder_.load() == PacketEncoder::Rencodeplus &&
         !retried_encoder_ && !any_packet_ && !challenge_answered_ && !stop_reading_.load() &&
         !client_disconnect_.load();
}

void Session::close_refused_connection(Transport& old) {
  // The refused connection is closed, and its end seen, BEFORE the next one is opened. xpra
  // 3.1 closes a refused socket without shutting it down, while its reader thread still waits
  // in poll() on it; our close wakes that thread, which then reads from the descriptor's
  // NUMBER, whatever socket holds it by then. Opened before, or just after, the retry
  // connection could be that socket: 3.1's dead TLS reader then swallowed our ClientHello or
  // bencode hello and answered with an alert under the old connection's keys ("decryption
  // failed or bad record mac" in 11 attaches of 30; "invalid alert" in 3 of 30 without the
  // grace period). The grace period lets the woken thread reach its read while the number is
  // still free (it waits for Python's GIL first); a client cannot see that moment.
  old.shutdown_send();
  std::vector<uint8_t> sink(4096);
  const auto deadline = std::chrono::steady_clock::now() + kRefusedCloseWait;
  while (std::chrono::steady_clock::now() < deadline) {
    auto got = old.read_some(sink, std::chrono::milliseconds(50));
    if (!got.ok() || got->eof) break;
  }
  old.shutdown();
  std::this_thread::sleep_for(kRefusedCloseGrace);
}

Result<void> Session::retry_with_bencode(const Error& why) {
  retried_encoder_ = true;
  log(LogLevel::Debug,
      fmt::format("{}; connecting again with bencode packets (xpra 3.x)", why.reason()));
  close_refused_connection(*transport());
  PIXPATH_TRY(auto fresh, open_transport(endpoint_, ConnectOptions{options_.connect_timeout,
                                                                   options_.send_timeout,
                                                                   options_.transport}));
  {
    MutexLock lock(transport_mu_);
    connection_ = std::shared_ptr<Transport>(std::move(fresh));
  }
  encoder_ = PacketEncoder::Bencode;
  return send_packet(Value::list({"hello", make_hello()}));
}

Result<void> Session::handle(Packet& p) {
  const PacketNames& n = options_.names;
  const std::string& t = p.type;
  if (t == n.draw) {
    handle_draw(p);
  } else if (t == n.ping) {
    handle_ping(p);
  } else if (t == n.hello) {
    return handle_hello(p);
  } else if (t == n.challenge) {
    return handle_challenge(p);
  } else if (t == n.disconnect) {
    SessionEnd end;
    for (size_t i = 1; i < p.body.as_list().size(); ++i) {
      const Value& v = p.body.as_list()[i];
      end.reasons.push_back(v.is_bytes() ? std::string(v.as_view()) : v.debug_string());
    }
    end.by_client = client_disconnect_.load();
    log((end.by_client ? "server confirmed our disconnect: " : "server disconnected us: ") +
        joined(end.reasons));
    finish(std::move(end));
  } else if (t == n.new_window) {
    handle_new_window(p, false);
  } else if (t == n.new_override_redirect) {
    handle_new_window(p, true);
  } else if (t == n.lost_window) {
    FieldReader r(t, p.body);
    auto wid = r.int_at(1, "wid");
    if (!wid.ok()) {
      log(LogLevel::Warning, wid.error().message() + " (packet ignored)");
    } else if (auto it = windows_.find(*wid); it != windows_.end()) {
      window_pixels_ -= int64_t(it->second.w) * it->second.h;
      windows_.erase(it);
      listener_.on_window_lost(*wid);
    } else {
      refused_windows_.erase(*wid);
      log(LogLevel::Warning, fmt::format("lost-window {}: no such window (ignored)", *wid));
    }
  } else if (t == n.window_metadata) {
    FieldReader r(t, p.body);
    auto wid = r.int_at(1, "wid");
    auto md = r.dict_at(2, "metadata");
    if (!wid.ok() || !md.ok()) {
      log(LogLevel::Warning, (wid.ok() ? md.error() : wid.error()).message() + " (packet ignored)");
    } else {
      WindowMetadata m;
      m.wid = *wid;
      m.metadata = **md;
      if (const Value* title = m.metadata.find("title"); title && title->is_bytes()) {
        m.title = std::string(title->as_view());
      }
      listener_.on_metadata(m);
    }
  } else if (t == n.window_move_resize) {
    handle_geometry(p, false);
  } else if (t == n.configure_override_redirect) {
    handle_geometry(p, true);
  } else if (t == n.raise_window) {
    FieldReader r(t, p.body);
    auto wid = r.int_at(1, "wid");
    if (wid.ok()) listener_.on_raise(*wid);
    else log(LogLevel::Warning, wid.error().message() + " (packet ignored)");
  } else if (t == n.cursor) {
    if (auto c = parse_cursor_packet(p.body); c.ok()) listener_.on_cursor(*c);
    else log(LogLevel::Warning, c.error().message() + " (packet ignored)");
  } else if (t == n.encodings || t == n.encoding_set) {
    handle_encodings(p);
  } else if (t == n.ping_echo || t == n.startup_complete) {
    // Nothing to do: we send no pings; startup-complete only marks the end of the initial
    // window list.
  } else {
    // Logged once per type, for at most 64 types: a server inventing a new type for every
    // packet must not grow this list (or the log) without bound.
    constexpr size_t kMaxLoggedTypes = 64;
    if (unknown_types_logged_.size() < kMaxLoggedTypes &&
        std::find(unknown_types_logged_.begin(), unknown_types_logged_.end(), t) ==
            unknown_types_logged_.end()) {
      unknown_types_logged_.push_back(t);
      log(LogLevel::Debug, fmt::format("ignoring {} packets (not used by a view-only client){}",
                      Value(t).debug_string(60),
                      unknown_types_logged_.size() == kMaxLoggedTypes
                          ? "; further unknown packet types are ignored without a log line"
                          : ""));
    }
  }
  return {};
}

Result<void> Session::handle_challenge(const Packet& p) {
  if (challenge_answered_) {
    return Error(ErrorCode::Protocol, "xpra", "authenticate",
                 "the server sent a second challenge (the password was probably wrong)");
  }
  challenge_answered_ = true;
  state_ = State::Authenticating;
  PIXPATH_TRY(std::string password, load_password(options_.password));
  PIXPATH_TRY(ChallengeAnswer answer, answer_challenge(p.body, password));
  Value caps = make_hello();
  caps.set("challenge_response", answer.response);
  caps.set("challenge_client_salt", answer.client_salt);
  log("answering the server's password challenge (" + answer.digest + ")");
  return send_packet(Value::list({"hello", caps}));
}

void Session::handle_ping(const Packet& p) {
  FieldReader r(p.type, p.body);
  auto echo = r.int_at(1, "echo_time");
  if (!echo.ok()) {
    log(LogLevel::Warning, echo.error().message() + " (ping not answered)");
    return;
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = 0;
  // ping_echo: echoed time, three load averages x1000 (ints), our latency to the server
  // (-1: not measured; a view-only client does not ping).
  auto sent = send_packet(Value::list({options_.names.ping_echo, *echo, int64_t(load[0] * 1000),
                                       int64_t(load[1] * 1000), int64_t(load[2] * 1000), -1}));
  if (sent.ok()) pings_answered_.fetch_add(1);
}

void Session::handle_draw(Packet& p) {
  draws_received_.fetch_add(1);
  auto draw = parse_draw(p);
  if (draw.ok() && refused_windows_.count(draw->wid)) {
    // Not ours to paint: skipped (0), so the server does not schedule refreshes for it.
    auto sent = send_ack(DamageAck{draw->sequence, draw->wid, draw->w, draw->h, 0,
                                   "window refused (client limits)"});
    if (!sent.ok()) log(LogLevel::Warning, sent.error().message());
    return;
  }
  if (draw.ok()) {
    listener_.on_draw(std::move(*draw));
    return;
  }
  draws_rejected_.fetch_add(1);
  log(LogLevel::Warning, draw.error().message());
  if (auto ack = ack_for_rejected_draw(p.body, draw.error())) {
    auto sent = send_ack(*ack);
    if (!sent.ok()) log(LogLevel::Warning, sent.error().message());
  } else {
    log(LogLevel::Warning, "rejected draw has no readable packet_sequence; it cannot be acknowledged");
  }
}

}  // namespace pixpath::xpra
