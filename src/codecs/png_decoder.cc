// png, png/L, png/P: libspng, decoded row by row straight into the destination rows; 8-bit
// truecolor PNGs (what xpra servers send) through a faster path of our own (below).
//
// Direct outputs: RGBA and RGBX (SPNG_FMT_RGBA8, tRNS applied; X receives the alpha or 0xFF),
// RGB (SPNG_FMT_RGB8; alpha dropped), GRAY8 for grayscale PNGs of 8 bits or less
// (SPNG_FMT_G8). Interlaced PNGs too: spng_decode_row() writes each Adam7 pass's pixels at
// their final place in the row spng_get_row_info() names. Any other packed format decodes into a
// scratch picture first and is converted with convert_pixels (one counted copy). Palette PNGs
// (png/P) are expanded to RGB(A); gamma is not applied (xpra does not send gAMA).
// Limits: spng_set_image_limits and spng_set_chunk_limits before the header is read, the size
// checked against DecodeLimits, the decoded size against max_decompressed_bytes.
//
// Fast path (docs/python-peers.md, "1080p PNG"): for non-interlaced 8-bit RGB (2) and RGBA (6)
// PNGs without tRNS, decoded as RGBA8 or RGB8. libspng still reads the signature, IHDR and every
// chunk before the first IDAT (same limits, checks and errors); then we take the run of IDAT
// chunks (each chunk CRC checked), inflate it whole with libdeflate (zlib header and adler32
// checked; exactly height * (1 + width * bpp) bytes expected), unfilter each row in place in a
// per-thread scratch buffer (SSE2 for Sub/Avg/Paeth) and write it into the destination row
// (the scratch holds filtered data, as libspng's scanline buffers do: not a counted pixel copy).
// It is at least as strict as libspng (libspng skips the CRC of the last IDAT chunk it reads and
// the adler32 when it sits in a later chunk, and ignores data beyond the last row); whenever
// the fast path finds anything it does not accept, the libspng path decodes the same input
// from its first IDAT instead, so every error (code, stage, reason) is libspng's, as before
// (corrupt input costs the fast path's attempt on top; png_fast_path_test.cc compares the two).
// One known difference: libdeflate accepts dynamic Huffman blocks declaring 287-288
// literal/length or 31-32 distance codes that zlib refuses ("too many length or distance
// symbols") when the picture data is valid otherwise. PIXPATH_PNG_LIBSPNG=1 in the environment
// (read at the first decode) turns the fast path off; set_png_fast_path() switches it.
#include <libdeflate.h>
#include <spng.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "internal/spng_context.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs::internal {
namespace {

using Ctx = SpngContext;

constexpr size_t kMaxChunkBytes = size_t{16} << 20;   // one ancillary chunk
constexpr size_t kMaxChunkCache = size_t{64} << 20;   // all stored ancillary chunks

// ---- Fast path: switch, scratch, unfiltering -------------------------------------------------

// -1: not read yet (PIXPATH_PNG_LIBSPNG), 0: off, 1: on.
std::atomic<int> g_fast_path{-1};
std::atomic<uint64_t> g_fast_decodes{0};

bool fast_path_on() {
  int v = g_fast_path.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv("PIXPATH_PNG_LIBSPNG");
    v = (e && *e && std::strcmp(e, "0") != 0) ? 0 : 1;
    int expected = -1;
    if (!g_fast_path.compare_exchange_strong(expected, v)) v = expected;
  }
  return v != 0;
}

// Per-thread (decoders are shared between threads): the libdeflate decompressor, the inflated
// rows, and the concatenated IDAT data when there is more than one IDAT chunk. Buffers up to
// kKeepScratch bytes stay for the next decode on this thread (a 1080p RGBA picture inflates to
// 8.3 MB); larger ones are freed after the decode.
constexpr size_t kKeepScratch = size_t{16} << 20;

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

