#include "pixpath/core/picture.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "core/testing/live_storage_check.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/core/storage_pool.h"

namespace pixpath {
namespace {

using ::testing::HasSubstr;

class PictureTest : public testing::LiveStorageCheck {};

// Fills every plane with a value derived from (plane, x byte, y) of the *full* picture.
uint8_t pattern(int plane, size_t xbyte, int y) {
  return static_cast<uint8_t>(plane * 101 + xbyte * 7 + static_cast<size_t>(y) * 13);
}
void fill(Picture& p) {
  auto v = p.write().value();
  for (int i = 0; i < v.plane_count; ++i) {
    for (int y = 0; y < v.plane(i).height; ++y) {
      auto row = v.plane(i).row(y);
      for (size_t x = 0; x < row.size(); ++x) row[x] = pattern(i, x, y);
    }
  }
}

Picture wrap_bytes(PixelFormat f, int w, int h, size_t stride, StorageFlags flags,
                   std::vector<uint8_t>& bytes) {
  auto s = PictureStorage::wrap(MemoryLocation::host(), bytes.data(), bytes.size(), flags, [] {})
               .value();
  return Picture::wrap(f, w, h, std::move(s), 0, stride).value();
}

constexpr PixelFormat kAllFormats[] = {
    PixelFormat::RGB,  PixelFormat::BGR,  PixelFormat::RGBX,   PixelFormat::BGRX,
    PixelFormat::XRGB, PixelFormat::XBGR, PixelFormat::RGBA,   PixelFormat::BGRA,
    PixelFormat::ARGB, PixelFormat::ABGR, PixelFormat::GRAY8,  PixelFormat::RG8,
    PixelFormat::YUV420P, PixelFormat::YUV422P, PixelFormat::YUV444P, PixelFormat::NV12};

TEST_F(PictureTest, AllocateEveryFormatIncludingOddSizes) {
  for (PixelFormat f : kAllFormats) {
    for (auto [w, h] : {std::pair{1, 1}, std::pair{5, 3}, std::pair{64, 32}, std::pair{17, 13}}) {
      SCOPED_TRACE(std::string(name(f)) + " " + std::to_string(w) + "x" + std::to_string(h));
      auto r = Picture::allocate(f, w, h);
      ASSERT_TRUE(r.ok()) << r.error().message();
      Picture p = std::move(r).value();
      EXPECT_EQ(p.plane_count(), info(f).planes);
      EXPECT_TRUE(p.writable());
      const auto& storage = p.plane(0).storage;
      for (int i = 0; i < p.plane_count(); ++i) {
        const PlaneRef& pr = p.plane(i);
        EXPECT_TRUE(pr.storage == storage) << "one storage for all planes";
        EXPECT_EQ(pr.offset % 64, 0u);
        EXPECT_EQ(pr.stride % 64, 0u);
        EXPECT_GE(pr.stride, p.row_bytes(i));
        const int ph = plane_height(f, i, h);
        EXPECT_LE(pr.offset + pr.stride * static_cast<size_t>(ph - 1) + p.row_bytes(i),
                  storage->size());
      }
      fill(p);  // every byte of every plane is writable (ASan checks the bounds)
    }
  }
}

TEST_F(PictureTest, OddSizedChromaRoundsUp) {
  auto nv12 = Picture::allocate(PixelFormat::NV12, 5, 3).value();
  auto v = nv12.read().value();
  EXPECT_EQ(v.plane(1).width, 3);
  EXPECT_EQ(v.plane(1).height, 2);
  EXPECT_EQ(nv12.row_bytes(1), 6u);  // 3 interleaved UV pairs
  auto yuv = Picture::allocate(PixelFormat::YUV420P, 5, 3).value();
  EXPECT_EQ(yuv.read()->plane(2).width, 3);
  EXPECT_EQ(yuv.read()->plane(2).height, 2);
  auto y422 = Picture::allocate(PixelFormat::YUV422P, 5, 3).value();
  EXPECT_EQ(y422.read()->plane(1).width, 3);
  EXPECT_EQ(y422.read()->plane(1).height, 3);
  auto y444 = Picture::allocate(PixelFormat::YUV444P, 5, 3).value();
  EXPECT_EQ(y444.read()->plane(1).width, 5);
}

// The classic slice-outlives-parent bug: a crop must keep the storage alive (run under ASan).
TEST_F(PictureTest, CropOutlivesItsDroppedParent) {
  Picture crop;
  {
    auto parent = Picture::allocate(PixelFormat::BGRX, 33, 17).value();
    fill(parent);
    crop = parent.crop(4, 3, 9, 5).value();
  }
  auto v = crop.read().value();
  EXPECT_EQ(v.width, 9);
  EXPECT_EQ(v.height, 5);
  for (int y = 0; y < 5; ++y) {
    for (size_t x = 0; x < 9 * 4; ++x) {
      ASSERT_EQ(v.plane(0).row(y)[x], pattern(0, 4 * 4 + x, y + 3));
    }
  }
  EXPECT_TRUE(crop.writable());  // the parent handle is gone: nobody shares it
}

TEST_F(PictureTest, CropOfPlanarFormatsOffsetsEveryPlane) {
  for (PixelFormat f : {PixelFormat::YUV420P, PixelFormat::YUV422P, PixelFormat::YUV444P,
                        PixelFormat::NV12}) {
    SCOPED_TRACE(std::string(name(f)));
    auto p = Picture::allocate(f, 17, 13).value();
    fill(p);
    // (2, 2) respects every sub-sampling; 15 x 11 reaches the right and bottom edges.
    auto c = p.crop(2, 2, 15, 11).value();
    auto v = c.read().value();
    const auto& fi = info(f);
    for (int i = 0; i < v.plane_count; ++i) {
      const int sx = i ? fi.chroma_shift_x : 0, sy = i ? fi.chroma_shift_y : 0;
      EXPECT_EQ(v.plane(i).width, plane_width(f, i, 17) - (2 >> sx));
      EXPECT_EQ(v.plane(i).height, plane_height(f, i, 13) - (2 >> sy));
      for (int y = 0; y < v.plane(i).height; ++y) {
        auto row = v.plane(i).row(y);
        for (size_t x = 0; x < row.size(); ++x) {
          ASSERT_EQ(row[x], pattern(i, static_cast<size_t>(2 >> sx) * fi.bytes_per_pixel[i] + x,
                                    y + (2 >> sy)))
              << "plane " << i;
        }
      }
    }
  }
}

TEST_F(PictureTest, CropRulesForChromaAlignmentAndBounds) {
  auto yuv = Picture::allocate(PixelFormat::YUV420P, 17, 13).value();
  auto nv12 = Picture::allocate(PixelFormat::NV12, 17, 13).value();
  auto y422 = Picture::allocate(PixelFormat::YUV422P, 17, 13).value();
  for (const Picture* p : {&yuv, &nv12}) {
    SCOPED_TRACE(std::string(name(p->format())));
    EXPECT_EQ(p->crop(1, 0, 4, 4).error().code(), ErrorCode::InvalidArgument);  // odd x
    EXPECT_EQ(p->crop(0, 1, 4, 4).error().code(), ErrorCode::InvalidArgument);  // odd y
    EXPECT_EQ(p->crop(0, 0, 3, 4).error().code(), ErrorCode::InvalidArgument);  // odd w inside
    EXPECT_EQ(p->crop(0, 0, 4, 3).error().code(), ErrorCode::InvalidArgument);  // odd h inside
    EXPECT_THAT(p->crop(1, 0, 4, 4).error().message(), HasSubstr("chroma"));
    EXPECT_TRUE(p->crop(2, 2, 15, 11).ok());  // odd w, h reaching the edges
    EXPECT_TRUE(p->crop(16, 12, 1, 1).ok());  // the last (odd) pixel
  }
  EXPECT_TRUE(y422.crop(0, 1, 4, 3).ok());  // 4:2:2 has full vertical chroma
  EXPECT_EQ(y422.crop(1, 0, 4, 4).error().code(), ErrorCode::InvalidArgument);
  auto rgb = Picture::allocate(PixelFormat::RGB, 17, 13).value();
  EXPECT_TRUE(rgb.crop(1, 1, 3, 3).ok());  // packed: anything inside
  for (auto [x, y, w, h] : {std::tuple{0, 0, 18, 1}, std::tuple{0, 0, 1, 14},
                            std::tuple{-1, 0, 1, 1}, std::tuple{0, 0, 0, 1},
                            std::tuple{17, 0, 1, 1}, std::tuple{INT_MAX, 0, INT_MAX, 1},
                            std::tuple{1, 0, INT_MAX, 1}, std::tuple{0, INT_MAX, 1, 2}}) {
    auto r = rgb.crop(x, y, w, h);
    ASSERT_FALSE(r.ok()) << x << "," << y << " " << w << "x" << h;
    EXPECT_EQ(r.error().code(), ErrorCode::OutOfRange);
  }
}

TEST_F(PictureTest, PlanePictureSharesTheStorage) {
  auto nv12 = Picture::allocate(PixelFormat::NV12, 5, 3).value();
  fill(nv12);
  auto uv = nv12.plane_picture(1).value();
  EXPECT_EQ(uv.format(), PixelFormat::RG8);
  EXPECT_EQ(uv.width(), 3);
  EXPECT_EQ(uv.height(), 2);
  EXPECT_EQ(uv.read()->plane(0).row(1)[5], pattern(1, 5, 1));
  EXPECT_TRUE(nv12.shared());
  EXPECT_FALSE(uv.writable());

  auto yuv = Picture::allocate(PixelFormat::YUV420P, 5, 3).value();
  fill(yuv);
  auto v = yuv.plane_picture(2).value();
  EXPECT_EQ(v.format(), PixelFormat::GRAY8);
  EXPECT_EQ(v.width(), 3);
  EXPECT_EQ(v.read()->plane(0).row(1)[2], pattern(2, 2, 1));
  EXPECT_EQ(yuv.plane_picture(3).error().code(), ErrorCode::OutOfRange);
  EXPECT_EQ(yuv.plane_picture(-1).error().code(), ErrorCode::OutOfRange);
  auto luma = yuv.plane_picture(0).value();
  EXPECT_EQ(luma.format(), PixelFormat::GRAY8);
  EXPECT_EQ(luma.width(), 5);
}

TEST_F(PictureTest, MakeWritableOnSharedStorageCopiesAndLeavesTheOtherHolderUntouched) {
  auto a = Picture::allocate(PixelFormat::RGBA, 7, 5).value();
  fill(a);
  Picture b = a;
  EXPECT_TRUE(a.shared());
  const auto before = counters();
  auto w = std::move(b).make_writable().value();
  EXPECT_EQ(counters().copies, before.copies + 1);
  EXPECT_EQ(counters().copy_bytes, before.copy_bytes + 7 * 5 * 4);
  EXPECT_NE(w.content_id().storage, a.content_id().storage);
  EXPECT_TRUE(w.writable());
  // Regression: make_writable() consumes `b`; it used to keep its reference after copying,
  // so `a` stayed "shared" with a handle its owner had given up.
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(a.writable());
  {
    auto v = w.write().value();
    for (int y = 0; y < 5; ++y) for (auto& byte : v.plane(0).row(y)) byte = 0;
  }
  auto av = a.read().value();
  for (int y = 0; y < 5; ++y) {
    for (size_t x = 0; x < 28; ++x) ASSERT_EQ(av.plane(0).row(y)[x], pattern(0, x, y));
  }
}

TEST_F(PictureTest, MakeWritableOnUnsharedWritableStorageCopiesNothing) {
  auto a = Picture::allocate(PixelFormat::YUV420P, 17, 13).value();
  const auto id = a.content_id().storage;
  const auto before = counters();
  auto w = std::move(a).make_writable().value();
  EXPECT_EQ(counters().copies, before.copies);
  EXPECT_EQ(counters().copy_bytes, before.copy_bytes);
  EXPECT_EQ(counters().storages_created, before.storages_created);
  EXPECT_EQ(w.content_id().storage, id);
}

TEST_F(PictureTest, MakeWritableOnReadOnlyStorageCopies) {
  std::vector<uint8_t> bytes(64 * 3, 9);
  auto ro = wrap_bytes(PixelFormat::GRAY8, 10, 3, 64, {.read_only = true}, bytes);
  EXPECT_FALSE(ro.writable());
  const auto before = counters();
  auto w = std::move(ro).make_writable().value();
  EXPECT_EQ(counters().copies, before.copies + 1);
  EXPECT_TRUE(w.writable());
  EXPECT_EQ(w.read()->plane(0).row(2)[9], 9);
}

TEST_F(PictureTest, WriteViewOnReadOnlyStorageIsRefusedWithAClearError) {
  std::vector<uint8_t> bytes(16 * 4 * 2);
  auto ro = wrap_bytes(PixelFormat::RGBA, 4, 2, 64, {.read_only = true}, bytes);
  const auto gen = ro.content_id();
  auto w = ro.write();
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), ErrorCode::ReadOnly);
  EXPECT_TRUE(w.error().fatal());
  EXPECT_THAT(w.error().message(), HasSubstr("picture write"));  // the operation
  EXPECT_THAT(w.error().message(), HasSubstr("read-only"));      // the reason
  EXPECT_THAT(w.error().message(), HasSubstr("RGBA 4x2"));
  EXPECT_EQ(ro.content_id(), gen);  // a refused write changes nothing
  EXPECT_TRUE(ro.read().ok());      // reading is fine
}

