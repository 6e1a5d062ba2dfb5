// The png decoder's fast path (libdeflate + own unfiltering, png_decoder.cc) against its libspng
// path on the same input: byte-identical pictures for every filter type, RGB and RGBA, odd
// widths, 1-row pictures, split IDAT data and every output format; and the same outcome (error
// code, stage and reason, or the same pixels) on corrupt input. Test PNGs are made here with
// libspng's encoder (one filter type forced through SPNG_FILTER_CHOICE) or assembled chunk by
// chunk from raw scanlines with zlib.
#include <spng.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include "codecs/internal/builtin_codecs.h"
#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

using internal::png_fast_path_decodes;
using internal::set_png_fast_path;

// Puts the fast path back on at the end of each test.
class PngFastPath : public ::testing::Test {
 protected:
  void TearDown() override { set_png_fast_path(true); }
};

// ---- Making PNGs ----------------------------------------------------------------------------

struct Chunk {
  std::string type;
  std::vector<uint8_t> data;
  bool bad_crc = false;
};

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(uint8_t(v >> s));
}

std::vector<uint8_t> assemble(const std::vector<Chunk>& chunks) {
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (const auto& c : chunks) {
    put_be32(out, uint32_t(c.data.size()));
    const size_t at = out.size();
    out.insert(out.end(), c.type.begin(), c.type.end());
    out.insert(out.end(), c.data.begin(), c.data.end());
    uint32_t crc = uint32_t(crc32(0, out.data() + at, uInt(out.size() - at)));
    if (c.bad_crc) crc ^= 1;
    put_be32(out, crc);
  }
  return out;
}

std::vector<Chunk> split(const std::vector<uint8_t>& png) {
  std::vector<Chunk> chunks;
  size_t pos = 8;
  while (pos + 12 <= png.size()) {
    const uint32_t len = (uint32_t{png[pos]} << 24) | (uint32_t{png[pos + 1]} << 16) |
                         (uint32_t{png[pos + 2]} << 8) | png[pos + 3];
    Chunk c;
    c.type.assign(png.begin() + long(pos) + 4, png.begin() + long(pos) + 8);
    c.data.assign(png.begin() + long(pos) + 8, png.begin() + long(pos) + 8 + len);
    chunks.push_back(std::move(c));
    pos += 12 + len;
  }
  return chunks;
}

// The concatenated IDAT data.
std::vector<uint8_t> idat_of(const std::vector<uint8_t>& png) {
  std::vector<uint8_t> z;
  for (const auto& c : split(png)) {
    if (c.type == "IDAT") z.insert(z.end(), c.data.begin(), c.data.end());
  }
  return z;
}

std::vector<uint8_t> ihdr(int w, int h, int color_type, int depth = 8, int interlace = 0) {
  std::vector<uint8_t> d;
  put_be32(d, uint32_t(w));
  put_be32(d, uint32_t(h));
  d.insert(d.end(), {uint8_t(depth), uint8_t(color_type), 0, 0, uint8_t(interlace)});
  return d;
}

// IHDR, the zlib data cut into IDAT chunks of `piece` bytes (0: one chunk), IEND.
std::vector<uint8_t> make_png(int w, int h, int color_type, const std::vector<uint8_t>& zdata,
                              size_t piece = 0) {
  std::vector<Chunk> chunks = {{"IHDR", ihdr(w, h, color_type)}};
  if (!piece) piece = std::max<size_t>(zdata.size(), 1);
  for (size_t at = 0; at < zdata.size(); at += piece) {
    const size_t n = std::min(piece, zdata.size() - at);
    chunks.push_back({"IDAT", {zdata.begin() + long(at), zdata.begin() + long(at + n)}});
  }
  if (zdata.empty()) chunks.push_back({"IDAT", {}});
  chunks.push_back({"IEND", {}});
  return assemble(chunks);
}

