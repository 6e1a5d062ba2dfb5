// The hello exchange: the capabilities pixpath sends, and what it reads from the server's.
#include <algorithm>

#include <fmt/format.h>

#include "pixpath/net/xpra/draw_parser.h"
#include "pixpath/net/xpra/session.h"

namespace pixpath::xpra {
namespace {

// The version we say we speak: 3.1 reads it as dotted integers and refuses anything older than
// 0.14.10 (it accepts newer ones); 6.x refuses anything older than 3.0 and warns on 3.1.x
// ("outdated"). "6.5" is accepted silently by both; pixpath names itself in client_type.
constexpr std::string_view kClientVersion = "6.5";

// Authentication: HMAC only (auth.h: sha512 ... sha1), for both the response and the salt
// combination (6.x refuses the xor and des salt digests); the server picks the strongest.
Value digests() {
  return Value::string_list(std::vector<std::string>(kSupportedDigests.begin(), kSupportedDigests.end()));
}

// A view-only client: no input, clipboard, notifications, trays, files, printing or webcam
// (both generations read these flat keys).
void set_view_only(Value& caps) {
  for (const char* feature : {"keyboard", "mouse", "clipboard", "notifications", "cursors", "bell",
                              "system_tray", "file-transfer", "printing", "webcam"})
    caps.set(feature, false);
}

// 6.x treats jpeg, jpega and webp as "video" encoders: it uses them only for the colourspaces a
// client lists here (else it sends png). pixpath's decoders take each coding's whole file, so
// any colourspace the server encodes from is fine; these are the ones xpra's own client lists.
// Video codings (h264, vp8, vp9) are listed with the colourspaces their decoder takes
// (SessionOptions::video_csc_modes): a server encodes video only in those.
Value full_csc_modes(const SessionOptions& o) {
  const std::vector<std::string>& encodings = o.encodings;
  Value modes{Value::Dict{}};
  auto has = [&](std::string_view e) {
    return std::find(encodings.begin(), encodings.end(), e) != encodings.end();
  };
  if (has("jpeg")) modes.set("jpeg", Value::string_list({"BGRX", "BGRA", "YUV420P"}));
  if (has("jpega")) modes.set("jpega", Value::string_list({"BGRA", "RGBA"}));
  if (has("webp")) modes.set("webp", Value::string_list({"BGRX", "BGRA"}));
  for (const auto& [coding, csc] : o.video_csc_modes)
    if (has(coding) && !csc.empty()) modes.set(coding, Value::string_list(csc));
  return modes;
}

bool offers_video(const SessionOptions& o) {
  for (const auto& [coding, csc] : o.video_csc_modes)
    if (!csc.empty() &&
        std::find(o.encodings.begin(), o.encodings.end(), coding) != o.encodings.end())
      return true;
  return false;
}

// The codings offered to a 6.x server: all but "scroll". xpra 6.5.5 cannot send scroll draws:
// its encode_scrolling() calls queue_damage_packet() without the "options" argument, and the
// TypeError drops the whole screen update, so a client that offers scroll gets stale windows
// as soon as a window scrolls while the encoding speed is below 50 (the server starts at 40).
// xpra's own 6.x client never offers scroll; neither do we (docs/xpra-servers.md).
std::vector<std::string> codings_for_6x(const std::vector<std::string>& encodings) {
  std::vector<std::string> out;
  for (const auto& e : encodings)
    if (e != "scroll") out.push_back(e);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

Value Session::make_hello() const {
  Value caps = encoder_.load() == PacketEncoder::Rencodeplus ? make_hello_6x() : make_hello_31();
  if (options_.extra_caps.is_dict()) {
    for (const auto& [k, v] : options_.extra_caps.as_dict()) {
      if (k.is_bytes()) caps.set(k.as_view(), v);
    }
  }
  return caps;
}

// xpra 6.x (rencodeplus): capabilities are read flat ("a.b") or nested ({"a": {"b": ...}}),
// except the encoding settings, which 6.x reads only from the nested "encoding" dict.
Value Session::make_hello_6x() const {
  const SessionOptions& o = options_;
  Value caps{Value::Dict{}};
  caps.set("version", kClientVersion);
  caps.set("client_type", o.client_type);
  caps.set("uuid", o.uuid);
  caps.set("username", o.username);
  caps.set("rencodeplus", true);
  caps.set("encoders", Value::string_list({"rencodeplus"}));
  std::vector<std::string> compressors;
  if (o.lz4) compressors.push_back("lz4");
  if (o.brotli) compressors.push_back("brotli");
  compressors.push_back("none");
  caps.set("compressors", Value::string_list(compressors));
  caps.set("lz4", o.lz4);
  caps.set("brotli", o.brotli);
  caps.set("compression_level", 1);
  caps.set("share", o.share);
  caps.set("steal", o.steal);
  caps.set("windows", true);
  Value window{Value::Dict{}};
  window.set("enabled", true);
  caps.set("window", window);
  set_view_only(caps);
  if (o.input) set_input_caps(caps, *o.input, true);
  caps.set("audio", false);
  // 6.x pings a client only when asked to; the pings keep a dead connection from lingering.
  caps.set("ping", true);
  caps.set("desktop_size", Value::list({o.desktop_width, o.desktop_height}));
  const std::vector<std::string> codings = codings_for_6x(o.encodings);
  caps.set("encodings", Value::string_list(codings));
  caps.set("encodings.core", Value::string_list(codings));
  Value encoding{Value::Dict{}};
  encoding.set("", o.preferred_encoding);
  encoding.set("setting", o.preferred_encoding);
  encoding.set("core", Value::string_list(codings));
  encoding.set("options", Value::string_list(codings));
  encoding.set("full_csc_modes", full_csc_modes(o));
  if (offers_video(o)) {
    encoding.set("video_max_size", Value::list({o.video_max_width, o.video_max_height}));
    encoding.set("video_b_frames", Value::list({}));  // every frame is painted as it comes
    encoding.set("video_reinit", true);
    encoding.set("video_scaling", o.video_scaling);
  }
  encoding.set("rgb_formats", Value::string_list(o.rgb_formats));
  encoding.set("rgb_lz4", o.lz4);
  encoding.set("flush", true);
  encoding.set("transparency", false);
  if (o.quality >= 0) {
    encoding.set("quality", o.quality);
    encoding.set("min-quality", o.quality);
  }
  if (o.speed >= 0) {
    encoding.set("speed", o.speed);
    encoding.set("min-speed", o.speed);
  }
  caps.set("encoding", encoding);
  caps.set("digest", digests());
  caps.set("salt-digest", digests());
  return caps;
}

// xpra 3.1 (bencode): flat keys, the preferred coding as a plain string, delta buckets.
Value Session::make_hello_31() const {
  const SessionOptions& o = options_;
  Value caps{Value::Dict{}};
  caps.set("version", kClientVersion);
  caps.set("client_type", o.client_type);
  caps.set("uuid", o.uuid);
  caps.set("bencode", true);
  caps.set("rencode", false);
  caps.set("yaml", false);
  caps.set("zlib", o.zlib);
  caps.set("lz4", o.lz4);
  caps.set("lzo", false);
  caps.set("brotli", false);
  caps.set("compression_level", 1);
  caps.set("share", o.share);
  caps.set("steal", o.steal);
  caps.set("windows", true);
  set_view_only(caps);
  if (o.input) set_input_caps(caps, *o.input, false);
  caps.set("sound.receive", false);
  caps.set("sound.send", false);
  caps.set("desktop_size", Value::list({o.desktop_width, o.desktop_height}));
  caps.set("screen_sizes", Value::list({}));
  caps.set("encodings", Value::string_list(o.encodings));
  caps.set("encodings.core", Value::string_list(o.encodings));
  caps.set("encoding", o.preferred_encoding);
  caps.set("encodings.rgb_formats", Value::string_list(o.rgb_formats));
  if (o.quality >= 0) caps.set("quality", o.quality);
  if (o.speed >= 0) {
    caps.set("encoding.speed", o.speed);
    caps.set("encoding.min-speed", o.speed);
  }
  caps.set("encoding.flush", true);
  caps.set("encoding.rgb_zlib", true);
  caps.set("encoding.rgb_lz4", true);
  caps.set("encoding.transparency", false);
  if (offers_video(o)) {
    caps.set("encoding.full_csc_modes", full_csc_modes(o));
    caps.set("encoding.video_max_size", Value::list({o.video_max_width, o.video_max_height}));
    caps.set("encoding.video_b_frames", Value::list({}));  // every frame is painted as it comes
    caps.set("encoding.video_reinit", true);
    caps.set("encoding.video_scaling", o.video_scaling);
    caps.set("encoding.csc_atoms", true);
  } else {
    caps.set("encoding.video_scaling", false);
  }
  if (o.delta_buckets > 0) {
    caps.set("encoding.supports_delta", Value::string_list(o.delta_encodings));
    caps.set("encoding.delta_buckets", o.delta_buckets);
  } else {
    caps.set("encoding.supports_delta", Value::list({}));
  }
  caps.set("digest", digests());
  caps.set("salt-digest", digests());
  return caps;
}

Result<void> Session::handle_hello(const Packet& p) {
  FieldReader r("hello", p.body);
  PIXPATH_TRY(const Value* caps, r.dict_at(1, "capabilities"));
  ServerInfo info;
  info.caps = *caps;
  info.packet_encoder = encoder_.load();
  if (const Value* v = caps->find("version"); v && v->is_bytes()) {
    info.version = std::string(v->as_view());
  }
  if (const Value* e = caps->find("encodings"); e && e->is_list()) {
    for (const Value& x : e->as_list()) {
      if (x.is_bytes()) info.encodings.emplace_back(x.as_view());
    }
  }
  {
    MutexLock lock(mu_);
    server_info_ = info;
    state_ = State::Ready;
  }
  cv_.notify_all();
  log(fmt::format("connected to xpra {} ({} packets{}{})", info.version,
                  to_string(info.packet_encoder), info.encodings.empty() ? "" : "; server encodings: ",
                  joined(info.encodings)));
  listener_.on_server_hello(info);
  return {};
}

// ["encodings", {"encodings": {"": [...], "core": [...], ...}, "video": {...}}]: the codings
// a 6.x server can send. A malformed packet is logged and ignored (it changes nothing we do).
void Session::handle_encodings(const Packet& p) {
  FieldReader r(p.type, p.body);
  auto d = r.dict_at(1, "encodings");
  if (!d.ok()) {
    log(LogLevel::Warning, d.error().message() + " (packet ignored)");
    return;
  }
  const Value* e = (*d)->find("encodings");
  if (e && e->is_dict()) {
    const Value* core = e->find("core");
    e = core ? core : e->find("");
  }
  std::vector<std::string> encodings;
  if (e && e->is_list()) {
    for (const Value& x : e->as_list()) {
      if (x.is_bytes()) encodings.emplace_back(x.as_view());
    }
  }
  {
    MutexLock lock(mu_);
    server_info_.encodings = encodings;
  }
  log(LogLevel::Debug, "server encodings: " + joined(encodings));
  listener_.on_server_encodings(encodings);
}

}  // namespace pixpath::xpra
