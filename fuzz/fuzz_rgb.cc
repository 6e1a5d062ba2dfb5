// Input: 8 header bytes (width-1, height-1, rowstride padding, rgb_format index, compression
// 0/1/2, zlib level, 2 spare), then the pixel data as a draw packet would carry it.
#include "fuzz_common.h"

using namespace pixpath;
using namespace pixpath::codecs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  static const char* kFormats[] = {"RGB", "BGR", "RGBX", "BGRX", "XRGB", "XBGR",
                                   "RGBA", "BGRA", "ARGB", "ABGR", "YUV420P", ""};
  DrawOptions o;
  o.rgb_format = kFormats[data[3] % 12];
  const int comp = data[4] % 3;
  if (comp == 1) o.zlib = 1 + data[5] % 9;
  if (comp == 2) o.lz4 = 1;
  DecodeParams p;
  p.width = 1 + data[0];
  p.height = 1 + data[1];
  auto f = parse_pixel_format(o.rgb_format);
  const int bpp = f && info(*f).planes == 1 ? info(*f).bytes_per_pixel[0] : 4;
  p.rowstride = data[2] == 255 ? 0 : p.width * bpp + data[2] - 8;  // may be too short
  p.options = &o;
  p.limits = fuzz::fuzz_limits();
  const Decoder& d = *CodecRegistry::builtin().decoder(bpp == 3 ? "rgb24" : "rgb32");
  std::span<const uint8_t> in(data + 8, size - 8);
  fuzz::decode_into_format(d, in, p, PixelFormat::BGRX);
  fuzz::decode_into_format(d, in, p, f && info(*f).packed_rgb ? *f : PixelFormat::RGB);
  auto r = d.decode(SharedBytes::copy_of(in), p);
  if (r.ok()) {
    auto v = r->picture.read();
    if (v.ok()) {
      volatile uint8_t sink = 0;
      for (int y = 0; y < v->height; ++y) sink ^= v->planes[0].row(y).back();
    }
  }
  return 0;
}
