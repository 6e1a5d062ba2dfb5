#include "pixpath/codecs/codec_commands.h"

#include <charconv>
#include <ostream>

#include "internal/codec_common.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs {
namespace {

Error usage(std::string reason) {
  return Error(ErrorCode::InvalidArgument, "pixpath", "arguments", std::move(reason));
}

std::optional<int> to_int(const std::string& s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Common options: INPUT, -o OUTPUT, --size WxH, --rgb-format F, --rowstride N; the callback
// takes the rest (returns false for an unknown option).
template <class Extra>
Result<void> parse_common(std::span<const std::string> args, std::string& input,
                          std::string& output, std::optional<RawImageSpec>& raw, Extra extra) {
  int w = 0, h = 0, rowstride = 0;
  std::string rgb_format;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= args.size()) return usage(a + " needs a value");
      return args[++i];
    };
    if (a == "-o" || a == "--output") {
      PIXPATH_TRY(output, value());
    } else if (a == "--size") {
      PIXPATH_TRY(std::string v, value());
      const auto x = v.find('x');
      auto pw = x == std::string::npos ? std::nullopt : to_int(v.substr(0, x));
      auto ph = x == std::string::npos ? std::nullopt : to_int(v.substr(x + 1));
      if (!pw || !ph || *pw <= 0 || *ph <= 0) return usage("--size wants WxH, not '" + v + "'");
      w = *pw;
      h = *ph;
    } else if (a == "--rgb-format") {
      PIXPATH_TRY(rgb_format, value());
    } else if (a == "--rowstride") {
      PIXPATH_TRY(std::string v, value());
      auto r = to_int(v);
      if (!r || *r < 0) return usage("--rowstride wants a byte count");
      rowstride = *r;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      PIXPATH_TRY(bool known, extra(a, value));
      if (!known) return usage("unknown option " + a);
    } else if (input.empty()) {
      input = a;
    } else {
      return usage("unexpected argument '" + a + "'");
    }
  }
  if (input.empty()) return usage("no INPUT file");
  if (output.empty()) return usage("no -o OUTPUT file");
  if (w || !rgb_format.empty()) {
    if (!w || rgb_format.empty()) return usage("raw rgb input needs both --size and --rgb-format");
    auto f = parse_pixel_format(rgb_format);
    if (!f || !info(*f).packed_rgb) return usage("--rgb-format '" + rgb_format + "' is not an rgb format");
    raw = RawImageSpec{w, h, *f, rowstride};
  }
  return ok();
}

int report(const Result<void>& r, std::ostream& err) {
  if (r.ok()) return 0;
  err << r.error().message() << "\n";
  return r.error().code() == ErrorCode::InvalidArgument && r.error().subject() == "pixpath" ? 2
                                                                                             : 1;
}

}  // namespace

Result<DecodeCommand> parse_decode_args(std::span<const std::string> args) {
  DecodeCommand c;
  PIXPATH_CHECK(parse_common(args, c.input, c.output, c.raw,
                             [](const std::string&, auto&) -> Result<bool> { return false; }));
  return c;
}

Result<EncodeCommand> parse_encode_args(std::span<const std::string> args) {
  EncodeCommand c;
  PIXPATH_CHECK(parse_common(
      args, c.input, c.output, c.raw,
      [&c](const std::string& a, auto& value) -> Result<bool> {
        if (a == "--coding") {
          PIXPATH_TRY(c.coding, value());
        } else if (a == "--quality") {
          PIXPATH_TRY(std::string v, value());
          auto q = to_int(v);
          if (!q || *q < 1 || *q > 100) return usage("--quality wants 1..100");
          c.params.quality = *q;
        } else if (a == "--subsampling") {
          PIXPATH_TRY(std::string v, value());
          if (v == "444") c.params.subsampling = Subsampling::S444;
          else if (v == "422") c.params.subsampling = Subsampling::S422;
          else if (v == "420") c.params.subsampling = Subsampling::S420;
          else if (v == "gray") c.params.subsampling = Subsampling::Gray;
          else return usage("--subsampling wants 444, 422, 420 or gray");
        } else if (a == "--restart") {
          PIXPATH_TRY(std::string v, value());
          auto r = to_int(v);
          if (!r || *r < 0 || *r > 65535) return usage("--restart wants 0..65535 MCU rows");
          c.params.restart_interval = *r;
        } else if (a == "--compression") {
          PIXPATH_TRY(std::string v, value());
          if (v == "none") c.params.compression = RgbCompression::None;
          else if (v == "zlib") c.params.compression = RgbCompression::Zlib;
          else if (v == "lz4") c.params.compression = RgbCompression::Lz4;
          else return usage("--compression wants none, zlib or lz4");
        } else {
          return false;
        }
        return true;
      }));
  if (c.coding.empty()) return usage("no --coding");
  if (!CodecRegistry::builtin().encoder(c.coding)) return usage("no encoder for coding '" + c.coding + "'");
  return c;
}