TEST_F(PictureTest, WriteViewOnSharedStorageIsRefusedAndPointsAtMakeWritable) {
  auto a = Picture::allocate(PixelFormat::GRAY8, 4, 4).value();
  auto crop = a.crop(0, 0, 2, 2).value();
  auto w = a.write();
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), ErrorCode::ReadOnly);
  EXPECT_THAT(w.error().message(), HasSubstr("shares its storage"));
  EXPECT_THAT(w.error().message(), HasSubstr("make_writable"));
  EXPECT_FALSE(crop.write().ok());
  crop = Picture();
  EXPECT_TRUE(a.write().ok());
}

TEST_F(PictureTest, ExternallyOwnedStorageIsNeverWritable) {
  std::vector<uint8_t> bytes(64);
  auto p = wrap_bytes(PixelFormat::GRAY8, 8, 1, 8, {.externally_owned = true}, bytes);
  EXPECT_TRUE(p.shared());
  EXPECT_EQ(p.write().error().code(), ErrorCode::ReadOnly);
}

TEST_F(PictureTest, GenerationChangesOnEveryWriteViewAndNotOnReads) {
  auto p = Picture::allocate(PixelFormat::NV12, 6, 4).value();
  std::vector<Picture::ContentId> seen{p.content_id()};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(p.write().ok());
    const auto id = p.content_id();
    for (const auto& s : seen) EXPECT_NE(id, s);
    seen.push_back(id);
    ASSERT_TRUE(p.read().ok());
    EXPECT_EQ(p.content_id(), id);
  }
  // One bump per write even though both planes live in one storage.
  EXPECT_EQ(seen.back().generation, seen.front().generation + 3);
}

