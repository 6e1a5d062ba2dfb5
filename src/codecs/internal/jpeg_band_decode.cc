#include "internal/jpeg_band_decode.h"

// jpeglib.h needs FILE and size_t declared first.
#include <cstddef>
#include <cstdio>
#include <jpeglib.h>
#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdlib>
#include <system_error>
#include <thread>
#include <vector>

namespace pixpath::codecs::internal {
namespace {

constexpr int kMaxBands = 4;
// Below about a megapixel a decode takes a few milliseconds at most; a helper thread's start
// and join (tens of microseconds) and the Huffman pass it repeats are then a poor trade.
constexpr int64_t kMinPixels = 1 << 20;
// Band starts on whole iMCU rows of the largest sampling (16 rows): a skip that ends inside
// an iMCU row decodes that row in full.
constexpr int kRowAlign = 16;
// The share of a decode that skipping its rows costs (Huffman decoding alone), measured on
// the screen JPEGs: 0.33 (4K q50 4:2:0) to 0.57 (1080p q90 4:4:4). Sets how fast the bands
// shrink down the picture: band k starts after rows whose skipping costs what band 0 decodes.
constexpr double kSkipShare = 0.45;

std::atomic<int> g_busy{0};
std::atomic<int64_t> g_banded{0};

int band_cap() {
  static const int cap = [] {
    const char* v = std::getenv("PIXPATH_JPEG_BANDS");
    if (!v || !*v) return kMaxBands;
    return std::clamp(std::atoi(v), 1, 16);
  }();
  return cap;
}

int cores() {
  static const int n = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return n;
}

// libjpeg's output colour space for a packed pixpath format (TurboJPEG's pf2cs), or
// JCS_UNKNOWN.
J_COLOR_SPACE out_space(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB: return JCS_EXT_RGB;
    case PixelFormat::BGR: return JCS_EXT_BGR;
    case PixelFormat::RGBX: return JCS_EXT_RGBX;
    case PixelFormat::BGRX: return JCS_EXT_BGRX;
    case PixelFormat::XRGB: return JCS_EXT_XRGB;
    case PixelFormat::XBGR: return JCS_EXT_XBGR;
    case PixelFormat::RGBA: return JCS_EXT_RGBA;
    case PixelFormat::BGRA: return JCS_EXT_BGRA;
    case PixelFormat::ARGB: return JCS_EXT_ARGB;
    case PixelFormat::ABGR: return JCS_EXT_ABGR;
    default: return JCS_UNKNOWN;
  }
}

// libjpeg's error manager for one band: errors jump back, warnings (corrupt data) are noted
// and stop the band (the caller then decodes the picture whole, reporting them as always).
struct BandErrors {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  bool warned;
};

[[noreturn]] void band_error_exit(j_common_ptr c) {
  std::longjmp(reinterpret_cast<BandErrors*>(c->err)->jump, 1);
}

void band_emit_message(j_common_ptr c, int level) {
  if (level < 0) reinterpret_cast<BandErrors*>(c->err)->warned = true;
}

// Rows [y0, y1) of the picture into dst's rows [y0, y1). False on any libjpeg warning or
// error, or when the JPEG is not one the bands take. No C++ object lives between setjmp and a
// longjmp here.
bool decode_rows(std::span<const uint8_t> data, const JpegHeader& header, int y0, int y1,
                 const PictureView& dst, J_COLOR_SPACE space) {
  jpeg_decompress_struct ci{};
  BandErrors errors{};
  ci.err = jpeg_std_error(&errors.pub);
  errors.pub.error_exit = band_error_exit;
  errors.pub.emit_message = band_emit_message;
  // Before jpeg_create_decompress, which can fail too; destroying a struct it never set up is
  // a no-op (ci.mem is null).
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&ci);
    return false;
  }
  jpeg_create_decompress(&ci);
  jpeg_mem_src(&ci, data.data(), static_cast<unsigned long>(data.size()));
  bool ok = jpeg_read_header(&ci, TRUE) == JPEG_HEADER_OK && !ci.progressive_mode &&
            ci.num_components == 3 && ci.jpeg_color_space == JCS_YCbCr &&
            int(ci.image_width) == header.width && int(ci.image_height) == header.height;
  if (ok) {
    ci.out_color_space = space;
    ci.dct_method = JDCT_ISLOW;       // TJFLAG_ACCURATEDCT
    ci.do_fancy_upsampling = TRUE;    // TurboJPEG's default (no TJFLAG_FASTUPSAMPLE)
    jpeg_start_decompress(&ci);
    if (y0 > 0) ok = int(jpeg_skip_scanlines(&ci, JDIMENSION(y0))) == y0;
    uint8_t* const base = dst.planes[0].data;
    const size_t stride = dst.planes[0].stride;
    JSAMPROW rows[kRowAlign];
    while (ok && !errors.warned && int(ci.output_scanline) < y1) {
      const int first = int(ci.output_scanline);
      const int n = std::min(kRowAlign, y1 - first);
      for (int i = 0; i < n; ++i) rows[i] = base + size_t(first + i) * stride;
      ok = jpeg_read_scanlines(&ci, rows, JDIMENSION(n)) > 0;
    }
    ok = ok && !errors.warned;
    jpeg_abort_decompress(&ci);
  }
  jpeg_destroy_decompress(&ci);
  return ok;
}