struct FastScratch {
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> inflater;
  std::unique_ptr<uint8_t[]> rows;
  size_t rows_size = 0;
  std::vector<uint8_t> idat;
};

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Unfilters one row in place: cur = the row's n bytes (after its filter byte), prev = the
// previous row, already unfiltered (a row of zeros for the first row). Both may be read up to
// 4 bytes past n (the buffers are padded); nothing is written past n.
#if defined(__SSE2__)
inline __m128i load_px(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return _mm_cvtsi32_si128(int(v));
}
template <int Bpp>
inline void store_px(uint8_t* p, __m128i v) {
  const uint32_t x = uint32_t(_mm_cvtsi128_si32(v));
  std::memcpy(p, &x, Bpp);
}

template <int Bpp>
void unfilter_sub(uint8_t* cur, size_t n) {
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i < n; i += Bpp) {
    a = _mm_add_epi8(load_px(cur + i), a);
    store_px<Bpp>(cur + i, a);
  }
}

void unfilter_up(uint8_t* cur, const uint8_t* prev, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cur + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(prev + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(cur + i), _mm_add_epi8(x, b));
  }
  for (; i < n; ++i) cur[i] = uint8_t(cur[i] + prev[i]);
}

template <int Bpp>
void unfilter_avg(uint8_t* cur, const uint8_t* prev, size_t n) {
  const __m128i one = _mm_set1_epi8(1);
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i < n; i += Bpp) {
    const __m128i b = load_px(prev + i);
    // floor((a + b) / 2): pavgb rounds up; take back the 1 where a + b is odd.
    const __m128i avg = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
    a = _mm_add_epi8(load_px(cur + i), avg);
    store_px<Bpp>(cur + i, a);
  }
}

inline __m128i abs_i16(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }
inline __m128i select(__m128i mask, __m128i t, __m128i e) {
  return _mm_or_si128(_mm_and_si128(mask, t), _mm_andnot_si128(mask, e));
}

// Paeth on 16-bit lanes, branch-free: p = a + b - c, so |p - a| = |b - c| (no a in it: off the
// chain from one pixel to the next), |p - b| = |a - c|, |p - c| = |(b - c) + (a - c)|; a unless
// |p - a| is over |p - b| or |p - c|, else b unless |p - b| is over |p - c|, else c (PNG's tie
// rule).
template <int Bpp>
void unfilter_paeth(uint8_t* cur, const uint8_t* prev, size_t n) {
  const __m128i zero = _mm_setzero_si128();
  __m128i a = zero, c = zero;
  for (size_t i = 0; i < n; i += Bpp) {
    const __m128i b = _mm_unpacklo_epi8(load_px(prev + i), zero);
    const __m128i x = _mm_unpacklo_epi8(load_px(cur + i), zero);
    const __m128i bc = _mm_sub_epi16(b, c);
    const __m128i ac = _mm_sub_epi16(a, c);
    const __m128i pa = abs_i16(bc);
    const __m128i pb = abs_i16(ac);
    const __m128i pc = abs_i16(_mm_add_epi16(bc, ac));
    const __m128i b_or_c = select(_mm_cmpgt_epi16(pb, pc), c, b);
    const __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
    a = _mm_add_epi8(x, select(not_a, b_or_c, a));  // bytes wrap; each lane's high byte stays 0
    store_px<Bpp>(cur + i, _mm_packus_epi16(a, a));
    c = b;
  }
}
#else
template <int Bpp>
void unfilter_sub(uint8_t* cur, size_t n) {
  for (size_t i = Bpp; i < n; ++i) cur[i] = uint8_t(cur[i] + cur[i - Bpp]);
}
void unfilter_up(uint8_t* cur, const uint8_t* prev, size_t n) {
  for (size_t i = 0; i < n; ++i) cur[i] = uint8_t(cur[i] + prev[i]);
}
template <int Bpp>
void unfilter_avg(uint8_t* cur, const uint8_t* prev, size_t n) {
  for (size_t i = 0; i < Bpp; ++i) cur[i] = uint8_t(cur[i] + (prev[i] >> 1));
  for (size_t i = Bpp; i < n; ++i) cur[i] = uint8_t(cur[i] + ((cur[i - Bpp] + prev[i]) >> 1));
}
template <int Bpp>
void unfilter_paeth(uint8_t* cur, const uint8_t* prev, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int a = i >= Bpp ? cur[i - Bpp] : 0, b = prev[i], c = i >= Bpp ? prev[i - Bpp] : 0;
    const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
    const int pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
    cur[i] = uint8_t(cur[i] + pred);
  }
}
#endif