TEST_F(PictureTest, RestrideIsMetadataOnlyWhenTheStrideMatchesElseACountedCopy) {
  auto p = Picture::allocate(PixelFormat::RGB, 17, 13).value();  // stride 64
  fill(p);
  const auto before = counters();
  auto same = p.restride(p.plane(0).stride).value();
  EXPECT_EQ(counters().copies, before.copies);
  EXPECT_TRUE(same.plane(0).storage == p.plane(0).storage);

  auto tight = p.restride(51).value();
  EXPECT_EQ(counters().copies, before.copies + 1);
  EXPECT_EQ(tight.plane(0).stride, 51u);
  EXPECT_FALSE(tight.plane(0).storage == p.plane(0).storage);
  auto tv = tight.read().value();
  auto pv = p.read().value();
  for (int y = 0; y < 13; ++y) {
    ASSERT_TRUE(std::equal(pv.plane(0).row(y).begin(), pv.plane(0).row(y).end(),
                           tv.plane(0).row(y).begin()));
  }
  auto bad = p.restride(50);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(bad.error().message(), HasSubstr("less than a row of 51 bytes"));
  auto planar = Picture::allocate(PixelFormat::NV12, 4, 4).value();
  EXPECT_EQ(planar.restride(128).error().code(), ErrorCode::Unsupported);

  auto row = Picture::allocate(PixelFormat::GRAY8, 8, 1).value();
  const auto before_row = counters();
  auto r1 = row.restride(4096).value();  // one row: metadata only
  EXPECT_EQ(counters().copies, before_row.copies);
  EXPECT_TRUE(r1.read().ok());
}