std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& raw, int level = 6) {
  uLongf n = compressBound(uLong(raw.size()));
  std::vector<uint8_t> out(n);
  EXPECT_EQ(compress2(out.data(), &n, raw.data(), uLong(raw.size()), level), Z_OK);
  out.resize(n);
  return out;
}

std::vector<uint8_t> zlib_uncompress(const std::vector<uint8_t>& z, size_t size) {
  std::vector<uint8_t> out(size + 1);
  uLongf n = uLongf(out.size());
  EXPECT_EQ(uncompress(out.data(), &n, z.data(), uLong(z.size())), Z_OK);
  out.resize(n);
  return out;
}

// Random bytes with runs and repeats (so that every filter type sees ties and wrap-arounds).
std::vector<uint8_t> test_pixels(int w, int h, int bpp, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> px(size_t(w) * size_t(h) * size_t(bpp));
  for (size_t i = 0; i < px.size(); ++i) {
    switch (rng() % 4) {
      case 0: px[i] = uint8_t(rng()); break;
      case 1: px[i] = i >= size_t(bpp) ? px[i - size_t(bpp)] : 0; break;
      case 2: px[i] = i >= size_t(w) * size_t(bpp) ? px[i - size_t(w) * size_t(bpp)] : 255; break;
      default: px[i] = uint8_t(i >= 1 ? px[i - 1] + rng() % 3 : 0); break;
    }
  }
  return px;
}

// libspng's encoder with only the filter types of `filter_choice` allowed.
std::vector<uint8_t> spng_encode(const std::vector<uint8_t>& px, int w, int h, int color_type,
                                 int filter_choice) {
  std::unique_ptr<spng_ctx, decltype(&spng_ctx_free)> ctx(spng_ctx_new(SPNG_CTX_ENCODER),
                                                          &spng_ctx_free);
  spng_ctx* c = ctx.get();
  spng_ihdr hd{};
  hd.width = uint32_t(w);
  hd.height = uint32_t(h);
  hd.bit_depth = 8;
  hd.color_type = uint8_t(color_type);
  EXPECT_EQ(spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1), 0);
  EXPECT_EQ(spng_set_option(c, SPNG_FILTER_CHOICE, filter_choice), 0);
  EXPECT_EQ(spng_set_ihdr(c, &hd), 0);
  EXPECT_EQ(spng_encode_image(c, px.data(), px.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE), 0);
  size_t size = 0;
  int err = 0;
  void* buf = spng_get_png_buffer(c, &size, &err);
  EXPECT_TRUE(buf) << spng_strerror(err);
  if (!buf) return {};
  std::vector<uint8_t> out(static_cast<uint8_t*>(buf), static_cast<uint8_t*>(buf) + size);
  std::free(buf);
  return out;
}

// ---- Decoding both ways ---------------------------------------------------------------------

const PixelFormat kFastPathFormats[] = {PixelFormat::RGBA, PixelFormat::RGBX, PixelFormat::RGB,
                                PixelFormat::BGRA, PixelFormat::BGRX, PixelFormat::BGR,
                                PixelFormat::XRGB, PixelFormat::XBGR, PixelFormat::ARGB,
                                PixelFormat::ABGR};

struct Outcome {
  std::optional<Error> error;
  std::unique_ptr<GuardedDestination> dst;
  bool fast = false;  // the fast path completed the decode
};

Outcome decode_with(bool fast, const std::vector<uint8_t>& png, PixelFormat f, int w, int h,
                    const DecodeParams& params = {}) {
  set_png_fast_path(fast);
  Outcome o;
  o.dst = std::make_unique<GuardedDestination>(f, w, h);
  const uint64_t before = png_fast_path_decodes();
  auto r = decoder("png").decode_into(png, params, o.dst->view());
  o.fast = png_fast_path_decodes() != before;
  if (!r.ok()) o.error = r.error();
  EXPECT_TRUE(o.dst->guards_intact());
  return o;
}