template <int Bpp>
bool unfilter_row(uint8_t filter, uint8_t* cur, const uint8_t* prev, size_t n) {
  switch (filter) {
    case 0: return true;
    case 1: unfilter_sub<Bpp>(cur, n); return true;
    case 2: unfilter_up(cur, prev, n); return true;
    case 3: unfilter_avg<Bpp>(cur, prev, n); return true;
    case 4: unfilter_paeth<Bpp>(cur, prev, n); return true;
    default: return false;
  }
}

// One unfiltered row (w pixels of Bpp bytes; readable up to 4 bytes past its end) into a
// destination row of OutBpp bytes a pixel, exactly as libspng writes SPNG_FMT_RGB8 (alpha
// dropped) and SPNG_FMT_RGBA8 (alpha 0xFF for truecolor).
template <int Bpp, int OutBpp>
void write_row(const uint8_t* src, uint8_t* dst, size_t w) {
  if constexpr (Bpp == OutBpp) {
    std::memcpy(dst, src, w * Bpp);
  } else if constexpr (Bpp == 3) {  // RGB -> RGBA
    for (size_t x = 0; x < w; ++x) {
      uint32_t v;
      std::memcpy(&v, src + 3 * x, 4);
      if constexpr (std::endian::native == std::endian::little) {
        v |= 0xFF000000u;
      } else {
        v |= 0xFFu;
      }
      std::memcpy(dst + 4 * x, &v, 4);
    }
  } else {  // RGBA -> RGB: 4-byte stores overlap the next pixel, the last one stores 3
    size_t x = 0;
    for (; x + 1 < w; ++x) std::memcpy(dst + 3 * x, src + 4 * x, 4);
    std::memcpy(dst + 3 * x, src + 4 * x, 3);
  }
}

template <int Bpp, int OutBpp>
bool unfilter_into(uint8_t* rows, const uint8_t* zero_row, size_t w, size_t h,
                   const PictureView& dst) {
  const size_t n = w * Bpp, in_stride = n + 1;
  const auto& p = dst.planes[0];
  if (size_t(p.height) != h || p.row_bytes() != w * OutBpp) return false;
  const uint8_t* prev = zero_row;
  for (int y = 0; y < p.height; ++y) {
    uint8_t* r = rows + size_t(y) * in_stride;
    if (!unfilter_row<Bpp>(r[0], r + 1, prev, n)) return false;
    write_row<Bpp, OutBpp>(r + 1, p.unchecked_row(y), w);
    prev = r + 1;
  }
  return true;
}

