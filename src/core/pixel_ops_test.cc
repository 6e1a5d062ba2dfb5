// Pixel operations against straightforward reference loops written here, on odd sizes and
// padded strides, with every kernel table this build has (baseline, and AVX2 where the CPU
// has it).
#include "pixpath/core/pixel_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/internal/kernel_table.h"
#include "core/testing/live_storage_check.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/picture.h"

namespace pixpath {
namespace {

using ::testing::HasSubstr;

constexpr PixelFormat kConvertible[] = {
    PixelFormat::RGB,  PixelFormat::BGR,  PixelFormat::RGBX, PixelFormat::BGRX,
    PixelFormat::XRGB, PixelFormat::XBGR, PixelFormat::RGBA, PixelFormat::BGRA,
    PixelFormat::ARGB, PixelFormat::ABGR, PixelFormat::GRAY8};
constexpr PixelFormat kWithAlpha[] = {PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::ARGB,
                                      PixelFormat::ABGR};
struct Size {
  int w, h;
};
// 10 and 18: the edges of the 8-pixel AVX2 steps (a step needs 10 pixels left).
constexpr Size kSizes[] = {{1, 1}, {10, 2}, {18, 1}, {17, 13}, {4097, 3}};
constexpr uint8_t kPadByte = 0xA5;

// The reference's own idea of a layout: the format's name spelled out byte by byte.
std::string byte_order(PixelFormat f) {
  return f == PixelFormat::GRAY8 ? "L" : std::string(name(f));
}
bool is_gray(PixelFormat f) { return f == PixelFormat::GRAY8; }

struct Px {
  uint8_t r, g, b, a;
  bool has_a;
};
Px read_px(PixelFormat f, const uint8_t* p) {
  Px px{0, 0, 0, 0, false};
  const std::string order = byte_order(f);
  for (size_t i = 0; i < order.size(); ++i) {
    switch (order[i]) {
      case 'R': px.r = p[i]; break;
      case 'G': px.g = p[i]; break;
      case 'B': px.b = p[i]; break;
      case 'A': px.a = p[i]; px.has_a = true; break;
      case 'L': px.r = px.g = px.b = p[i]; break;
      default: break;  // X
    }
  }
  return px;
}
void write_px(PixelFormat f, const Px& px, uint8_t* p) {
  const std::string order = byte_order(f);
  for (size_t i = 0; i < order.size(); ++i) {
    switch (order[i]) {
      case 'R': p[i] = px.r; break;
      case 'G': p[i] = px.g; break;
      case 'B': p[i] = px.b; break;
      case 'A': p[i] = px.has_a ? px.a : 0xFF; break;
      case 'X': p[i] = 0xFF; break;
      case 'L': p[i] = px.g; break;  // only ever GRAY8 -> GRAY8
      default: break;
    }
  }
}

// A host image in a plain vector: rows of `row` bytes at `stride`, padding filled with
// kPadByte so that writes past a row's end show.
struct Image {
  PixelFormat format;
  int w, h;
  size_t row, stride;
  std::vector<uint8_t> bytes;

  Image(PixelFormat f, int width, int height, size_t pad, uint32_t seed)
      : format(f), w(width), h(height) {
    row = static_cast<size_t>(w) * info(f).bytes_per_pixel[0];
    stride = row + pad;
    bytes.assign(stride * static_cast<size_t>(h), kPadByte);
    std::mt19937 rng(seed);
    for (int y = 0; y < h; ++y) {
      for (size_t x = 0; x < row; ++x) bytes[y * stride + x] = static_cast<uint8_t>(rng());
    }
  }
  uint8_t* px(int x, int y) {
    return bytes.data() + static_cast<size_t>(y) * stride +
           static_cast<size_t>(x) * info(format).bytes_per_pixel[0];
  }
  ConstPictureView cview() const {
    return make_view(format, w, h, bytes.data(), stride).value();
  }
  PictureView view() { return make_view(format, w, h, bytes.data(), stride).value(); }
};

// Every kernel table of this build on this CPU, by name.
std::vector<std::pair<std::string, const internal::KernelTable*>> kernel_tables() {
  std::vector<std::pair<std::string, const internal::KernelTable*>> t;
  t.emplace_back("baseline", &internal::baseline_kernels());
  if (const auto* avx2 = internal::avx2_kernels_if_supported()) t.emplace_back("avx2", avx2);
  return t;
}

class PixelOpsTest : public testing::LiveStorageCheck {};

TEST_F(PixelOpsTest, BothKernelTablesAreExercisedWhereTheCpuHasAvx2) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    ASSERT_EQ(kernel_tables().size(), 2u) << "the AVX2 table is not built in";
    EXPECT_EQ(&internal::active_kernels(), internal::avx2_kernels_if_supported());
  }
#endif
  EXPECT_NE(internal::avx2_kernels_if_supported(), &internal::baseline_kernels());
}