// Same outcome both ways; returns whether the fast path did the decode.
bool expect_same(const std::vector<uint8_t>& png, PixelFormat f, int w, int h,
                 const DecodeParams& params = {}) {
  Outcome spng = decode_with(false, png, f, w, h, params);
  Outcome fast = decode_with(true, png, f, w, h, params);
  EXPECT_FALSE(spng.fast);
  EXPECT_EQ(spng.error.has_value(), fast.error.has_value())
      << (spng.error ? "libspng: " + spng.error->message() : "")
      << (fast.error ? "fast: " + fast.error->message() : "");
  if (spng.error && fast.error) {
    EXPECT_EQ(spng.error->code(), fast.error->code());
    EXPECT_EQ(spng.error->subject(), fast.error->subject());
    EXPECT_EQ(spng.error->stage(), fast.error->stage());
    EXPECT_EQ(spng.error->reason(), fast.error->reason());
  } else if (!spng.error && !fast.error) {
    EXPECT_TRUE(same_pixels(fast.dst->view(), spng.dst->view()));
  }
  return fast.fast;
}

std::optional<ErrorCode> error_code(const std::vector<uint8_t>& png, bool fast, int w, int h) {
  Outcome o = decode_with(fast, png, PixelFormat::RGBA, w, h);
  if (!o.error) return std::nullopt;
  return o.error->code();
}

// ---- Pictures -------------------------------------------------------------------------------

TEST_F(PngFastPath, EveryFilterTypeColourTypeWidthAndFormat) {
  struct Filter {
    int choice;
    int type;  // the filter byte every row must carry; -1: any (the encoder's heuristic)
  } filters[] = {{SPNG_FILTER_CHOICE_NONE, 0}, {SPNG_FILTER_CHOICE_SUB, 1},
                 {SPNG_FILTER_CHOICE_UP, 2},   {SPNG_FILTER_CHOICE_AVG, 3},
                 {SPNG_FILTER_CHOICE_PAETH, 4}, {SPNG_FILTER_CHOICE_ALL, -1}};
  const std::pair<int, int> sizes[] = {{1, 1}, {3, 1}, {17, 1}, {1, 9}, {3, 7}, {17, 13},
                                       {64, 5}, {301, 4}};
  for (int ct : {SPNG_COLOR_TYPE_TRUECOLOR, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA}) {
    const int bpp = ct == SPNG_COLOR_TYPE_TRUECOLOR ? 3 : 4;
    for (auto [w, h] : sizes) {
      const auto px = test_pixels(w, h, bpp, uint32_t(w * 131 + h));
      for (const auto& fl : filters) {
        SCOPED_TRACE("colour type " + std::to_string(ct) + ", " + std::to_string(w) + "x" +
                     std::to_string(h) + ", filter choice " + std::to_string(fl.choice));
        const auto png = spng_encode(px, w, h, ct, fl.choice);
        const auto raw = zlib_uncompress(idat_of(png), size_t(h) * (1 + size_t(w) * bpp));
        ASSERT_EQ(raw.size(), size_t(h) * (1 + size_t(w) * bpp));
        if (fl.type >= 0) {
          for (int y = 0; y < h; ++y) ASSERT_EQ(raw[size_t(y) * (1 + size_t(w) * bpp)], fl.type);
        }
        for (PixelFormat f : kFastPathFormats) {
          SCOPED_TRACE(std::string(name(f)));
          EXPECT_TRUE(expect_same(png, f, w, h));
        }
        // And the pixels are the source's (libspng's path is checked by the other tests).
        set_png_fast_path(true);
        Picture out = decode_as("png", png, bpp == 3 ? PixelFormat::RGB : PixelFormat::RGBA);
        auto v = *out.read();
        for (int y = 0; y < h; ++y) {
          ASSERT_EQ(std::memcmp(v.planes[0].unchecked_row(y), px.data() + size_t(y) * w * bpp,
                                size_t(w) * bpp), 0);
        }
      }
    }
  }
}