// The fast path proper. Returns false (having perhaps written part of dst) for anything it
// does not accept; the caller then decodes with libspng, which gives the error if there is one.
bool fast_decode(std::span<const uint8_t> data, uint32_t width, uint32_t height, int color_type,
                 int fmt, const PictureView& dst) {
  const size_t bpp = color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA ? 4 : 3;
  const size_t w = width, h = height;
  if (w == 0 || h == 0 || w > (SIZE_MAX - 64) / 8) return false;
  const size_t in_stride = w * bpp + 1;
  if (h + 1 > (SIZE_MAX - 64) / in_stride) return false;
  const size_t inflated = in_stride * h;

  // The chunks before the first IDAT: libspng has read and checked them; walk to that IDAT.
  const uint8_t* base = data.data();
  const size_t size = data.size();
  size_t pos = 8;
  for (;;) {
    if (size - pos < 12) return false;
    const uint32_t len = read_be32(base + pos);
    if (len > 0x7fffffffu || size - pos - 12 < len) return false;
    if (std::memcmp(base + pos + 4, "IDAT", 4) == 0) break;
    pos += 12 + size_t(len);
  }
  // The run of IDAT chunks, each CRC checked (what libspng's default SPNG_CRC_ERROR does for
  // critical chunks). It ends at the first other chunk or at the end of the data.
  thread_local FastScratch scratch;
  struct TrimIdat {  // the IDAT copy, like the rows, is kept only up to kKeepScratch bytes
    std::vector<uint8_t>& v;
    ~TrimIdat() {
      if (v.capacity() > kKeepScratch) std::vector<uint8_t>().swap(v);
    }
  } trim_idat{scratch.idat};
  const uint8_t* zdata = nullptr;
  size_t zsize = 0;
  size_t chunks = 0;
  scratch.idat.clear();
  while (size - pos >= 8 && std::memcmp(base + pos + 4, "IDAT", 4) == 0) {
    const uint32_t len = read_be32(base + pos);
    if (len > 0x7fffffffu || size - pos < 12 || size - pos - 12 < len) return false;
    const uint8_t* chunk = base + pos + 8;
    if (uint32_t(libdeflate_crc32(0, base + pos + 4, size_t(len) + 4)) != read_be32(chunk + len)) {
      return false;
    }
    if (len) {
      if (chunks == 1) scratch.idat.assign(zdata, zdata + zsize);
      if (chunks >= 1) scratch.idat.insert(scratch.idat.end(), chunk, chunk + len);
      if (chunks == 0) zdata = chunk;
      zsize += len;
      ++chunks;
    }
    pos += 12 + size_t(len);
  }
  if (chunks == 0) return false;
  if (chunks > 1) zdata = scratch.idat.data();

  if (!scratch.inflater) {
    scratch.inflater.reset(libdeflate_alloc_decompressor());
    if (!scratch.inflater) return false;
  }
  // Layout: [16 pad][zero row][inflated rows][16 pad]: the unfilter may read 4 bytes past a row.
  const size_t need = 32 + in_stride + inflated;
  std::unique_ptr<uint8_t[]> once;
  uint8_t* buf = nullptr;
  if (need <= kKeepScratch) {
    if (scratch.rows_size < need) {
      scratch.rows.reset();
      scratch.rows_size = 0;
      scratch.rows.reset(new (std::nothrow) uint8_t[need]);
      if (!scratch.rows) return false;
      scratch.rows_size = need;
    }
    buf = scratch.rows.get();
  } else {
    once.reset(new (std::nothrow) uint8_t[need]);
    if (!once) return false;
    buf = once.get();
  }
  uint8_t* zero_row = buf + 16;
  uint8_t* rows = zero_row + in_stride;
  std::memset(zero_row, 0, in_stride);
  std::memset(rows + inflated, 0, 16);
  if (libdeflate_zlib_decompress(scratch.inflater.get(), zdata, zsize, rows, inflated, nullptr) !=
      LIBDEFLATE_SUCCESS) {
    return false;
  }
  const uint8_t* prev = zero_row + 1;
  bool ok = false;
  if (bpp == 3) {
    ok = fmt == SPNG_FMT_RGB8 ? unfilter_into<3, 3>(rows, prev, w, h, dst)
                              : unfilter_into<3, 4>(rows, prev, w, h, dst);
  } else {
    ok = fmt == SPNG_FMT_RGB8 ? unfilter_into<4, 3>(rows, prev, w, h, dst)
                              : unfilter_into<4, 4>(rows, prev, w, h, dst);
  }
  if (ok) g_fast_decodes.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

ErrorCode spng_code(int rc) {
  switch (rc) {
    case SPNG_EOF:
    case SPNG_IO_EOF:  // the buffer reader ran out: a file cut inside its data
      return ErrorCode::Truncated;
    case SPNG_EMEM: return ErrorCode::OutOfMemory;
    case SPNG_EUSER_WIDTH:
    case SPNG_EUSER_HEIGHT:
    case SPNG_ECHUNK_LIMITS:
      return ErrorCode::LimitExceeded;
    default: return ErrorCode::CorruptData;
  }
}

struct Header {
  Ctx ctx;
  spng_ihdr ihdr{};
  bool trns = false;
  bool chunks_ok = false;  // the chunks before the first IDAT read without error
};

class PngDecoder final : public Decoder {
 public:
  explicit PngDecoder(std::string_view coding) : coding_(coding) {}

  std::string_view coding() const override { return coding_; }

  Result<ImageInfo> inspect(std::span<const uint8_t> data,
                            const DecodeParams& params) const override {
    PIXPATH_TRY(Header h, open(data, params));
    ImageInfo inf;
    inf.width = int(h.ihdr.width);
    inf.height = int(h.ihdr.height);
    const int ct = h.ihdr.color_type;
    inf.has_alpha = h.trns || ct == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                    ct == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
    if (gray8_ok(h)) {
      inf.natural_format = PixelFormat::GRAY8;
    } else {
      inf.natural_format = inf.has_alpha ? PixelFormat::RGBA : PixelFormat::RGB;
    }
    static const char* kTypes[] = {"gray", "?", "truecolor", "palette", "gray+alpha", "?",
                                   "truecolor+alpha"};
    inf.detail = std::string("png ") + (ct <= 6 ? kTypes[ct] : "?") + " " +
                 std::to_string(h.ihdr.bit_depth) + "-bit" +
                 (h.ihdr.interlace_method ? " interlaced" : "") + (h.trns ? " tRNS" : "");
    return inf;
  }

  bool can_write(PixelFormat f) const override {
    return f == PixelFormat::RGBA || f == PixelFormat::RGBX || f == PixelFormat::RGB ||
           f == PixelFormat::GRAY8;  // GRAY8: grayscale PNGs only
  }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& params,
                                   const PictureView& dst) const override {
    PIXPATH_TRY(Header h, open(data, params));
    const int w = int(h.ihdr.width), ht = int(h.ihdr.height);
    if (auto e = check_destination(coding_, dst, w, ht)) return *e;
    DecodeReport rep{w, ht, {}};
    int fmt = 0;
    switch (dst.format) {
      case PixelFormat::RGBA:
      case PixelFormat::RGBX: fmt = SPNG_FMT_RGBA8; break;
      case PixelFormat::RGB: fmt = SPNG_FMT_RGB8; break;
      case PixelFormat::GRAY8:
        if (!gray8_ok(h)) {
          return codec_error(coding_, ErrorCode::Unsupported, "decode",
                             "only grayscale PNGs of 8 bits or less decode to GRAY8");
        }
        fmt = SPNG_FMT_G8;
        break;
      default: break;
    }
    if (fmt) {
      PIXPATH_CHECK(decode_rows(h, data, fmt, dst));
      return rep;
    }
    if (!info(dst.format).packed_rgb) {
      return codec_error(coding_, ErrorCode::Unsupported, "decode",
                         "cannot decode into " + std::string(name(dst.format)));
    }
    // Another byte order: decode into scratch in spng's order, then convert (counted).
    const bool four = info(dst.format).bytes_per_pixel[0] == 4;
    auto tmp = Picture::allocate(four ? PixelFormat::RGBA : PixelFormat::RGB, w, ht);
    if (!tmp.ok()) return tmp.error().within(coding_, "decode");
    auto tv = tmp->write();
    if (!tv.ok()) return tv.error().within(coding_, "decode");
    PIXPATH_CHECK(decode_rows(h, data, four ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8, *tv));
    auto c = convert_pixels(*tv, dst);
    if (!c.ok()) return c.error().within(coding_, "convert");
    return rep;
  }

 private:
  static bool gray8_ok(const Header& h) {
    return h.ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && h.ihdr.bit_depth <= 8 && !h.trns;
  }

  Error spng_error(std::string_view stage, int rc) const {
    return codec_error(coding_, spng_code(rc), stage, spng_strerror(rc));
  }

  Result<Header> open(std::span<const uint8_t> data, const DecodeParams& params) const {
    static constexpr uint8_t kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (data.size() < 8 || std::memcmp(data.data(), kSig, 8) != 0) {
      return codec_error(coding_, data.size() < 8 ? ErrorCode::Truncated : ErrorCode::CorruptData,
                         "read header",
                         "not a PNG stream (" + std::to_string(data.size()) +
                             " bytes, no PNG signature)");
    }
    Header h;
    h.ctx.reset(spng_ctx_new(0));
    if (!h.ctx) return codec_error(coding_, ErrorCode::OutOfMemory, "init", "spng_ctx_new failed");
    spng_ctx* c = h.ctx.get();
    int rc = spng_set_image_limits(c, uint32_t(params.limits.max_width),
                                   uint32_t(params.limits.max_height));
    if (!rc) rc = spng_set_chunk_limits(c, kMaxChunkBytes, kMaxChunkCache);
    if (!rc) rc = spng_set_png_buffer(c, data.data(), data.size());
    if (rc) return spng_error("init", rc);
    if ((rc = spng_get_ihdr(c, &h.ihdr))) return spng_error("read header", rc);
    if (h.ihdr.width > uint32_t(INT32_MAX) || h.ihdr.height > uint32_t(INT32_MAX)) {
      return codec_error(coding_, ErrorCode::LimitExceeded, "read header", "size too large");
    }
    if (auto e = check_decode_size(coding_, int(h.ihdr.width), int(h.ihdr.height), params)) {
      return *e;
    }
    spng_trns trns{};
    const int trc = spng_get_trns(c, &trns);
    h.trns = trc == 0;
    h.chunks_ok = trc == 0 || trc == SPNG_ECHUNKAVAIL;
    size_t out = 0;
    if ((rc = spng_decoded_image_size(c, SPNG_FMT_RGBA8, &out))) return spng_error("read header", rc);
    if (out > params.limits.max_decompressed_bytes) {
      return codec_error(coding_, ErrorCode::LimitExceeded, "read header",
                         "decoded picture needs " + std::to_string(out) +
                             " bytes, over the limit of " +
                             std::to_string(params.limits.max_decompressed_bytes));
    }
    return h;
  }

  static bool fast_path_fits(const Header& h, int fmt) {
    return (fmt == SPNG_FMT_RGBA8 || fmt == SPNG_FMT_RGB8) && h.chunks_ok && !h.trns &&
           h.ihdr.bit_depth == 8 && h.ihdr.interlace_method == 0 &&
           (h.ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR ||
            h.ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA);
  }

  Result<void> decode_rows(Header& h, std::span<const uint8_t> data, int fmt,
                           const PictureView& dst) const {
    if (fast_path_fits(h, fmt) && fast_path_on() &&
        fast_decode(data, h.ihdr.width, h.ihdr.height, h.ihdr.color_type, fmt, dst)) {
      return ok();
    }
    spng_ctx* c = h.ctx.get();
    const int flags = SPNG_DECODE_PROGRESSIVE | (fmt == SPNG_FMT_G8 ? 0 : SPNG_DECODE_TRNS);
    int rc = spng_decode_image(c, nullptr, 0, fmt, flags);
    if (rc) return spng_error("decode", rc);
    const auto& p = dst.planes[0];
    const size_t row_bytes = p.row_bytes();
    for (;;) {
      spng_row_info ri{};
      rc = spng_get_row_info(c, &ri);
      if (rc == SPNG_EOI) break;
      if (rc) return spng_error("decode", rc);
      if (ri.row_num >= uint32_t(p.height)) {
        return codec_error(coding_, ErrorCode::Internal, "decode", "row out of range");
      }
      rc = spng_decode_row(c, p.unchecked_row(int(ri.row_num)), row_bytes);
      if (rc == SPNG_EOI) break;
      if (rc) return spng_error("decode", rc);
    }
    return ok();
  }

  std::string coding_;
};

}  // namespace

std::unique_ptr<Decoder> make_png_decoder(std::string_view coding) {
  return std::make_unique<PngDecoder>(coding);
}

void set_png_fast_path(bool on) { g_fast_path.store(on ? 1 : 0, std::memory_order_relaxed); }
bool png_fast_path() { return fast_path_on(); }
uint64_t png_fast_path_decodes() { return g_fast_decodes.load(std::memory_order_relaxed); }

}  // namespace pixpath::codecs::internal
