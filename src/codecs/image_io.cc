#include "pixpath/codecs/image_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "internal/codec_common.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs {
namespace {

using internal::codec_error;

bool ends_with(const std::string& s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) {
      return false;
    }
  }
  return true;
}

// Minimal PNM/PAM parser: P5, P6 (maxval 255) and P7 (GRAYSCALE, RGB, RGB_ALPHA, depth 1/3/4).
Result<Picture> read_pnm(std::span<const uint8_t> b) {
  auto fail = [](std::string why) {
    return codec_error("pnm", ErrorCode::CorruptData, "read header", std::move(why));
  };
  size_t pos = 2;
  const char kind = char(b[1]);
  auto skip_space = [&] {
    while (pos < b.size()) {
      if (b[pos] == '#') {
        while (pos < b.size() && b[pos] != '\n') ++pos;
      } else if (std::isspace(b[pos])) {
        ++pos;
      } else {
        break;
      }
    }
  };
  auto number = [&](long& v) {
    skip_space();
    v = 0;
    size_t start = pos;
    while (pos < b.size() && std::isdigit(b[pos]) && v < 1000000) v = v * 10 + (b[pos++] - '0');
    return pos > start;
  };
  long w = 0, h = 0, maxval = 0, depth = 0;
  if (kind == '5' || kind == '6') {
    if (!number(w) || !number(h) || !number(maxval)) return fail("bad PNM header");
    depth = kind == '5' ? 1 : 3;
    ++pos;  // one whitespace byte
  } else {
    for (;;) {
      skip_space();
      size_t start = pos;
      while (pos < b.size() && !std::isspace(b[pos])) ++pos;
      std::string key(reinterpret_cast<const char*>(b.data()) + start, pos - start);
      if (key == "ENDHDR") { ++pos; break; }
      if (key.empty()) return fail("PAM header without ENDHDR");
      if (key == "WIDTH") { if (!number(w)) return fail("bad WIDTH"); }
      else if (key == "HEIGHT") { if (!number(h)) return fail("bad HEIGHT"); }
      else if (key == "DEPTH") { if (!number(depth)) return fail("bad DEPTH"); }
      else if (key == "MAXVAL") { if (!number(maxval)) return fail("bad MAXVAL"); }
      else { while (pos < b.size() && b[pos] != '\n') ++pos; }  // TUPLTYPE etc.
    }
  }
  if (maxval != 255) return fail("only 8-bit PNM/PAM (maxval 255) is supported");
  const PixelFormat f = depth == 1   ? PixelFormat::GRAY8
                        : depth == 3 ? PixelFormat::RGB
                        : depth == 4 ? PixelFormat::RGBA
                                     : PixelFormat::NV12;
  if (f == PixelFormat::NV12) return fail("PAM depth must be 1, 3 or 4");
  DecodeParams dp;
  if (auto e = internal::check_decode_size("pnm", int(w), int(h), dp)) return *e;
  const size_t row = size_t(w) * size_t(depth);
  if (pos > b.size() || b.size() - pos < row * size_t(h)) {
    return codec_error("pnm", ErrorCode::Truncated, "read data", "pixel data is truncated");
  }
  PIXPATH_TRY(Picture pic, Picture::allocate(f, int(w), int(h)));
  PIXPATH_TRY(PictureView v, pic.write());
  for (int y = 0; y < int(h); ++y) {
    std::memcpy(v.planes[0].unchecked_row(y), b.data() + pos + size_t(y) * row, row);
  }
  return pic;
}

}  // namespace

std::string sniff_image(std::span<const uint8_t> b) {
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return "jpeg";
  if (b.size() >= 8 && std::memcmp(b.data(), "\x89PNG\r\n\x1a\n", 8) == 0) return "png";
  if (b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 &&
      std::memcmp(b.data() + 8, "WEBP", 4) == 0) {
    return "webp";
  }
  if (b.size() >= 3 && b[0] == 'P' && (b[1] == '5' || b[1] == '6' || b[1] == '7') &&
      std::isspace(b[2])) {
    return "pnm";
  }
  return "";
}

Result<DecodeResult> decode_image(std::span<const uint8_t> bytes, const std::optional<RawImageSpec>& raw) {
  const auto& reg = CodecRegistry::builtin();
  if (raw) {
    const bool four = internal::packed_bpp(raw->format) == 4;
    const Decoder* d = reg.decoder(four ? "rgb32" : "rgb24");
    DrawOptions o;
    o.rgb_format = std::string(name(raw->format));
    DecodeParams p;
    p.width = raw->width;
    p.height = raw->height;
    p.rowstride = raw->rowstride;
    p.options = &o;
    return d->decode(SharedBytes::copy_of(bytes), p);
  }
  const std::string kind = sniff_image(bytes);
  if (kind.empty()) {
    return codec_error("image", ErrorCode::Unsupported, "read",
                       "not a JPEG, PNG, WebP or PNM file (raw rgb needs a size and rgb_format)");
  }
  if (kind == "pnm") {
    PIXPATH_TRY(Picture pic, read_pnm(bytes));
    return DecodeResult{std::move(pic), {}};
  }
  const Decoder* d = reg.decoder(kind);
  DecodeParams p;
  PIXPATH_TRY(ImageInfo inf, d->inspect(bytes, p));
  PixelFormat f = inf.has_alpha ? PixelFormat::RGBA : PixelFormat::RGB;
  if (inf.natural_format == PixelFormat::GRAY8) f = PixelFormat::GRAY8;
  return d->decode(SharedBytes::copy_of(bytes), p, f);
}