// Screen content through the project's own encoder (the heuristic filter choice, level 1).
TEST_F(PngFastPath, ScreenPicturesAndCommittedSamples) {
  for (PixelFormat src : {PixelFormat::RGB, PixelFormat::RGBA}) {
    for (auto [w, h] : {std::pair{1, 1}, std::pair{17, 3}, std::pair{640, 48}}) {
      auto png = encode("png", screen_picture(src, w, h, 7));
      for (PixelFormat f : kFastPathFormats) EXPECT_TRUE(expect_same(png, f, w, h));
    }
  }
  for (const char* name : {"sample-window-1.png", "sample-window-4.png",
                           "sample-xpra6-window-12582924.png"}) {
    SCOPED_TRACE(name);
    const char* dir = std::getenv("PIXPATH_TEST_DATA");
    ASSERT_TRUE(dir);
    auto png = slurp(std::string(dir) + "/" + name);
    auto inf = decoder("png").inspect(png, {});
    ASSERT_TRUE(inf.ok());
    for (PixelFormat f : kFastPathFormats) EXPECT_TRUE(expect_same(png, f, inf->width, inf->height));
  }
}

TEST_F(PngFastPath, SplitIdatData) {
  const int w = 37, h = 11;
  for (int ct : {SPNG_COLOR_TYPE_TRUECOLOR, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA}) {
    const int bpp = ct == SPNG_COLOR_TYPE_TRUECOLOR ? 3 : 4;
    const auto z = idat_of(spng_encode(test_pixels(w, h, bpp, 3), w, h, ct, SPNG_FILTER_CHOICE_ALL));
    for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, size_t{100}, z.size() - 4}) {
      SCOPED_TRACE("IDAT chunks of " + std::to_string(piece) + " bytes");
      auto png = make_png(w, h, ct, z, piece);
      EXPECT_TRUE(expect_same(png, PixelFormat::RGBA, w, h));
      EXPECT_TRUE(expect_same(png, PixelFormat::BGR, w, h));
    }
    // Zero-length IDAT chunks first, between and last.
    auto chunks = split(make_png(w, h, ct, z, 50));
    for (size_t i = 1; i + 1 < chunks.size(); i += 2) chunks.insert(chunks.begin() + long(i), {"IDAT", {}});
    chunks.insert(chunks.end() - 1, {"IDAT", {}});
    EXPECT_TRUE(expect_same(assemble(chunks), PixelFormat::RGBX, w, h));
    // Ancillary chunks before the IDAT run (read by libspng), and after it.
    chunks = split(make_png(w, h, ct, z, 50));
    chunks.insert(chunks.begin() + 1, {"tEXt", {'a', 0, 'b'}});
    chunks.insert(chunks.begin() + 1, {"pHYs", {0, 0, 0, 1, 0, 0, 0, 1, 0}});
    chunks.insert(chunks.end() - 1, {"tEXt", {'c', 0, 'd'}});
    EXPECT_TRUE(expect_same(assemble(chunks), PixelFormat::RGB, w, h));
  }
}

