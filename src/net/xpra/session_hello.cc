// The hello exchange: the capabilities pixpath sends, and what it reads from the server's.
#include <fmt/format.h>

#include "pixpath/net/xpra/session.h"

namespace pixpath::xpra {
namespace {

constexpr std::string_view kClientVersion = "3.1.3";  // the protocol generation we speak

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

Value Session::make_hello() const {
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
  caps.set("keyboard", false);
  caps.set("mouse", false);
  caps.set("clipboard", false);
  caps.set("notifications", false);
  caps.set("cursors", false);
  caps.set("bell", false);
  caps.set("system_tray", false);
  caps.set("sound.receive", false);
  caps.set("sound.send", false);
  caps.set("file-transfer", false);
  caps.set("printing", false);
  caps.set("webcam", false);
  caps.set("desktop_size", Value::list({o.desktop_width, o.desktop_height}));
  caps.set("screen_sizes", Value::list({}));
  caps.set("encodings", Value::string_list(o.encodings));
  caps.set("encodings.core", Value::string_list(o.encodings));
  caps.set("encoding", o.preferred_encoding);
  caps.set("encodings.rgb_formats", Value::string_list(o.rgb_formats));
  if (o.quality >= 0) caps.set("quality", o.quality);
  caps.set("encoding.flush", true);
  caps.set("encoding.rgb_zlib", true);
  caps.set("encoding.rgb_lz4", true);
  caps.set("encoding.transparency", false);
  caps.set("encoding.video_scaling", false);
  if (o.delta_buckets > 0) {
    caps.set("encoding.supports_delta", Value::string_list(o.delta_encodings));
    caps.set("encoding.delta_buckets", o.delta_buckets);
  } else {
    caps.set("encoding.supports_delta", Value::list({}));
  }
  // Authentication: HMAC only (auth.h), for both the response and the salt combination.
  const std::vector<std::string> digests(kSupportedDigests.begin(), kSupportedDigests.end());
  caps.set("digest", Value::string_list(digests));
  caps.set("salt-digest", Value::string_list(digests));
  if (o.extra_caps.is_dict()) {
    for (const auto& [k, v] : o.extra_caps.as_dict()) {
      if (k.is_bytes()) caps.set(k.as_view(), v);
    }
  }
  return caps;
}

Result<void> Session::handle_hello(const Packet& p) {
  FieldReader r("hello", p.body);
  PIXPATH_TRY(const Value* caps, r.dict_at(1, "capabilities"));
  ServerInfo info;
  info.caps = *caps;
  if (const Value* v = caps->find("version"); v && v->is_bytes()) {
    info.version = std::string(v->as_view());
  }
  if (const Value* e = caps->find("encodings"); e && e->is_list()) {
    for (const Value& x : e->as_list()) {
      if (x.is_bytes()) info.encodings.emplace_back(x.as_view());
    }
  }
  {
    std::lock_guard lock(mu_);
    server_info_ = info;
    state_ = State::Ready;
  }
  cv_.notify_all();
  log(fmt::format("connected to xpra {} (server encodings: {})", info.version,
                  joined(info.encodings)));
  listener_.on_server_hello(info);
  return {};
}

}  // namespace pixpath::xpra
