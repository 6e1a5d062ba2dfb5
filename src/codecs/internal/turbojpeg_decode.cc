#include "internal/turbojpeg_decode.h"

#include <turbojpeg.h>

#include <climits>
#include <cstring>
#include <vector>

#include "internal/codec_common.h"
#include "internal/jpeg_band_decode.h"
#include "pixpath/core/counters.h"

namespace pixpath::codecs::internal {
namespace {

// One TurboJPEG decompressor per thread, destroyed when the thread exits. TurboJPEG handles
// are not thread-safe; decoders are called from many threads at once.
// After a failed (or warned) call a TurboJPEG 2.1 handle can keep state from the broken
// stream (e.g. quantisation table slots: the next, valid JPEG then fails with "Bogus DQT
// index"), so the handle is replaced after any call that did not succeed cleanly.
struct ThreadDecompressor {
  tjhandle handle = tjInitDecompress();
  ~ThreadDecompressor() {
    if (handle) tjDestroy(handle);
  }
  void reset() {
    if (handle) tjDestroy(handle);
    handle = tjInitDecompress();
  }
};

ThreadDecompressor& thread_decompressor() {
  thread_local ThreadDecompressor d;
  return d;
}

Result<tjhandle> decompressor(std::string_view coding) {
  auto& d = thread_decompressor();
  if (!d.handle) d.reset();
  if (!d.handle) {
    return codec_error(coding, ErrorCode::OutOfMemory, "init", "tjInitDecompress failed");
  }
  return d.handle;
}

const char* subsampling_name(int s) {
  switch (s) {
    case TJSAMP_444: return "4:4:4";
    case TJSAMP_422: return "4:2:2";
    case TJSAMP_420: return "4:2:0";
    case TJSAMP_GRAY: return "gray";
    case TJSAMP_440: return "4:4:0";
    case TJSAMP_411: return "4:1:1";
  }
  return "unknown";
}

const char* colorspace_name(int c) {
  switch (c) {
    case TJCS_RGB: return "RGB";
    case TJCS_YCbCr: return "YCbCr";
    case TJCS_GRAY: return "gray";
    case TJCS_CMYK: return "CMYK";
    case TJCS_YCCK: return "YCCK";
  }
  return "unknown";
}

// Walks the markers up to the first SOS to name the process (baseline, progressive,
// arithmetic) and the restart interval. Informational, and *sequential (SOF0, SOF1 or SOF9)
// for the band decoder's choice: TurboJPEG does the real parsing.
std::string scan_markers(std::span<const uint8_t> d, bool* sequential) {
  std::string process = "unknown process";
  std::string restart;
  size_t i = 2;
  while (i + 4 <= d.size()) {
    if (d[i] != 0xFF) break;
    const uint8_t m = d[i + 1];
    if (m == 0xFF) { ++i; continue; }
    if (m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01) { i += 2; continue; }
    const size_t len = (size_t{d[i + 2]} << 8) | d[i + 3];
    if (len < 2) break;
    switch (m) {
      case 0xC0: process = "baseline", *sequential = true; break;
      case 0xC1: process = "extended", *sequential = true; break;
      case 0xC2: process = "progressive"; break;
      case 0xC3: process = "lossless"; break;
      case 0xC9: process = "arithmetic", *sequential = true; break;
      case 0xCA: process = "progressive arithmetic"; break;
      case 0xDD:
        if (i + 6 <= d.size()) {
          const int ri = (d[i + 4] << 8) | d[i + 5];
          if (ri) restart = ", restart " + std::to_string(ri);
        }
        break;
      default: break;
    }
    if (m == 0xDA) break;  // SOS: entropy-coded data follows
    i += 2 + len;
  }
  return process + restart;
}

int tj_pixel_format(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB: return TJPF_RGB;
    case PixelFormat::BGR: return TJPF_BGR;
    case PixelFormat::RGBX: return TJPF_RGBX;
    case PixelFormat::BGRX: return TJPF_BGRX;
    case PixelFormat::XRGB: return TJPF_XRGB;
    case PixelFormat::XBGR: return TJPF_XBGR;
    case PixelFormat::RGBA: return TJPF_RGBA;
    case PixelFormat::BGRA: return TJPF_BGRA;
    case PixelFormat::ARGB: return TJPF_ARGB;
    case PixelFormat::ABGR: return TJPF_ABGR;
    case PixelFormat::GRAY8: return TJPF_GRAY;
    default: return -1;
  }
}

// TurboJPEG returns -1 for warnings too (without TJFLAG_STOPONWARNING); tell them apart.
Result<void> check_tj(std::string_view coding, tjhandle h, int rc, std::vector<Error>& warnings) {
  if (rc == 0) return ok();
  std::string reason = tjGetErrorStr2(h);
  const bool warning = tjGetErrorCode(h) == TJERR_WARNING;
  thread_decompressor().reset();
  if (warning) {
    const bool trunc = reason.find("Premature end") != std::string::npos;
    warnings.push_back(codec_warning(coding, trunc ? ErrorCode::Truncated : ErrorCode::CorruptData,
                                     "decode", reason));
    return ok();
  }
  return codec_error(coding, ErrorCode::CorruptData, "decode", reason);
}

// Flags for every decode: exact integer IDCT and fancy upsampling (TurboJPEG's and djpeg's
// defaults), and a cap on progressive scans against scan-flood input.
constexpr int kDecodeFlags = TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS;

// Pillow's MULDIV255: a * b / 255, rounded as Pillow rounds it.
inline int muldiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

// CMYK and YCCK JPEGs: TurboJPEG gives the stored CMYK samples (YCCK converted to CMYK by
// libjpeg); they are taken as inverted (Adobe's convention, which Photoshop, Pillow and nearly
// every CMYK JPEG writer follow; Pillow reads every CMYK JPEG so) and converted to RGB as Pillow
// does (cmyk2rgb: r = (255 - k) - c * (255 - k) / 255, no colour management). Decoded into a
// scratch buffer of 4 bytes a pixel, then converted row by row into the packed destination;
// GRAY8 is refused (decode to RGB).
Result<void> decode_cmyk_to_rgb(std::string_view coding, std::span<const uint8_t> data,
                                const JpegHeader& header, const PictureView& dst, int pf,
                                std::vector<Error>& warnings) {
  if (pf == TJPF_GRAY) {
    return codec_error(coding, ErrorCode::Unsupported, "decode",
                       std::string("a ") + colorspace_name(header.colorspace) +
                           " JPEG decodes to RGB formats, not GRAY8");
  }
  std::vector<uint8_t> cmyk(size_t(header.width) * size_t(header.height) * 4);
  PIXPATH_TRY(tjhandle h, decompressor(coding));
  const int rc = tjDecompress2(h, data.data(), static_cast<unsigned long>(data.size()), cmyk.data(),
                               header.width, header.width * 4, header.height, TJPF_CMYK, kDecodeFlags);
  PIXPATH_CHECK(check_tj(coding, h, rc, warnings));
  const int bpp = tjPixelSize[pf];
  const int ro = tjRedOffset[pf], go = tjGreenOffset[pf], bo = tjBlueOffset[pf];
  const int xo = bpp == 4 ? 6 - ro - go - bo : -1;  // the fourth byte: alpha or padding
  for (int y = 0; y < header.height; ++y) {
    const uint8_t* s = cmyk.data() + size_t(y) * size_t(header.width) * 4;
    uint8_t* d = dst.planes[0].unchecked_row(y);
    for (int x = 0; x < header.width; ++x, s += 4, d += bpp) {
      const int nk = s[3];  // 255 - k: the stored value is inverted
      d[ro] = uint8_t(nk - muldiv255(255 - s[0], nk));
      d[go] = uint8_t(nk - muldiv255(255 - s[1], nk));
      d[bo] = uint8_t(nk - muldiv255(255 - s[2], nk));
      if (xo >= 0) d[xo] = 0xFF;
    }
  }
  return ok();
}

}  // namespace