TEST_F(PixelOpsTest, ConvertEveryPairMatchesReferenceOnOddSizesAndPaddedStrides) {
  int checked = 0;
  for (const auto& [table_name, table] : kernel_tables()) {
    internal::ScopedKernelTableForTesting use(*table);
    for (PixelFormat sf : kConvertible) {
      for (PixelFormat df : kConvertible) {
        if (is_gray(df) && !is_gray(sf)) continue;  // refused; see the next test
        for (Size sz : kSizes) {
          for (auto [spad, dpad] : {std::pair<size_t, size_t>{0, 0}, {13, 7}}) {
            SCOPED_TRACE(table_name + " " + std::string(name(sf)) + "->" +
                         std::string(name(df)) + " " + std::to_string(sz.w) + "x" +
                         std::to_string(sz.h) + " pads " + std::to_string(spad) + "/" +
                         std::to_string(dpad));
            Image src(sf, sz.w, sz.h, spad, 1u + static_cast<uint32_t>(sf));
            Image dst(df, sz.w, sz.h, dpad, 99);
            Image want = dst;
            for (int y = 0; y < sz.h; ++y) {
              for (int x = 0; x < sz.w; ++x) write_px(df, read_px(sf, src.px(x, y)), want.px(x, y));
            }
            const int64_t copies = counters().copies;
            ASSERT_TRUE(convert_pixels(src.cview(), dst.view()).ok());
            EXPECT_EQ(counters().copies, copies + 1);
            ASSERT_EQ(dst.bytes, want.bytes);  // pixels and untouched padding
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST_F(PixelOpsTest, ConvertRefusesColourToGrayAndNonPackedFormats) {
  for (const auto& [table_name, table] : kernel_tables()) {
    internal::ScopedKernelTableForTesting use(*table);
    for (PixelFormat sf : kConvertible) {
      if (is_gray(sf)) continue;
      SCOPED_TRACE(table_name + " " + std::string(name(sf)));
      Image src(sf, 3, 2, 0, 1), dst(PixelFormat::GRAY8, 3, 2, 0, 2);
      const auto before = dst.bytes;
      auto r = convert_pixels(src.cview(), dst.view());
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
      EXPECT_THAT(r.error().message(), HasSubstr("convert"));
      EXPECT_THAT(r.error().message(), HasSubstr("luma"));
      EXPECT_EQ(dst.bytes, before);
    }
  }
  // Formats outside packed RGB + GRAY8, on either side.
  for (PixelFormat other : {PixelFormat::RG8, PixelFormat::YUV420P, PixelFormat::NV12}) {
    SCOPED_TRACE(std::string(name(other)));
    auto pic = Picture::allocate(other, 4, 4).value();
    auto rgba = Picture::allocate(PixelFormat::RGBA, 4, 4).value();
    auto r1 = convert_pixels(pic.read().value(), rgba.write().value());
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().code(), ErrorCode::Unsupported);
    auto r2 = convert_pixels(rgba.read().value(), pic.write().value());
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.error().code(), ErrorCode::Unsupported);
  }
  // Sizes must match.
  Image a(PixelFormat::RGB, 3, 2, 0, 1), b(PixelFormat::RGBA, 2, 3, 0, 2);
  auto r = convert_pixels(a.cview(), b.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
}

TEST_F(PixelOpsTest, MergeAlphaEveryPairMatchesReference) {
  for (const auto& [table_name, table] : kernel_tables()) {
    internal::ScopedKernelTableForTesting use(*table);
    for (PixelFormat sf : kConvertible) {
      if (is_gray(sf)) continue;
      for (PixelFormat df : kWithAlpha) {
        for (Size sz : kSizes) {
          for (size_t pad : {size_t{0}, size_t{5}}) {
            SCOPED_TRACE(table_name + " " + std::string(name(sf)) + "+A->" +
                         std::string(name(df)) + " " + std::to_string(sz.w) + "x" +
                         std::to_string(sz.h) + " pad " + std::to_string(pad));
            Image rgb(sf, sz.w, sz.h, pad, 7u + static_cast<uint32_t>(sf));
            Image alpha(PixelFormat::GRAY8, sz.w, sz.h, pad + 3, 11);
            Image dst(df, sz.w, sz.h, pad + 1, 13);
            Image want = dst;
            for (int y = 0; y < sz.h; ++y) {
              for (int x = 0; x < sz.w; ++x) {
                Px px = read_px(sf, rgb.px(x, y));
                px.a = *alpha.px(x, y);
                px.has_a = true;
                write_px(df, px, want.px(x, y));
              }
            }
            const int64_t copies = counters().copies;
            ASSERT_TRUE(merge_alpha(rgb.cview(), alpha.cview(), dst.view()).ok());
            EXPECT_EQ(counters().copies, copies + 1);
            ASSERT_EQ(dst.bytes, want.bytes);
          }
        }
      }
    }
  }
}

TEST_F(PixelOpsTest, MergeAlphaRefusesWrongFormats) {
  Image rgb(PixelFormat::RGB, 4, 4, 0, 1), alpha(PixelFormat::GRAY8, 4, 4, 0, 2);
  Image rgbx(PixelFormat::RGBX, 4, 4, 0, 3), rgba(PixelFormat::RGBA, 4, 4, 0, 4);
  Image gray(PixelFormat::GRAY8, 4, 4, 0, 5), small(PixelFormat::GRAY8, 3, 4, 0, 6);
  // Destination without an alpha channel.
  auto r = merge_alpha(rgb.cview(), alpha.cview(), rgbx.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
  EXPECT_THAT(r.error().message(), HasSubstr("merge alpha"));
  // Alpha plane that is not GRAY8.
  r = merge_alpha(rgb.cview(), rgbx.cview(), rgba.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
  // Gray is not packed RGB.
  r = merge_alpha(gray.cview(), alpha.cview(), rgba.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
  // Alpha of another size.
  r = merge_alpha(rgb.cview(), small.cview(), rgba.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
}

TEST_F(PixelOpsTest, XorIntoMatchesReferenceAndIsNotCountedAsACopy) {
  for (const auto& [table_name, table] : kernel_tables()) {
    internal::ScopedKernelTableForTesting use(*table);
    for (PixelFormat f : {PixelFormat::RGB, PixelFormat::BGRX, PixelFormat::GRAY8}) {
      for (Size sz : kSizes) {
        for (auto [spad, dpad] : {std::pair<size_t, size_t>{0, 0}, {9, 0}, {0, 31}, {3, 64}}) {
          SCOPED_TRACE(table_name + " " + std::string(name(f)) + " " + std::to_string(sz.w) +
                       "x" + std::to_string(sz.h) + " pads " + std::to_string(spad) + "/" +
                       std::to_string(dpad));
          Image src(f, sz.w, sz.h, spad, 21), dst(f, sz.w, sz.h, dpad, 22);
          Image want = dst;
          for (int y = 0; y < sz.h; ++y) {
            for (size_t x = 0; x < dst.row; ++x) {
              want.bytes[y * want.stride + x] ^= src.bytes[y * src.stride + x];
            }
          }
          const int64_t copies = counters().copies;
          ASSERT_TRUE(xor_into(dst.view(), src.cview()).ok());
          EXPECT_EQ(counters().copies, copies);
          ASSERT_EQ(dst.bytes, want.bytes);
        }
      }
    }
  }
}

TEST_F(PixelOpsTest, XorIntoPlanarPicturesOfOddSize) {
  for (const auto& [table_name, table] : kernel_tables()) {
    internal::ScopedKernelTableForTesting use(*table);
    for (PixelFormat f : {PixelFormat::YUV420P, PixelFormat::NV12}) {
      SCOPED_TRACE(table_name + " " + std::string(name(f)));
      auto a = Picture::allocate(f, 17, 13).value();
      auto b = Picture::allocate(f, 17, 13).value();
      std::mt19937 rng(5);
      std::vector<std::vector<uint8_t>> expect;
      {
        auto va = a.write().value();
        auto vb = b.write().value();
        for (int p = 0; p < va.plane_count; ++p) {
          std::vector<uint8_t> e;
          for (int y = 0; y < va.plane(p).height; ++y) {
            auto ra = va.plane(p).row(y);
            auto rb = vb.plane(p).row(y);
            for (size_t x = 0; x < ra.size(); ++x) {
              ra[x] = static_cast<uint8_t>(rng());
              rb[x] = static_cast<uint8_t>(rng());
              e.push_back(ra[x] ^ rb[x]);
            }
          }
          expect.push_back(std::move(e));
        }
      }
      ASSERT_TRUE(xor_into(a.write().value(), b.read().value()).ok());
      auto va = a.read().value();
      for (int p = 0; p < va.plane_count; ++p) {
        std::vector<uint8_t> got;
        for (int y = 0; y < va.plane(p).height; ++y) {
          auto r = va.plane(p).row(y);
          got.insert(got.end(), r.begin(), r.end());
        }
        EXPECT_EQ(got, expect[static_cast<size_t>(p)]) << "plane " << p;
      }
    }
  }
}

TEST_F(PixelOpsTest, XorIntoRefusesDifferentFormats) {
  Image a(PixelFormat::RGBX, 4, 4, 0, 1), b(PixelFormat::BGRX, 4, 4, 0, 2);
  auto r = xor_into(a.view(), b.cview());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
  EXPECT_THAT(r.error().message(), HasSubstr("xor"));
}

TEST_F(PixelOpsTest, XorPicturesWritesInPlaceWhenWritableElseIntoACopy) {
  auto target = Picture::allocate(PixelFormat::GRAY8, 8, 2).value();
  {
    auto v = target.write().value();
    for (int y = 0; y < 2; ++y) for (auto& b : v.plane(0).row(y)) b = 0x0F;
  }
  Image src(PixelFormat::GRAY8, 8, 2, 0, 3);
  const uint64_t id = target.content_id().storage;
  const int64_t copies = counters().copies;
  auto out = xor_pictures(std::move(target), src.cview()).value();
  EXPECT_EQ(out.content_id().storage, id);  // in place
  EXPECT_EQ(counters().copies, copies);
  EXPECT_EQ(out.read()->plane(0).row(1)[3], src.bytes[8 + 3] ^ 0x0F);

  Picture keep = out;  // shared now: the xor goes into a copy, `keep` stays as it was
  auto out2 = xor_pictures(out, src.cview()).value();
  EXPECT_NE(out2.content_id().storage, id);
  EXPECT_EQ(counters().copies, copies + 1);
  EXPECT_EQ(out2.read()->plane(0).row(1)[3], 0x0F);
  EXPECT_EQ(keep.read()->plane(0).row(1)[3], src.bytes[8 + 3] ^ 0x0F);
}

TEST_F(PixelOpsTest, CopyPixelsCopiesRowsOfPaddedViewsAndCounts) {
  Image src(PixelFormat::RGB, 17, 13, 5, 1), dst(PixelFormat::RGB, 17, 13, 11, 2);
  Image want = dst;
  for (int y = 0; y < 13; ++y) {
    std::copy_n(src.px(0, y), src.row, want.px(0, y));
  }
  const auto before = counters();
  ASSERT_TRUE(copy_pixels(src.cview(), dst.view()).ok());
  EXPECT_EQ(dst.bytes, want.bytes);
  EXPECT_EQ(counters().copies, before.copies + 1);
  EXPECT_EQ(counters().copy_bytes, before.copy_bytes + 17 * 13 * 3);
  Image other(PixelFormat::BGR, 17, 13, 0, 3);
  auto r = copy_pixels(src.cview(), other.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
}

TEST_F(PixelOpsTest, ScaleToTheSameSizeIsACopyAndAConstantStaysConstant) {
  Image src(PixelFormat::BGRX, 17, 13, 4, 1), dst(PixelFormat::BGRX, 17, 13, 0, 2);
  ASSERT_TRUE(scale_pixels(src.cview(), dst.view()).ok());
  for (int y = 0; y < 13; ++y) {
    EXPECT_TRUE(std::equal(src.px(0, y), src.px(0, y) + src.row, dst.px(0, y))) << "row " << y;
  }
  Image flat(PixelFormat::RGB, 31, 7, 0, 1);
  std::fill(flat.bytes.begin(), flat.bytes.end(), 77);
  Image small(PixelFormat::RGB, 10, 3, 0, 2), big(PixelFormat::RGB, 63, 15, 0, 3);
  ASSERT_TRUE(scale_pixels(flat.cview(), small.view()).ok());
  ASSERT_TRUE(scale_pixels(flat.cview(), big.view()).ok());
  for (uint8_t b : small.bytes) EXPECT_EQ(b, 77);
  for (uint8_t b : big.bytes) EXPECT_EQ(b, 77);
}

}  // namespace
}  // namespace pixpath