TEST_F(PictureTest, DimensionLimitsDefaultConfigurableAndOverflowSafe) {
  const PictureLimits saved = PictureLimits::defaults();
  EXPECT_EQ(saved.max_width, 16384);
  EXPECT_EQ(saved.max_height, 16384);
  for (auto [w, h] : {std::pair{16385, 1}, std::pair{1, 16385}, std::pair{INT_MAX, INT_MAX}}) {
    auto r = Picture::allocate(PixelFormat::GRAY8, w, h);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
    EXPECT_THAT(r.error().message(), HasSubstr("16384x16384"));
  }
  EXPECT_TRUE(Picture::allocate(PixelFormat::GRAY8, 16384, 1).ok());
  for (auto [w, h] : {std::pair{0, 1}, std::pair{1, 0}, std::pair{-5, 3}}) {
    EXPECT_EQ(Picture::allocate(PixelFormat::GRAY8, w, h).error().code(),
              ErrorCode::InvalidArgument);
  }
  // Per call.
  AllocateOptions small;
  small.limits.max_width = 100;
  small.limits.max_height = 50;
  EXPECT_TRUE(Picture::allocate(PixelFormat::RGBA, 100, 50, small).ok());
  EXPECT_EQ(Picture::allocate(PixelFormat::RGBA, 101, 50, small).error().code(),
            ErrorCode::LimitExceeded);
  small.limits.max_bytes = 1000;
  EXPECT_EQ(Picture::allocate(PixelFormat::RGBA, 100, 50, small).error().code(),
            ErrorCode::LimitExceeded);
  // Process-wide.
  PictureLimits tiny = saved;
  tiny.max_width = 32;
  PictureLimits::set_defaults(tiny);
  EXPECT_EQ(Picture::allocate(PixelFormat::GRAY8, 33, 1).error().code(), ErrorCode::LimitExceeded);
  PictureLimits::set_defaults(saved);
  EXPECT_TRUE(Picture::allocate(PixelFormat::GRAY8, 33, 1).ok());
  // Larger than the default when configured: the limit is a setting, not a constant.
  PictureLimits big = saved;
  big.max_width = 20000;
  EXPECT_TRUE(Picture::allocate(PixelFormat::GRAY8, 20000, 1, {.limits = big}).ok());
  // Overflowing arithmetic is refused, never wrapped.
  AllocateOptions huge_stride;
  huge_stride.stride = SIZE_MAX - 10;
  EXPECT_EQ(Picture::allocate(PixelFormat::GRAY8, 4, 2, huge_stride).error().code(),
            ErrorCode::LimitExceeded);
  EXPECT_EQ(Picture::allocate(PixelFormat::GRAY8, 4, 1, huge_stride).error().code(),
            ErrorCode::LimitExceeded);
  AllocateOptions odd_align;
  odd_align.row_alignment = 48;
  EXPECT_EQ(Picture::allocate(PixelFormat::GRAY8, 4, 1, odd_align).error().code(),
            ErrorCode::InvalidArgument);
}

