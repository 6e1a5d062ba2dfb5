// jpeg and jpega encoders: libjpeg-turbo's libjpeg API (jpeg_compress_*), because TurboJPEG
// 2.1's tjCompress2 has no restart-interval parameter (only the TJ_RESTART environment
// variable, which is process-global). Exact integer DCT, quality and subsampling as given,
// restart_interval = MCU rows between restart markers.
//
// jpega: the colour JPEG (alpha ignored) followed by a grayscale JPEG of the alpha channel;
// options.alpha_offset = the colour JPEG's size.
#include <cstdio>  // jpeglib.h needs FILE
#include <jpeglib.h>

#include <csetjmp>
#include <cstdlib>
#include <memory>
#include <vector>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "pixpath/core/counters.h"

namespace pixpath::codecs::internal {
namespace {

struct ErrorJump {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorJump*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  longjmp(e->jump, 1);
}
void no_output(j_common_ptr) {}

bool jpeg_in_space(PixelFormat f, J_COLOR_SPACE* cs, int* comps) {
  switch (f) {
    case PixelFormat::RGB: *cs = JCS_EXT_RGB; *comps = 3; return true;
    case PixelFormat::BGR: *cs = JCS_EXT_BGR; *comps = 3; return true;
    case PixelFormat::RGBX: *cs = JCS_EXT_RGBX; *comps = 4; return true;
    case PixelFormat::BGRX: *cs = JCS_EXT_BGRX; *comps = 4; return true;
    case PixelFormat::XRGB: *cs = JCS_EXT_XRGB; *comps = 4; return true;
    case PixelFormat::XBGR: *cs = JCS_EXT_XBGR; *comps = 4; return true;
    case PixelFormat::RGBA: *cs = JCS_EXT_RGBA; *comps = 4; return true;
    case PixelFormat::BGRA: *cs = JCS_EXT_BGRA; *comps = 4; return true;
    case PixelFormat::ARGB: *cs = JCS_EXT_ARGB; *comps = 4; return true;
    case PixelFormat::ABGR: *cs = JCS_EXT_ABGR; *comps = 4; return true;
    case PixelFormat::GRAY8: *cs = JCS_GRAYSCALE; *comps = 1; return true;
    default: return false;
  }
}

// Plain C-style on purpose: setjmp/longjmp must not skip C++ destructors. Returns false with
// `message` filled on a libjpeg error. *out is malloc'ed by libjpeg (jpeg_mem_dest).
bool compress(const ConstPlaneView& src, J_COLOR_SPACE in_space, int comps, int quality,
              Subsampling sub, int restart_rows, unsigned char** out, unsigned long* out_size,
              char* message) {
  jpeg_compress_struct cinfo;
  ErrorJump err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit;
  err.pub.output_message = no_output;
  err.message[0] = 0;
  if (setjmp(err.jump)) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", err.message);
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, out, out_size);
  cinfo.image_width = JDIMENSION(src.width);
  cinfo.image_height = JDIMENSION(src.height);
  cinfo.input_components = comps;
  cinfo.in_color_space = in_space;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  cinfo.dct_method = JDCT_ISLOW;
  if (sub == Subsampling::Gray || in_space == JCS_GRAYSCALE) {
    jpeg_set_colorspace(&cinfo, JCS_GRAYSCALE);
  } else {
    const int h = sub == Subsampling::S444 ? 1 : 2;
    const int v = sub == Subsampling::S420 ? 2 : 1;
    cinfo.comp_info[0].h_samp_factor = h;
    cinfo.comp_info[0].v_samp_factor = v;
    for (int c = 1; c < 3; ++c) {
      cinfo.comp_info[c].h_samp_factor = 1;
      cinfo.comp_info[c].v_samp_factor = 1;
    }
  }
  cinfo.restart_in_rows = restart_rows;
  jpeg_start_compress(&cinfo, TRUE);
  JSAMPROW rows[16];
  while (cinfo.next_scanline < cinfo.image_height) {
    JDIMENSION n = 0;
    for (; n < 16 && cinfo.next_scanline + n < cinfo.image_height; ++n) {
      rows[n] = const_cast<JSAMPROW>(src.unchecked_row(int(cinfo.next_scanline + n)));
    }
    jpeg_write_scanlines(&cinfo, rows, n);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

Result<std::vector<uint8_t>> encode_jpeg(std::string_view coding, const ConstPlaneView& plane,
                                         PixelFormat format, const EncodeParams& params) {
  J_COLOR_SPACE cs;
  int comps;
  if (!jpeg_in_space(format, &cs, &comps)) {
    return codec_error(coding, ErrorCode::Unsupported, "encode",
                       "cannot encode " + std::string(name(format)));
  }
  if (params.quality < 1 || params.quality > 100 || params.restart_interval < 0 ||
      params.restart_interval > 65535) {
    return codec_error(coding, ErrorCode::InvalidArgument, "encode",
                       "quality must be 1..100 and restart interval 0..65535");
  }
  if (plane.width <= 0 || plane.height <= 0 || plane.width > 65500 || plane.height > 65500) {
    return codec_error(coding, ErrorCode::InvalidArgument, "encode",
                       "JPEG sizes are 1..65500 pixels, not " +
                           size_string(plane.width, plane.height));
  }
  unsigned char* out = nullptr;
  unsigned long size = 0;
  char message[JMSG_LENGTH_MAX];
  const bool good = compress(plane, cs, comps, params.quality, params.subsampling,
                             params.restart_interval, &out, &size, message);
  std::unique_ptr<unsigned char, decltype(&std::free)> owned(out, &std::free);
  if (!good) return codec_error(coding, ErrorCode::Internal, "encode", message);
  return std::vector<uint8_t>(out, out + size);
}

class JpegEncoder final : public Encoder {
 public:
  std::string_view coding() const override { return "jpeg"; }
  bool can_read(PixelFormat f) const override {
    J_COLOR_SPACE cs;
    int c;
    return jpeg_in_space(f, &cs, &c);
  }
  Result<EncodedPicture> encode(const ConstPictureView& picture,
                                const EncodeParams& params) const override {
    if (picture.empty()) {
      return codec_error("jpeg", ErrorCode::InvalidArgument, "encode", "empty picture");
    }
    PIXPATH_TRY(auto data, encode_jpeg("jpeg", picture.planes[0], picture.format, params));
    EncodedPicture e;
    e.data = std::move(data);
    e.width = picture.width;
    e.height = picture.height;
    e.options.quality = params.quality;
    return e;
  }
};

class JpegaEncoder final : public Encoder {
 public:
  std::string_view coding() const override { return "jpega"; }
  bool can_read(PixelFormat f) const override {
    return f == PixelFormat::RGBA || f == PixelFormat::BGRA || f == PixelFormat::ARGB ||
           f == PixelFormat::ABGR;
  }
  Result<EncodedPicture> encode(const ConstPictureView& picture,
                                const EncodeParams& params) const override {
    if (picture.empty() || !can_read(picture.format)) {
      return codec_error("jpega", ErrorCode::Unsupported, "encode",
                         "jpega encodes RGBA, BGRA, ARGB or ABGR pictures");
    }
    EncodeParams cp = params;
    if (cp.subsampling == Subsampling::Gray) cp.subsampling = Subsampling::S420;
    PIXPATH_TRY(auto colour, encode_jpeg("jpega", picture.planes[0], picture.format, cp));
    // The alpha channel as its own GRAY8 plane (a counted copy).
    const int w = picture.width, h = picture.height;
    std::vector<uint8_t> alpha(size_t(w) * size_t(h));
    const int ai = info(picture.format).channels.a;
    for (int y = 0; y < h; ++y) {
      const uint8_t* s = picture.planes[0].unchecked_row(y) + ai;
      for (int x = 0; x < w; ++x) alpha[size_t(y) * size_t(w) + size_t(x)] = s[size_t(x) * 4];
    }
    count_copy(int64_t(alpha.size()));
    ConstPlaneView ap{alpha.data(), size_t(w), w, h, 1};
    EncodeParams gp = params;
    gp.subsampling = Subsampling::Gray;
    PIXPATH_TRY(auto a, encode_jpeg("jpega", ap, PixelFormat::GRAY8, gp));
    EncodedPicture e;
    e.width = w;
    e.height = h;
    e.options.alpha_offset = int64_t(colour.size());
    e.options.quality = params.quality;
    e.data = std::move(colour);
    e.data.insert(e.data.end(), a.begin(), a.end());
    return e;
  }
};

}  // namespace

std::unique_ptr<Encoder> make_jpeg_encoder() { return std::make_unique<JpegEncoder>(); }
std::unique_ptr<Encoder> make_jpega_encoder() { return std::make_unique<JpegaEncoder>(); }

}  // namespace pixpath::codecs::internal