Result<JpegHeader> read_jpeg_header(std::string_view coding, std::span<const uint8_t> data,
                                    const DecodeParams& params) {
  if (data.size() < 4 || data[0] != 0xFF || data[1] != 0xD8) {
    return codec_error(coding, data.size() < 4 ? ErrorCode::Truncated : ErrorCode::CorruptData,
                       "read header",
                       "not a JPEG stream (" + std::to_string(data.size()) +
                           " bytes, no SOI marker)");
  }
  if (data.size() > ULONG_MAX) {
    return codec_error(coding, ErrorCode::LimitExceeded, "read header", "data too large");
  }
  PIXPATH_TRY(tjhandle h, decompressor(coding));
  JpegHeader hd;
  if (tjDecompressHeader3(h, data.data(), static_cast<unsigned long>(data.size()), &hd.width,
                          &hd.height, &hd.subsampling, &hd.colorspace) != 0) {
    std::string reason = tjGetErrorStr2(h);
    thread_decompressor().reset();
    return codec_error(coding, ErrorCode::CorruptData, "read header", reason);
  }
  if (auto e = check_decode_size(coding, hd.width, hd.height, params)) return *e;
  hd.detail = scan_markers(data, &hd.sequential) + " " + subsampling_name(hd.subsampling) +
              " " + colorspace_name(hd.colorspace);
  return hd;
}

bool turbojpeg_packed_format(PixelFormat format) { return tj_pixel_format(format) >= 0; }

std::optional<PixelFormat> jpeg_planar_format(const JpegHeader& header) {
  if (header.subsampling == TJSAMP_GRAY) return PixelFormat::GRAY8;
  if (header.colorspace != TJCS_YCbCr) return std::nullopt;
  switch (header.subsampling) {
    case TJSAMP_444: return PixelFormat::YUV444P;
    case TJSAMP_422: return PixelFormat::YUV422P;
    case TJSAMP_420: return PixelFormat::YUV420P;
    default: return std::nullopt;
  }
}