Result<Picture> read_image(std::span<const uint8_t> bytes, const std::optional<RawImageSpec>& raw) {
  PIXPATH_TRY(DecodeResult r, decode_image(bytes, raw));
  return std::move(r.picture);
}

Result<std::vector<uint8_t>> read_file(const std::string& path, size_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return codec_error("file", ErrorCode::Io, "read", path + ": " + std::strerror(errno));
  std::vector<uint8_t> data;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (n > max_bytes - data.size()) {
      return codec_error("file", ErrorCode::LimitExceeded, "read",
                         path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    data.insert(data.end(), buf, buf + n);
  }
  if (std::ferror(f.get())) return codec_error("file", ErrorCode::Io, "read", path + ": read error");
  return data;
}

Result<void> write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return codec_error("file", ErrorCode::Io, "write", path + ": " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  out.close();
  if (!out) return codec_error("file", ErrorCode::Io, "write", path + ": write error");
  return ok();
}

Result<DecodeResult> decode_image_file(const std::string& path, const std::optional<RawImageSpec>& raw) {
  PIXPATH_TRY(auto data, read_file(path));
  auto r = decode_image(data, raw);
  if (!r.ok()) return r.error().within(r.error().subject(), path + ": " + r.error().stage());
  return r;
}

Result<Picture> read_image_file(const std::string& path, const std::optional<RawImageSpec>& raw) {
  PIXPATH_TRY(DecodeResult r, decode_image_file(path, raw));
  return std::move(r.picture);
}

Result<Picture> read_image_as(std::span<const uint8_t> bytes, PixelFormat format) {
  PIXPATH_TRY(Picture pic, read_image(bytes));
  if (pic.format() == format) return pic;
  PIXPATH_TRY(Picture out, Picture::allocate(format, pic.width(), pic.height()));
  PIXPATH_TRY(ConstPictureView src, pic.read());
  PIXPATH_TRY(PictureView dst, out.write());
  PIXPATH_CHECK(convert_pixels(src, dst));
  return out;
}

Result<std::vector<uint8_t>> encode_png(const ConstPictureView& picture, int level) {
  const Encoder* e = CodecRegistry::builtin().encoder("png");
  if (!e) return codec_error("png", ErrorCode::Unsupported, "encode", "no png encoder registered");
  EncodeParams p;
  p.level = level;
  PIXPATH_TRY(EncodedPicture enc, e->encode(picture, p));
  return std::move(enc.data);
}

Result<std::vector<uint8_t>> encode_pnm(const ConstPictureView& picture, bool pam) {
  if (picture.empty() || info(picture.format).planes != 1 ||
      !(info(picture.format).packed_rgb || picture.format == PixelFormat::GRAY8)) {
    return codec_error("pnm", ErrorCode::Unsupported, "write", "needs a packed RGB or GRAY8 picture");
  }
  PixelFormat f = picture.format == PixelFormat::GRAY8 ? PixelFormat::GRAY8
                  : (pam && info(picture.format).has_alpha) ? PixelFormat::RGBA
                                                             : PixelFormat::RGB;
  const int depth = internal::packed_bpp(f);
  std::string header;
  if (pam) {
    header = "P7\nWIDTH " + std::to_string(picture.width) + "\nHEIGHT " +
             std::to_string(picture.height) + "\nDEPTH " + std::to_string(depth) +
             "\nMAXVAL 255\nTUPLTYPE " +
             (depth == 1 ? "GRAYSCALE" : depth == 3 ? "RGB" : "RGB_ALPHA") + "\nENDHDR\n";
  } else {
    header = std::string(depth == 1 ? "P5\n" : "P6\n") + std::to_string(picture.width) + " " +
             std::to_string(picture.height) + "\n255\n";
  }
  const size_t row = size_t(picture.width) * size_t(depth);
  std::vector<uint8_t> out(header.begin(), header.end());
  const size_t start = out.size();
  out.resize(start + row * size_t(picture.height));
  PIXPATH_TRY(PictureView dv, make_view(f, picture.width, picture.height, out.data() + start, row));
  if (f == picture.format) {
    PIXPATH_CHECK(copy_pixels(picture, dv));
  } else {
    PIXPATH_CHECK(convert_pixels(picture, dv));
  }
  return out;
}

Result<void> write_image_file(const std::string& path, const ConstPictureView& picture) {
  std::vector<uint8_t> bytes;
  if (ends_with(path, ".png")) {
    PIXPATH_TRY(bytes, encode_png(picture));
  } else if (ends_with(path, ".ppm") || ends_with(path, ".pgm") || ends_with(path, ".pnm")) {
    PIXPATH_TRY(bytes, encode_pnm(picture, false));
  } else if (ends_with(path, ".pam")) {
    PIXPATH_TRY(bytes, encode_pnm(picture, true));
  } else {
    return codec_error("file", ErrorCode::Unsupported, "write",
                       path + ": output must end in .png, .ppm, .pgm or .pam");
  }
  return write_file(path, bytes);
}

}  // namespace pixpath::codecs
