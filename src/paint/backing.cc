#include "pixpath/paint/backing.h"

#include "pixpath/paint/yuv_convert.h"
#include "pixpath/codecs/image_io.h"

namespace pixpath::paint {
namespace {

// A window's alpha bytes carry nothing to show: read them as X bytes (same layout), so the
// snapshot is an opaque RGB PNG whatever order the backing stores.
PixelFormat without_alpha(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGBA: return PixelFormat::RGBX;
    case PixelFormat::BGRA: return PixelFormat::BGRX;
    case PixelFormat::ARGB: return PixelFormat::XRGB;
    case PixelFormat::ABGR: return PixelFormat::XBGR;
    default: return f;
  }
}

}  // namespace

Result<void> Backing::paint_yuv(int64_t wid, int x, int y, const Picture& yuv,
                                codecs::VideoColor color, int w, int h) {
  PIXPATH_TRY(ConstPictureView src, yuv.read());
  PIXPATH_TRY(Picture rgb, Picture::allocate(format(), yuv.width(), yuv.height()));
  {
    PIXPATH_TRY(PictureView dst, rgb.write());
    PIXPATH_CHECK(yuv_to_rgb(src, color, dst));
  }
  return paint(wid, x, y, rgb, w, h);
}

Result<std::vector<uint8_t>> snapshot_png(Backing& backing, int64_t wid) {
  PIXPATH_TRY(Picture pic, backing.snapshot(wid));
  PIXPATH_TRY(ConstPictureView v, pic.read());
  v.format = without_alpha(v.format);
  return codecs::encode_png(v);
}

}  // namespace pixpath::paint