// What the fast path leaves to libspng: tRNS, other colour types and depths, interlacing,
// GRAY8 output; and 16-bit RGB.
TEST_F(PngFastPath, OtherPngsStayOnLibspng) {
  const int w = 9, h = 4;
  const auto rgb = test_pixels(w, h, 3, 1);
  auto chunks = split(spng_encode(rgb, w, h, SPNG_COLOR_TYPE_TRUECOLOR, SPNG_FILTER_CHOICE_ALL));
  chunks.insert(chunks.begin() + 1, {"tRNS", {0, rgb[0], 0, rgb[1], 0, rgb[2]}});
  EXPECT_FALSE(expect_same(assemble(chunks), PixelFormat::RGBA, w, h));
  // Interlaced (pnmtopng -interlace in png_decoder_test), gray and 16-bit through our encoder
  // or assembled here.
  auto gray = encode("png/L", screen_picture(PixelFormat::GRAY8, w, h));
  EXPECT_FALSE(expect_same(gray, PixelFormat::RGBA, w, h));
  std::vector<uint8_t> raw16;
  for (int y = 0; y < h; ++y) {
    raw16.push_back(0);
    for (int i = 0; i < w * 6; ++i) raw16.push_back(uint8_t(y * 31 + i));
  }
  std::vector<Chunk> c16 = {{"IHDR", ihdr(w, h, 2, 16)}, {"IDAT", zlib_compress(raw16)}, {"IEND", {}}};
  EXPECT_FALSE(expect_same(assemble(c16), PixelFormat::RGBA, w, h));
  std::vector<uint8_t> raw_i;  // the Adam7 passes' scanlines of a 9x4 RGB picture
  const int xs[] = {0, 4, 0, 2, 0, 1, 0}, xd[] = {8, 8, 4, 4, 2, 2, 1};
  const int ys[] = {0, 0, 4, 0, 2, 0, 1}, yd[] = {8, 8, 8, 4, 4, 2, 2};
  for (int p = 0; p < 7; ++p) {
    const int pw = w > xs[p] ? (w - xs[p] + xd[p] - 1) / xd[p] : 0;
    const int ph = h > ys[p] ? (h - ys[p] + yd[p] - 1) / yd[p] : 0;
    if (!pw || !ph) continue;
    for (int y = 0; y < ph; ++y) {
      raw_i.push_back(0);
      for (int i = 0; i < pw * 3; ++i) raw_i.push_back(uint8_t(p * 40 + i));
    }
  }
  std::vector<Chunk> ci = {{"IHDR", ihdr(w, h, 2, 8, 1)}, {"IDAT", zlib_compress(raw_i)}, {"IEND", {}}};
  EXPECT_FALSE(expect_same(assemble(ci), PixelFormat::RGB, w, h));
}

// ---- Corrupt and unusual input --------------------------------------------------------------

// Raw scanlines of a w x h RGB picture, filter bytes cycling through 0-4.
std::vector<uint8_t> raw_rows(int w, int h, int bpp = 3) {
  std::vector<uint8_t> raw;
  const auto px = test_pixels(w, h, bpp, 11);
  for (int y = 0; y < h; ++y) {
    raw.push_back(uint8_t(y % 5));
    raw.insert(raw.end(), px.begin() + long(size_t(y) * w * bpp),
               px.begin() + long(size_t(y + 1) * w * bpp));
  }
  return raw;
}