TEST_F(PictureTest, StrideSmallerThanARowIsRefusedEverywhere) {
  AllocateOptions opts;
  opts.stride = 10 * 3 - 1;
  auto a = Picture::allocate(PixelFormat::RGB, 10, 2, opts);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(a.error().message(), HasSubstr("less than a row of 30 bytes"));
  opts.stride = 30;
  EXPECT_TRUE(Picture::allocate(PixelFormat::RGB, 10, 2, opts).ok());

  auto s = PictureStorage::allocate_host(1024).value();
  auto w = Picture::wrap(PixelFormat::RGB, 10, 2, s, 0, 29);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(w.error().message(), HasSubstr("stride 29"));

  std::vector<uint8_t> raw(100);
  EXPECT_EQ(make_view(PixelFormat::RGB, 10, 2, raw.data(), 29).error().code(),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(make_view(PixelFormat::RGB, 10, 2, raw.data(), SIZE_MAX).error().code(),
            ErrorCode::LimitExceeded);
}

TEST_F(PictureTest, WrapChecksThatEveryPlaneFitsItsStorage) {
  auto s = PictureStorage::allocate_host(100).value();
  EXPECT_TRUE(Picture::wrap(PixelFormat::GRAY8, 10, 10, s, 0, 10).ok());
  EXPECT_EQ(Picture::wrap(PixelFormat::GRAY8, 10, 10, s, 1, 10).error().code(),
            ErrorCode::OutOfRange);
  EXPECT_EQ(Picture::wrap(PixelFormat::GRAY8, 10, 10, s, SIZE_MAX, 10).error().code(),
            ErrorCode::OutOfRange);
  EXPECT_EQ(Picture::wrap(PixelFormat::GRAY8, 10, 10, s, 0, SIZE_MAX / 2).error().code(),
            ErrorCode::OutOfRange);
  EXPECT_TRUE(Picture::wrap(PixelFormat::GRAY8, 10, 9, s, 0, 11).ok());  // last row is short
  // Planar: one PlaneRef per plane, each inside.
  EXPECT_EQ(Picture::wrap(PixelFormat::NV12, 4, 4, s, 0, 4).error().code(),
            ErrorCode::InvalidArgument);
  PlaneRef planes[2] = {{s, 0, 4}, {s, 16, 4}};
  EXPECT_TRUE(Picture::wrap(PixelFormat::NV12, 4, 4, planes).ok());
  planes[1].offset = 93;  // 2 rows of 4 need bytes 93..100
  EXPECT_EQ(Picture::wrap(PixelFormat::NV12, 4, 4, planes).error().code(),
            ErrorCode::OutOfRange);
  planes[1] = {StorageRef(), 0, 4};
  EXPECT_EQ(Picture::wrap(PixelFormat::NV12, 4, 4, planes).error().code(),
            ErrorCode::InvalidArgument);
}

TEST_F(PictureTest, HostAccessorsRefuseDeviceMemory) {
  MemoryLocation dev;
  dev.kind = MemoryKind::CudaDevice;
  dev.device = 0;
  auto s = PictureStorage::wrap(dev, reinterpret_cast<void*>(0x10000), 4096, {}, [] {}).value();
  auto p = Picture::wrap(PixelFormat::BGRX, 16, 16, s, 0, 64).value();
  s.reset();
  EXPECT_EQ(p.location().kind, MemoryKind::CudaDevice);
  auto r = p.read();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::WrongMemoryKind);
  EXPECT_THAT(r.error().message(), HasSubstr("cuda device"));
  EXPECT_EQ(p.write().error().code(), ErrorCode::WrongMemoryKind);
  Picture shared = p;
  auto w = std::move(shared).make_writable();  // no CUDA copier registered in core tests
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code(), ErrorCode::Unsupported);
}

