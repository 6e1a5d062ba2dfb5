#include "pixpath/net/xpra/draw_parser.h"

#include <cstdlib>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

constexpr int64_t kMaxDim = 32767;  // xpra's own clients assert 0 <= w, h < 32768
constexpr int64_t kMaxCoord = 1 << 20;

Result<void> parse_options(const FieldReader& r, const Value& o, DrawOptions& out) {
  PIXPATH_TRY(out.rgb_format, r.dict_string(o, "rgb_format", ""));
  PIXPATH_TRY(int64_t zlib, r.dict_int(o, "zlib", 0));
  PIXPATH_TRY(int64_t lz4, r.dict_int(o, "lz4", 0));
  if (zlib < 0 || zlib > 15 || lz4 < 0 || lz4 > 15) {
    return r.error(fmt::format("compression levels out of range: zlib {}, lz4 {}", zlib, lz4));
  }
  if (zlib && lz4) return r.error("both zlib and lz4 compression set");
  out.zlib = int(zlib);
  out.lz4 = int(lz4);
  auto optional_int = [&](std::string_view key, std::optional<int64_t>& dst) -> Result<void> {
    if (const Value* v = o.find(key)) {
      if (!v->is_int()) {
        return r.error(fmt::format("option '{}' is {}, expected int", key, v->type_name()));
      }
      dst = v->as_int();
    }
    return {};
  };
  PIXPATH_CHECK(optional_int("store", out.store));
  PIXPATH_CHECK(optional_int("delta", out.delta));
  PIXPATH_CHECK(optional_int("flush", out.flush));
  PIXPATH_CHECK(optional_int("alpha-offset", out.alpha_offset));
  PIXPATH_CHECK(optional_int("frame", out.frame));
  PIXPATH_TRY(out.csc, r.dict_string(o, "csc", ""));
  PIXPATH_TRY(out.delayed, r.dict_int(o, "delayed", 0));
  if (out.frame && *out.frame < 0) return r.error(fmt::format("frame {} is negative", *out.frame));
  if (out.delayed < 0) return r.error(fmt::format("delayed {} is negative", out.delayed));
  if (out.csc.size() > 32) return r.error("option 'csc' is longer than 32 bytes");
  PIXPATH_TRY(int64_t bucket, r.dict_int(o, "bucket", 0));
  if (bucket < 0 || bucket > 255) return r.error(fmt::format("bucket {} out of range", bucket));
  out.bucket = int(bucket);
  PIXPATH_TRY(int64_t paint, r.dict_int(o, "paint", 1));
  out.paint = paint != 0;
  PIXPATH_TRY(int64_t quality, r.dict_int(o, "quality", -1));
  if (quality < -1 || quality > 100) return r.error(fmt::format("quality {} out of range", quality));
  out.quality = int(quality);
  if (const Value* s = o.find("scaled_size")) {
    if (!s->is_list() || s->as_list().size() != 2 || !s->as_list()[0].is_int() ||
        !s->as_list()[1].is_int()) {
      return r.error(fmt::format("option 'scaled_size' is {}, expected a list of 2 ints",
                                 s->debug_string(60)));
    }
    int64_t sw = s->as_list()[0].as_int(), sh = s->as_list()[1].as_int();
    if (sw < 0 || sw > kMaxDim || sh < 0 || sh > kMaxDim) {
      return r.error(fmt::format("option 'scaled_size' {}x{} out of range", sw, sh));
    }
    out.scaled_width = int(sw);
    out.scaled_height = int(sh);
  }
  return {};
}

Result<std::vector<ScrollRect>> parse_scrolls(const FieldReader& r, const Value& list) {
  std::vector<ScrollRect> out;
  out.reserve(list.as_list().size());
  size_t i = 0;
  for (const Value& item : list.as_list()) {
    bool ok = item.is_list() && item.as_list().size() == 6;
    for (size_t k = 0; ok && k < 6; ++k) {
      ok = item.as_list()[k].is_int() &&
           std::abs(item.as_list()[k].as_int()) <= kMaxCoord;
    }
    if (!ok) {
      return r.error(fmt::format("scroll rectangle {} is {}, expected 6 ints (x, y, w, h, dx, "
                                 "dy)",
                                 i, item.debug_string(80)));
    }
    const auto& v = item.as_list();
    out.push_back(ScrollRect{int(v[0].as_int()), int(v[1].as_int()), int(v[2].as_int()),
                             int(v[3].as_int()), int(v[4].as_int()), int(v[5].as_int())});
    ++i;
  }
  return out;
}

}  // namespace

Result<DrawPacket> parse_draw(const Packet& packet) {
  FieldReader r("draw", packet.body);
  DrawPacket d;
  PIXPATH_TRY(d.wid, r.int_at(1, "wid"));
  PIXPATH_TRY(d.x, r.int_in(2, "x", -kMaxCoord, kMaxCoord));
  PIXPATH_TRY(d.y, r.int_in(3, "y", -kMaxCoord, kMaxCoord));
  PIXPATH_TRY(d.w, r.int_in(4, "w", 0, kMaxDim));
  PIXPATH_TRY(d.h, r.int_in(5, "h", 0, kMaxDim));
  PIXPATH_TRY(d.coding, r.string_at(6, "coding"));
  PIXPATH_TRY(d.sequence, r.int_at(8, "packet_sequence"));
  PIXPATH_TRY(d.rowstride, r.int_in(9, "rowstride", 0, int64_t(kMaxDim) * 16));
  PIXPATH_TRY(const Value* data, r.at(7, "data"));
  if (d.coding == "scroll") {
    if (!data->is_list()) {
      return r.error(fmt::format("field 'data' (index 7) is {}, expected the scroll list",
                                 data->type_name()));
    }
    PIXPATH_TRY(d.options.scroll, parse_scrolls(r, *data));
  } else {
    PIXPATH_TRY(d.data, r.bytes_at(7, "data"));
  }
  if (r.size() > 10) {
    PIXPATH_TRY(const Value* opts, r.dict_at(10, "options"));
    PIXPATH_CHECK(parse_options(r, *opts, d.options));
  }
  d.received = packet.received;
  return d;
}

std::optional<DamageAck> ack_for_rejected_draw(const Value& body, const Error& error) {
  if (!body.is_list()) return std::nullopt;
  const auto& l = body.as_list();
  if (l.size() <= 8 || !l[8].is_int()) return std::nullopt;
  DamageAck ack;
  ack.sequence = l[8].as_int();
  auto int_or_zero = [&](size_t i) -> int64_t {
    return (i < l.size() && l[i].is_int()) ? l[i].as_int() : 0;
  };
  ack.wid = int_or_zero(1);
  int64_t w = int_or_zero(4), h = int_or_zero(5);
  ack.w = (w >= 0 && w <= kMaxDim) ? int(w) : 0;
  ack.h = (h >= 0 && h <= kMaxDim) ? int(h) : 0;
  ack.decode_time_us = -1;
  ack.message = error.message();
  return ack;
}

}  // namespace pixpath::xpra
