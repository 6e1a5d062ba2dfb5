#include "pixpath/paint/png_file.h"

#include <spng.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "pixpath/core/pixel_ops.h"

namespace pixpath::paint {
namespace {

struct CtxDeleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};
using Ctx = std::unique_ptr<spng_ctx, CtxDeleter>;

Error png_error(std::string stage, int rc) {
  return Error(ErrorCode::Internal, "png", std::move(stage), spng_strerror(rc));
}

}  // namespace

Result<std::vector<uint8_t>> encode_png(const ConstPictureView& picture) {
  const bool gray = picture.format == PixelFormat::GRAY8;
  const PixelFormat out_format = gray ? PixelFormat::GRAY8 : PixelFormat::RGB;
  Picture rgb;
  ConstPictureView src = picture;
  if (picture.format != out_format) {
    PIXPATH_TRY(rgb, Picture::allocate(out_format, picture.width, picture.height,
                                       AllocateOptions{.row_alignment = 1}));
    PIXPATH_TRY(PictureView v, rgb.write());
    PIXPATH_CHECK(convert_pixels(picture, v));
    PIXPATH_TRY(src, rgb.read());
  }
  Ctx ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) return Error(ErrorCode::OutOfMemory, "png", "encode", "spng_ctx_new failed");
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(src.width);
  ihdr.height = static_cast<uint32_t>(src.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = gray ? SPNG_COLOR_TYPE_GRAYSCALE : SPNG_COLOR_TYPE_TRUECOLOR;
  if (int rc = spng_set_ihdr(ctx.get(), &ihdr)) return png_error("encode header", rc);
  if (int rc = spng_encode_image(ctx.get(), nullptr, 0, SPNG_FMT_PNG,
                                  SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE))
    return png_error("encode", rc);
  const auto& p = src.plane(0);
  for (int y = 0; y < src.height; ++y) {
    int rc = spng_encode_row(ctx.get(), p.unchecked_row(y), p.row_bytes());
    if (rc != 0 && !(rc == SPNG_EOI && y == src.height - 1)) return png_error("encode row", rc);
  }
  size_t size = 0;
  int rc = 0;
  void* buf = spng_get_png_buffer(ctx.get(), &size, &rc);
  if (!buf) return png_error("encode finish", rc);
  std::vector<uint8_t> out(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + size);
  free(buf);
  return out;
}

Result<Picture> decode_png_rgba(std::span<const uint8_t> png) {
  Ctx ctx(spng_ctx_new(0));
  if (!ctx) return Error(ErrorCode::OutOfMemory, "png", "decode", "spng_ctx_new failed");
  spng_set_image_limits(ctx.get(), 16384, 16384);
  if (int rc = spng_set_png_buffer(ctx.get(), png.data(), png.size()))
    return png_error("decode", rc);
  spng_ihdr ihdr{};
  if (int rc = spng_get_ihdr(ctx.get(), &ihdr)) return png_error("decode header", rc);
  PIXPATH_TRY(Picture pic, Picture::allocate(PixelFormat::RGBA, static_cast<int>(ihdr.width),
                                             static_cast<int>(ihdr.height),
                                             AllocateOptions{.row_alignment = 1}));
  PIXPATH_TRY(PictureView v, pic.write());
  const auto& p = v.plane(0);
  if (p.stride != p.row_bytes())
    return Error(ErrorCode::Internal, "png", "decode", "unexpected padded stride");
  if (int rc = spng_decode_image(ctx.get(), p.data, p.stride * static_cast<size_t>(p.height),
                                 SPNG_FMT_RGBA8, SPNG_DECODE_TRNS))
    return png_error("decode", rc);
  return pic;
}

Result<void> write_file(const std::string& path, std::span<const uint8_t> bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Error(ErrorCode::Io, path, "open for writing", std::strerror(errno));
  size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  int close_rc = std::fclose(f);
  if (n != bytes.size() || close_rc != 0)
    return Error(ErrorCode::Io, path, "write", std::strerror(errno));
  return ok();
}

Result<std::vector<uint8_t>> read_file(const std::string& path, size_t max_bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error(ErrorCode::Io, path, "open", std::strerror(errno));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (out.size() + n > max_bytes) {
      std::fclose(f);
      return Error(ErrorCode::LimitExceeded, path, "read",
                   "file is larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.insert(out.end(), buf, buf + n);
  }
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return Error(ErrorCode::Io, path, "read", "read error");
  return out;
}

}  // namespace pixpath::paint
