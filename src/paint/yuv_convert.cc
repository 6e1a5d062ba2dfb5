#include "pixpath/paint/yuv_convert.h"

#include <libyuv/convert_argb.h>
#include <libyuv/planar_functions.h>

#include <string>

#include "pixpath/core/counters.h"

namespace pixpath::paint {

Result<void> yuv_to_rgb(const ConstPictureView& src, codecs::VideoColor color,
                        const PictureView& dst) {
  auto fail = [&](std::string why) {
    return Error(ErrorCode::InvalidArgument, "yuv to rgb", "convert", std::move(why));
  };
  if (src.width != dst.width || src.height != dst.height)
    return fail("sizes differ: " + std::to_string(src.width) + "x" + std::to_string(src.height) +
                " -> " + std::to_string(dst.width) + "x" + std::to_string(dst.height));
  // libyuv's "ARGB" is B, G, R, A in memory; RGBA order is the same call with U and V swapped
  // and the matching YVU constants.
  // Likewise libyuv's "RGB24" is B, G, R in memory.
  bool swap_uv, three;
  switch (dst.format) {
    case PixelFormat::BGRX: case PixelFormat::BGRA: swap_uv = false; three = false; break;
    case PixelFormat::RGBX: case PixelFormat::RGBA: swap_uv = true; three = false; break;
    case PixelFormat::BGR: swap_uv = false; three = true; break;
    case PixelFormat::RGB: swap_uv = true; three = true; break;
    default: return fail("cannot write " + std::string(name(dst.format)));
  }
  const int64_t out_bytes = int64_t(src.width) * src.height * (three ? 3 : 4);
  if (color.gbr) {  // planes G, B, R: interleave them (libyuv "ARGB" = B, G, R, A in memory)
    if (src.format != PixelFormat::YUV444P) return fail("G, B, R planes must be full size");
    const auto& g = src.plane(0);
    const auto& b = src.plane(1);
    const auto& r = src.plane(2);
    const auto& d = dst.plane(0);
    const auto& first = swap_uv ? b : r;  // RGBX/RGBA: R and B change places
    const auto& last = swap_uv ? r : b;
    if (three)  // libyuv's MergeRGBPlane writes its first plane first
      libyuv::MergeRGBPlane(last.data, int(last.stride), g.data, int(g.stride), first.data,
                            int(first.stride), d.data, int(d.stride), src.width, src.height);
    else
      libyuv::MergeARGBPlane(first.data, int(first.stride), g.data, int(g.stride), last.data,
                             int(last.stride), nullptr, 0, d.data, int(d.stride), src.width,
                             src.height);
    count_copy(out_bytes);
    return ok();
  }
  const libyuv::YuvConstants* k;
  if (color.bt709)
    k = color.full_range ? (swap_uv ? &libyuv::kYvuF709Constants : &libyuv::kYuvF709Constants)
                         : (swap_uv ? &libyuv::kYvuH709Constants : &libyuv::kYuvH709Constants);
  else
    k = color.full_range ? (swap_uv ? &libyuv::kYvuJPEGConstants : &libyuv::kYuvJPEGConstants)
                         : (swap_uv ? &libyuv::kYvuI601Constants : &libyuv::kYuvI601Constants);
  const auto& y = src.plane(0);
  const auto& u = src.plane(swap_uv ? 2 : 1);
  const auto& v = src.plane(swap_uv ? 1 : 2);
  const auto& d = dst.plane(0);
  const int w = src.width, h = src.height;
  int r;
  switch (src.format) {
    case PixelFormat::YUV420P:
      r = three ? libyuv::I420ToRGB24Matrix(y.data, int(y.stride), u.data, int(u.stride), v.data,
                                            int(v.stride), d.data, int(d.stride), k, w, h)
                : libyuv::I420ToARGBMatrix(y.data, int(y.stride), u.data, int(u.stride), v.data,
                                           int(v.stride), d.data, int(d.stride), k, w, h);
      break;
    case PixelFormat::YUV422P:
      r = three ? libyuv::I422ToRGB24Matrix(y.data, int(y.stride), u.data, int(u.stride), v.data,
                                            int(v.stride), d.data, int(d.stride), k, w, h)
                : libyuv::I422ToARGBMatrix(y.data, int(y.stride), u.data, int(u.stride), v.data,
                                           int(v.stride), d.data, int(d.stride), k, w, h);
      break;
    case PixelFormat::YUV444P:
      r = three ? libyuv::I444ToRGB24Matrix(y.data, int(y.stride), u.data, int(u.stride), v.data,
                                            int(v.stride), d.data, int(d.stride), k, w, h)
                : libyuv::I444ToARGBMatrix(y.data, int(y.stride), u.data, int(u.stride), v.data,
                                           int(v.stride), d.data, int(d.stride), k, w, h);
      break;
    default:
      return fail("cannot read " + std::string(name(src.format)));
  }
  if (r != 0) return fail("libyuv refused the conversion (" + std::to_string(r) + ")");
  count_copy(out_bytes);
  return ok();
}

}  // namespace pixpath::paint