// Band starts (bands + 1 entries, the last the height): band k's rows are (1 - kSkipShare)^k
// of band 0's, so each band's skip plus its own rows cost about the same.
std::vector<int> band_starts(int height, int bands) {
  std::vector<double> weight(static_cast<size_t>(bands));
  double total = 0;
  for (int k = 0; k < bands; ++k) {
    weight[size_t(k)] = k ? weight[size_t(k - 1)] * (1 - kSkipShare) : 1.0;
    total += weight[size_t(k)];
  }
  std::vector<int> starts{0};
  double at = 0;
  for (int k = 0; k + 1 < bands; ++k) {
    at += weight[size_t(k)] / total * height;
    const int aligned = int(at + kRowAlign / 2) / kRowAlign * kRowAlign;
    const int row = std::max(starts.back() + kRowAlign, aligned);
    if (row >= height) break;
    starts.push_back(row);
  }
  starts.push_back(height);
  return starts;
}

}  // namespace

JpegBusyMark::JpegBusyMark() { g_busy.fetch_add(1, std::memory_order_relaxed); }
JpegBusyMark::~JpegBusyMark() { g_busy.fetch_sub(1, std::memory_order_relaxed); }

int jpeg_threads_busy() { return g_busy.load(std::memory_order_relaxed); }

int64_t jpeg_banded_decodes() { return g_banded.load(std::memory_order_relaxed); }

int jpeg_band_count(const JpegHeader& header, PixelFormat format) {
  if (!header.sequential || header.colorspace != TJCS_YCbCr || out_space(format) == JCS_UNKNOWN)
    return 1;
  if (int64_t{header.width} * header.height < kMinPixels || header.height < 2 * kRowAlign)
    return 1;
  const int spare = cores() - jpeg_threads_busy();  // the caller's own mark included
  if (spare <= 0) return 1;
  return std::min(band_cap(), 1 + spare);
}

bool jpeg_decode_packed_in_bands(std::span<const uint8_t> data, const JpegHeader& header,
                                 const PictureView& dst, int bands) {
  const J_COLOR_SPACE space = out_space(dst.format);
  if (bands < 2 || space == JCS_UNKNOWN || dst.plane_count != 1 || dst.width != header.width ||
      dst.height != header.height)
    return false;
  const std::vector<int> starts = band_starts(header.height, bands);
  const int n = int(starts.size()) - 1;
  std::atomic<bool> all_ok{true};
  auto run = [&](int k) {
    if (!decode_rows(data, header, starts[size_t(k)], starts[size_t(k + 1)], dst, space))
      all_ok.store(false, std::memory_order_relaxed);
  };
  std::vector<std::thread> helpers;
  helpers.reserve(size_t(n));
  int started = 1;  // band 0 is this thread's
  try {
    for (; started < n; ++started)
      helpers.emplace_back([&run, k = started] {
        JpegBusyMark busy;
        run(k);
      });
  } catch (const std::system_error&) {
    // No thread to be had: the bands not started run here, after band 0.
  }
  run(0);
  for (int k = started; k < n; ++k) run(k);
  for (auto& t : helpers) t.join();
  if (!all_ok.load()) return false;
  g_banded.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace pixpath::codecs::internal
