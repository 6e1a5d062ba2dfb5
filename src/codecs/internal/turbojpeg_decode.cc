#include "internal/turbojpeg_decode.h"

#include <turbojpeg.h>

#include <climits>

#include "internal/codec_common.h"

namespace pixpath::codecs::internal {
namespace {

// One TurboJPEG decompressor per thread, destroyed when the thread exits. TurboJPEG handles
// are not thread-safe; decoders are called from many threads at once.
struct ThreadDecompressor {
  tjhandle handle = tjInitDecompress();
  ~ThreadDecompressor() {
    if (handle) tjDestroy(handle);
  }
};

Result<tjhandle> decompressor(std::string_view coding) {
  thread_local ThreadDecompressor d;
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
// arithmetic) and the restart interval. Informational only: TurboJPEG does the real parsing.
std::string scan_markers(std::span<const uint8_t> d) {
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
      case 0xC0: process = "baseline"; break;
      case 0xC1: process = "extended"; break;
      case 0xC2: process = "progressive"; break;
      case 0xC3: process = "lossless"; break;
      case 0xC9: process = "arithmetic"; break;
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
  if (tjGetErrorCode(h) == TJERR_WARNING) {
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
    return codec_error(coding, ErrorCode::CorruptData, "read header", tjGetErrorStr2(h));
  }
  if (auto e = check_decode_size(coding, hd.width, hd.height, params)) return *e;
  if (hd.colorspace == TJCS_CMYK || hd.colorspace == TJCS_YCCK) {
    return codec_error(coding, ErrorCode::Unsupported, "read header",
                       std::string(colorspace_name(hd.colorspace)) +
                           " JPEG: four-channel JPEGs are not supported (no xpra server sends "
                           "them)");
  }
  hd.detail = scan_markers(data) + " " + subsampling_name(hd.subsampling) + " " +
              colorspace_name(hd.colorspace);
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
  unsigned char* planes[3] = {};
  int strides[3] = {};
  for (int i = 0; i < dst.plane_count; ++i) {
    const auto& p = dst.planes[size_t(i)];
    if (p.stride > size_t(INT_MAX)) {
      return codec_error(coding, ErrorCode::InvalidArgument, "decode",
                         "destination stride too large");
    }
    // TurboJPEG's plane sizes must be pixpath's (chroma rounded up) or it would write past them.
    if (p.width != tjPlaneWidth(i, header.width, header.subsampling) ||
        p.height != tjPlaneHeight(i, header.height, header.subsampling)) {
      return codec_error(coding, ErrorCode::Internal, "decode", "plane size mismatch");
    }
    planes[i] = p.data;
    strides[i] = static_cast<int>(p.stride);
  }
  PIXPATH_TRY(tjhandle h, decompressor(coding));
  const int rc = tjDecompressToYUVPlanes(h, data.data(), static_cast<unsigned long>(data.size()),
                                         planes, header.width, strides, header.height,
                                         kDecodeFlags);
  return check_tj(coding, h, rc, warnings);
}

}  // namespace pixpath::codecs::internal