Result<void> turbojpeg_decode_packed(std::string_view coding, std::span<const uint8_t> data,
                                     const JpegHeader& header, const PictureView& dst,
                                     std::vector<Error>& warnings) {
  const int pf = tj_pixel_format(dst.format);
  if (pf < 0) {
    return codec_error(coding, ErrorCode::Unsupported, "decode",
                       "cannot decode into " + std::string(name(dst.format)));
  }
  if (auto e = check_destination(coding, dst, header.width, header.height)) return *e;
  if (dst.planes[0].stride > size_t(INT_MAX)) {
    return codec_error(coding, ErrorCode::InvalidArgument, "decode", "destination stride too large");
  }
  JpegBusyMark busy;  // counted while this thread decodes: the band count's view of the cores
  if (header.colorspace == TJCS_CMYK || header.colorspace == TJCS_YCCK)
    return decode_cmyk_to_rgb(coding, data, header, dst, pf, warnings);
  // A large sequential YCbCr picture with spare cores: in bands on several threads. A band
  // that meets a warning or an error sends the picture to tjDecompress2 below, which reports it.
  if (const int bands = jpeg_band_count(header, dst.format);
      bands > 1 && jpeg_decode_packed_in_bands(data, header, dst, bands))
    return ok();
  PIXPATH_TRY(tjhandle h, decompressor(coding));
  const int rc = tjDecompress2(h, data.data(), static_cast<unsigned long>(data.size()),
                               dst.planes[0].data, header.width,
                               static_cast<int>(dst.planes[0].stride), header.height, pf,
                               kDecodeFlags);
  return check_tj(coding, h, rc, warnings);
}

Result<void> turbojpeg_decode_planes(std::string_view coding, std::span<const uint8_t> data,
                                     const JpegHeader& header, const PictureView& dst,
                                     std::vector<Error>& warnings) {
  auto planar = jpeg_planar_format(header);
  if (!planar) {
    return codec_error(coding, ErrorCode::Unsupported, "decode",
                       std::string("a ") + subsampling_name(header.subsampling) + " " +
                           colorspace_name(header.colorspace) +
                           " JPEG has no planar YUV format here; decode it to RGB instead");
  }
  if (*planar != dst.format) {
    return codec_error(coding, ErrorCode::Unsupported, "decode",
                       "a " + std::string(subsampling_name(header.subsampling)) +
                           " JPEG decodes to " + std::string(name(*planar)) + " planes, not " +
                           std::string(name(dst.format)) + " (no chroma resampling)");
  }
  if (auto e = check_destination(coding, dst, header.width, header.height)) return *e;
  JpegBusyMark busy;  // counted while this thread decodes (jpeg_band_count)
  // TurboJPEG pads the planes of odd-sized 4:2:0 / 4:2:2 pictures to whole chroma pairs
  // (luma 17 wide -> 18, tjPlaneWidth/Height); pixpath's planes are exact. When they differ,
  // TurboJPEG decodes into padded scratch planes and the exact part is copied (counted).
  bool padded = false;
  for (int i = 0; i < dst.plane_count; ++i) {
    const auto& p = dst.planes[size_t(i)];
    if (p.stride > size_t(INT_MAX)) {
      return codec_error(coding, ErrorCode::InvalidArgument, "decode",
                         "destination stride too large");
    }
    padded |= p.width != tjPlaneWidth(i, header.width, header.subsampling) ||
              p.height != tjPlaneHeight(i, header.height, header.subsampling);
  }
  unsigned char* planes[3] = {};
  int strides[3] = {};
  std::vector<uint8_t> scratch;
  if (!padded) {
    for (int i = 0; i < dst.plane_count; ++i) {
      planes[i] = dst.planes[size_t(i)].data;
      strides[i] = static_cast<int>(dst.planes[size_t(i)].stride);
    }
  } else {
    size_t offsets[3] = {}, total = 0;
    for (int i = 0; i < dst.plane_count; ++i) {
      strides[i] = tjPlaneWidth(i, header.width, header.subsampling);
      offsets[i] = total;
      total += size_t(strides[i]) * size_t(tjPlaneHeight(i, header.height, header.subsampling));
    }
    scratch.resize(total);
    for (int i = 0; i < dst.plane_count; ++i) planes[i] = scratch.data() + offsets[i];
  }
  PIXPATH_TRY(tjhandle h, decompressor(coding));
  const int rc = tjDecompressToYUVPlanes(h, data.data(), static_cast<unsigned long>(data.size()),
                                         planes, header.width, strides, header.height,
                                         kDecodeFlags);
  PIXPATH_CHECK(check_tj(coding, h, rc, warnings));
  if (padded) {
    int64_t bytes = 0;
    for (int i = 0; i < dst.plane_count; ++i) {
      const auto& p = dst.planes[size_t(i)];
      for (int y = 0; y < p.height; ++y) {
        std::memcpy(p.unchecked_row(y), planes[i] + size_t(y) * size_t(strides[i]), p.row_bytes());
      }
      bytes += int64_t(p.row_bytes()) * p.height;
    }
    count_copy(bytes);
  }
  return ok();
}

}  // namespace pixpath::codecs::internal