TEST_F(PictureTest, EmptyPictureRefusesEverything) {
  Picture p;
  EXPECT_TRUE(p.empty());
  EXPECT_FALSE(p.writable());
  EXPECT_FALSE(p.read().ok());
  EXPECT_FALSE(p.write().ok());
  EXPECT_FALSE(p.crop(0, 0, 1, 1).ok());
  EXPECT_FALSE(p.plane_picture(0).ok());
  EXPECT_FALSE(p.restride(4).ok());
  EXPECT_FALSE(std::move(p).make_writable().ok());
  EXPECT_EQ(Picture().content_id(), Picture::ContentId{});
}

TEST_F(PictureTest, AllocateFromAPoolReusesItsBlocks) {
  auto pool = StoragePool::create({.name = "frames", .block_bytes = 64 * 16}).value();
  uint64_t first_id;
  {
    auto p = Picture::allocate(PixelFormat::RGBA, 16, 16, {.pool = pool.get()}).value();
    first_id = p.content_id().storage;
    EXPECT_EQ(pool->stats().outstanding, 1);
  }
  auto q = Picture::allocate(PixelFormat::RGBA, 16, 16, {.pool = pool.get()}).value();
  EXPECT_NE(q.content_id().storage, first_id);  // a new storage over the recycled block
  EXPECT_EQ(pool->stats().reused, 1);
  EXPECT_EQ(pool->stats().allocated, 1);
  auto too_big = Picture::allocate(PixelFormat::RGBA, 17, 16, {.pool = pool.get()});
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.error().message(), HasSubstr("picture allocate"));
}

}  // namespace
}  // namespace pixpath