Result<void> run_decode(const DecodeCommand& c) {
  PIXPATH_TRY(Picture pic, read_image_file(c.input, c.raw));
  PIXPATH_TRY(ConstPictureView v, pic.read());
  return write_image_file(c.output, v);
}

Result<EncodedPicture> run_encode(const EncodeCommand& c) {
  const Encoder* enc = CodecRegistry::builtin().encoder(c.coding);
  if (!enc) return usage("no encoder for coding '" + c.coding + "'");
  PIXPATH_TRY(Picture pic, read_image_file(c.input, c.raw));
  if (!enc->can_read(pic.format())) {
    // Convert to the closest format the encoder takes.
    const bool alpha = info(pic.format()).has_alpha || c.coding == "jpega";
    PixelFormat want = alpha ? PixelFormat::RGBA : PixelFormat::RGB;
    if (c.coding == "rgb32" && !alpha) want = PixelFormat::RGBX;
    if (c.coding == "png/L") want = PixelFormat::GRAY8;
    if (!enc->can_read(want)) {
      return Error(ErrorCode::Unsupported, c.coding, "encode",
                   "cannot encode a " + std::string(name(pic.format())) + " picture");
    }
    PIXPATH_TRY(Picture conv, Picture::allocate(want, pic.width(), pic.height()));
    PIXPATH_TRY(ConstPictureView src, pic.read());
    PIXPATH_TRY(PictureView dst, conv.write());
    PIXPATH_CHECK(convert_pixels(src, dst));
    pic = std::move(conv);
  }
  PIXPATH_TRY(ConstPictureView v, pic.read());
  PIXPATH_TRY(EncodedPicture e, enc->encode(v, c.params));
  PIXPATH_CHECK(write_file(c.output, e.data));
  return e;
}

int run_decode(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  auto c = parse_decode_args(args);
  if (!c.ok()) return report(c.error(), err);
  const int rc = report(run_decode(*c), err);
  if (rc == 0) out << "decoded " << c->input << " -> " << c->output << "\n";
  return rc;
}

int run_encode(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  auto c = parse_encode_args(args);
  if (!c.ok()) return report(c.error(), err);
  auto e = run_encode(*c);
  if (!e.ok()) return report(e.error(), err);
  out << "encoded " << c->input << " -> " << c->output << ": " << c->coding << " " << e->width
      << "x" << e->height << ", " << e->data.size() << " bytes";
  if (e->options.alpha_offset) out << ", alpha-offset " << *e->options.alpha_offset;
  if (!e->options.rgb_format.empty()) {
    out << ", rgb_format " << e->options.rgb_format << ", rowstride " << e->rowstride;
  }
  if (e->options.zlib) out << ", zlib " << e->options.zlib;
  if (e->options.lz4) out << ", lz4 " << e->options.lz4;
  out << "\n";
  return 0;
}

nlohmann::json registry_info_json(const CodecRegistry& registry) {
  nlohmann::json j;
  j["codecs"] = nlohmann::json::array();
  for (const auto& d : registry.describe()) {
    j["codecs"].push_back({{"coding", d.coding},
                           {"decode", d.decode},
                           {"encode", d.encode},
                           {"library", d.library},
                           {"outputs", d.outputs},
                           {"options", d.options}});
  }
  j["libraries"] = nlohmann::json::array();
  for (const auto& l : registry.library_versions()) {
    j["libraries"].push_back({{"name", l.name}, {"version", l.version}});
  }
  j["decodable"] = registry.decodable_codings();
  const DecodeLimits limits;
  j["limits"] = {{"max_width", limits.max_width},
                 {"max_height", limits.max_height},
                 {"max_pixels", limits.max_pixels},
                 {"max_decompressed_bytes", limits.max_decompressed_bytes}};
  return j;
}

}  // namespace pixpath::codecs