TEST_F(PngFastPath, CorruptInputGivesLibspngsError) {
  const int w = 23, h = 9;
  const auto raw = raw_rows(w, h);
  const auto z = zlib_compress(raw);
  const auto good = make_png(w, h, 2, z);
  EXPECT_TRUE(expect_same(good, PixelFormat::RGBA, w, h));

  // Truncated: every cut of the file (inside and after the IDAT data).
  for (size_t cut = 0; cut < good.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::vector<uint8_t> t(good.begin(), good.begin() + long(cut));
    expect_same(t, PixelFormat::RGBA, w, h);
  }
  // Inside the IDAT data: Truncated, both ways (libspng's buffer reader says SPNG_IO_EOF).
  std::vector<uint8_t> cut_idat(good.begin(), good.begin() + 33 + 8 + long(z.size() / 2));
  EXPECT_EQ(error_code(cut_idat, true, w, h), ErrorCode::Truncated);
  EXPECT_EQ(error_code(cut_idat, false, w, h), ErrorCode::Truncated);

  // Bad adler32 (the IDAT CRC recomputed): CorruptData both ways.
  auto bad_adler = z;
  bad_adler.back() ^= 0x40;
  EXPECT_FALSE(expect_same(make_png(w, h, 2, bad_adler), PixelFormat::RGBA, w, h));
  EXPECT_EQ(error_code(make_png(w, h, 2, bad_adler), true, w, h), ErrorCode::CorruptData);
  // ... but when the adler32 sits in a chunk of its own, libspng never reads it and decodes:
  // the fast path refuses, libspng decodes, the pixels are the same.
  {
    auto chunks = split(make_png(w, h, 2, bad_adler, z.size() - 4));
    ASSERT_EQ(chunks.size(), 4u);
    EXPECT_FALSE(expect_same(assemble(chunks), PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(assemble(chunks), true, w, h), std::nullopt);
  }

  // Bad chunk CRC on the IDAT: CorruptData ("invalid chunk checksum") both ways when libspng
  // reads that CRC; on the last IDAT of several libspng does not, and decodes.
  {
    auto chunks = split(make_png(w, h, 2, z, z.size() / 2));
    chunks[1].bad_crc = true;
    EXPECT_FALSE(expect_same(assemble(chunks), PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(assemble(chunks), true, w, h), ErrorCode::CorruptData);
    chunks[1].bad_crc = false;
    chunks[2].bad_crc = true;
    EXPECT_FALSE(expect_same(assemble(chunks), PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(assemble(chunks), true, w, h), std::nullopt);
    // A bad CRC on IHDR: libspng's error from the header.
    chunks[2].bad_crc = false;
    chunks[0].bad_crc = true;
    EXPECT_FALSE(expect_same(assemble(chunks), PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(assemble(chunks), true, w, h), ErrorCode::CorruptData);
  }

  // Zero-length IDAT only: CorruptData ("IDAT stream too short").
  EXPECT_FALSE(expect_same(make_png(w, h, 2, {}), PixelFormat::RGBA, w, h));
  EXPECT_EQ(error_code(make_png(w, h, 2, {}), true, w, h), ErrorCode::CorruptData);

  // Too little picture data in a complete zlib stream: CorruptData.
  {
    std::vector<uint8_t> short_raw(raw.begin(), raw.end() - 5);
    auto png = make_png(w, h, 2, zlib_compress(short_raw));
    EXPECT_FALSE(expect_same(png, PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(png, true, w, h), ErrorCode::CorruptData);
  }
  // An unknown filter type (5) in the middle: CorruptData.
  {
    auto bad = raw;
    bad[size_t(4) * (1 + w * 3)] = 5;
    auto png = make_png(w, h, 2, zlib_compress(bad));
    EXPECT_FALSE(expect_same(png, PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(png, true, w, h), ErrorCode::CorruptData);
  }
  // A bad zlib header (a preset dictionary flag): CorruptData.
  {
    auto zz = z;
    zz[1] = uint8_t((zz[1] & 0xC0) | 0x20);  // FLEVEL kept, FDICT set, FCHECK made valid
    zz[1] = uint8_t(zz[1] | (31 - (zz[0] * 256 + zz[1]) % 31) % 31);
    auto png = make_png(w, h, 2, zz);
    EXPECT_FALSE(expect_same(png, PixelFormat::RGBA, w, h));
    EXPECT_EQ(error_code(png, true, w, h), ErrorCode::CorruptData);
  }

  // Extra data after the zlib stream, in its IDAT chunk or in one more: ignored by both; the
  // fast path decodes (libdeflate stops at the end of the zlib stream).
  {
    auto zx = z;
    zx.insert(zx.end(), {1, 2, 3, 4, 5, 6, 7});
    EXPECT_TRUE(expect_same(make_png(w, h, 2, zx), PixelFormat::RGBA, w, h));
    EXPECT_TRUE(expect_same(make_png(w, h, 2, zx, z.size()), PixelFormat::RGBA, w, h));
  }
  // More picture data in the zlib stream than the picture needs: libspng reads what it needs
  // and decodes; the fast path refuses (libdeflate: insufficient space), libspng decodes.
  {
    auto more = raw;
    more.insert(more.end(), raw.begin(), raw.begin() + 40);
    EXPECT_FALSE(expect_same(make_png(w, h, 2, zlib_compress(more)), PixelFormat::RGBA, w, h));
  }
  // No IEND, or garbage after the IDAT run: both decode.
  {
    auto chunks = split(good);
    chunks.pop_back();
    EXPECT_TRUE(expect_same(assemble(chunks), PixelFormat::RGBA, w, h));
    auto g = assemble(chunks);
    g.insert(g.end(), {0xff, 0xff, 0xff, 0xff, 'I', 'D'});
    EXPECT_TRUE(expect_same(g, PixelFormat::RGBA, w, h));
  }

  // Random damage: the same outcome both ways.
  std::mt19937 rng(9);
  const auto rgba_png = spng_encode(test_pixels(w, h, 4, 5), w, h, 6, SPNG_FILTER_CHOICE_ALL);
  for (int i = 0; i < 1500; ++i) {
    auto c = i % 2 ? good : rgba_png;
    for (int k = 0; k < 1 + i % 3; ++k) c[33 + rng() % (c.size() - 33)] = uint8_t(rng());
    SCOPED_TRACE("damage " + std::to_string(i));
    expect_same(c, i % 3 ? PixelFormat::RGBA : PixelFormat::BGR, w, h);
  }
}

// Well-formed chunks (good CRCs, a good zlib stream) around picture data of the wrong length
// and with any filter byte: what random damage rarely reaches past the CRC checks.
TEST_F(PngFastPath, WellWrappedBadPictureData) {
  std::mt19937 rng(17);
  int fast = 0;
  for (int i = 0; i < 3000; ++i) {
    const int w = 1 + int(rng() % 40), h = 1 + int(rng() % 6);
    const int ct = rng() % 2 ? 2 : 6, bpp = ct == 2 ? 3 : 4;
    const long expected = long(h) * (1 + long(w) * bpp);
    const long len = rng() % 3 ? expected : std::max(0L, expected + long(rng() % 9) - 4);
    std::vector<uint8_t> raw(static_cast<size_t>(len));
    for (long k = 0; k < len; ++k) {
      const bool filter_byte = k % (1 + w * bpp) == 0;
      raw[size_t(k)] = uint8_t(filter_byte ? (rng() % 16 ? rng() % 5 : rng() % 256) : rng() % 4 ? rng() : 0);
    }
    auto png = make_png(w, h, ct, zlib_compress(raw, int(rng() % 10)), 1 + rng() % 64);
    SCOPED_TRACE("case " + std::to_string(i));
    fast += expect_same(png, rng() % 2 ? PixelFormat::RGB : PixelFormat::RGBA, w, h);
  }
  EXPECT_GT(fast, 1000);  // most take the fast path
}

TEST_F(PngFastPath, LimitsAsBefore) {
  // Oversize dimensions in IHDR: LimitExceeded both ways, before any pixel data.
  std::vector<Chunk> big = {{"IHDR", ihdr(20000, 2, 2)}, {"IDAT", zlib_compress({0})}, {"IEND", {}}};
  EXPECT_FALSE(expect_same(assemble(big), PixelFormat::RGBA, 1, 1));
  EXPECT_EQ(error_code(assemble(big), true, 1, 1), ErrorCode::LimitExceeded);
  const int w = 67, h = 45;
  auto png = encode("png", screen_picture(PixelFormat::RGBA, w, h));
  DecodeParams lim;
  lim.limits.max_height = 44;
  EXPECT_FALSE(expect_same(png, PixelFormat::RGBA, w, h, lim));
  DecodeParams bytes;
  bytes.limits.max_decompressed_bytes = size_t(w) * h * 4 - 1;
  EXPECT_FALSE(expect_same(png, PixelFormat::RGBA, w, h, bytes));
  set_png_fast_path(true);
  auto r = decoder("png").decode_into(png, bytes, GuardedDestination(PixelFormat::RGBA, w, h).view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  bytes.limits.max_decompressed_bytes = size_t(w) * h * 4;
  EXPECT_TRUE(expect_same(png, PixelFormat::RGBA, w, h, bytes));
}

}  // namespace
}  // namespace pixpath::codecs::testing
