#include "pixpath/paint/delta_buckets.h"

#include <gtest/gtest.h>

#include <cstring>

#include "pixpath/core/counters.h"

namespace pixpath::paint {
namespace {

Picture filled(PixelFormat f, int w, int h, uint8_t value) {
  auto pic = Picture::allocate(f, w, h);
  auto v = pic->write();
  for (int y = 0; y < h; ++y) std::memset(v->plane(0).row(y).data(), value, v->plane(0).row_bytes());
  return *pic;
}

uint8_t first_byte(const Picture& p) { return p.read()->plane(0).row(0)[0]; }

DrawOptions opts(std::optional<int64_t> delta, std::optional<int64_t> store, int bucket = 0,
                 std::string rgb_format = "BGRX") {
  DrawOptions o;
  o.delta = delta;
  o.store = store;
  o.bucket = bucket;
  o.rgb_format = std::move(rgb_format);
  return o;
}

TEST(DeltaBuckets, NoOptionsPassesThrough) {
  DeltaBuckets b;
  auto pic = filled(PixelFormat::BGRX, 2, 2, 9);
  auto r = b.apply(pic, DrawOptions{}, "rgb32");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content_id(), pic.content_id());
}

TEST(DeltaBuckets, StoreSharesAndDeltaXorsInPlace) {
  DeltaBuckets b;
  auto before = counters();
  auto stored = b.apply(filled(PixelFormat::BGRX, 4, 2, 0x0F), opts({}, 3, 1), "rgb32");
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(b.bucket(1));
  EXPECT_EQ(b.bucket(1)->sequence, 3);
  EXPECT_EQ(b.bucket(1)->picture.plane(0).storage, stored->plane(0).storage);  // shared
  Picture decoded = filled(PixelFormat::BGRX, 4, 2, 0xF0);
  auto storage = decoded.plane(0).storage.get();
  auto r = b.apply(std::move(decoded), opts(3, 5, 1), "rgb32");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(first_byte(*r), 0xFF);
  EXPECT_EQ(r->plane(0).storage.get(), storage);  // XORed in place
  EXPECT_EQ(b.bucket(1)->sequence, 5);
  EXPECT_EQ(first_byte(b.bucket(1)->picture), 0xFF);
  EXPECT_EQ(counters().copies, before.copies);  // neither store nor delta copied
  // a read-only decoded picture (e.g. wrapping packet bytes) is copied once, never written
  auto ro = filled(PixelFormat::BGRX, 4, 2, 0x01);
  Picture keep = ro;  // shared: not writable
  auto r2 = b.apply(ro, opts(5, {}, 1), "rgb32");
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(first_byte(*r2), 0xFE);
  EXPECT_EQ(first_byte(keep), 0x01);
  EXPECT_EQ(counters().copies, before.copies + 1);
}

TEST(DeltaBuckets, EveryMismatchIsAnErrorAndLeavesBucketsAlone) {
  DeltaBuckets b;
  ASSERT_TRUE(b.apply(filled(PixelFormat::BGRX, 4, 2, 1), opts({}, 7, 0), "rgb32").ok());
  auto fails = [&](Picture p, DrawOptions o, const char* what) {
    auto r = b.apply(std::move(p), o, "rgb32");
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.error().stage(), "delta") << what;
    EXPECT_EQ(b.bucket(0)->sequence, 7) << what;
    EXPECT_EQ(first_byte(b.bucket(0)->picture), 1) << what;
  };
  fails(filled(PixelFormat::BGRX, 4, 2, 2), opts(7, 8, 5), "bucket out of range");
  fails(filled(PixelFormat::BGRX, 4, 2, 2), opts(7, 8, -1), "negative bucket");
  fails(filled(PixelFormat::BGRX, 4, 2, 2), opts(7, 8, 2), "empty bucket");
  fails(filled(PixelFormat::BGRX, 4, 2, 2), opts(6, 8, 0), "wrong sequence");
  fails(filled(PixelFormat::BGRX, 4, 3, 2), opts(7, 8, 0), "wrong height");
  fails(filled(PixelFormat::BGRX, 5, 2, 2), opts(7, 8, 0), "wrong width");
  fails(filled(PixelFormat::RGBX, 4, 2, 2), opts(7, 8, 0, "RGBX"), "wrong format");
  fails(filled(PixelFormat::BGRX, 4, 2, 2), opts(7, 8, 0, "BGRA"), "wrong rgb_format name");
  fails(filled(PixelFormat::BGRX, 4, 2, 2), opts({}, 8, 9), "store to a missing bucket");
}

TEST(DeltaBuckets, ZeroBucketsRefuseEverything) {
  DeltaBuckets b(0);
  EXPECT_FALSE(b.apply(filled(PixelFormat::BGRX, 1, 1, 0), opts({}, 1, 0), "png").ok());
}

}  // namespace
}  // namespace pixpath::paint
