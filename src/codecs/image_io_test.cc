#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

TEST(ImageIo, PnmRoundTrip) {
  TempDir dir;
  for (PixelFormat f : {PixelFormat::RGB, PixelFormat::RGBA, PixelFormat::GRAY8}) {
    Picture src = screen_picture(f, 19, 7);
    const std::string path = dir.file(f == PixelFormat::RGB ? "a.ppm" : "a.pam");
    write_reference(path, src);
    Picture back = read_reference(path);
    EXPECT_EQ(back.format(), f);
    EXPECT_EQ(max_difference(*back.read(), *src.read()), 0);
  }
}

// Encoded files (as `pixpath encode` writes them) read back by content, and written by the
// output's extension.
TEST(ImageIo, ReadsEncodedFilesAndWritesByExtension) {
  TempDir dir;
  const Picture rgb = screen_picture(PixelFormat::RGB, 33, 17);
  for (std::string coding : {"jpeg", "png", "webp"}) {
    const std::string file = dir.file("out." + coding);
    auto written = write_file(file, encode(coding, rgb, {.quality = 80}));
    ASSERT_TRUE(written.ok()) << written.error().message();
    auto back = read_image_file(file);
    ASSERT_TRUE(back.ok()) << coding << ": " << back.error().message();
    EXPECT_EQ(back->width(), 33);
    EXPECT_EQ(back->height(), 17);
    for (const char* ext : {"png", "ppm"}) {
      auto out = write_image_file(dir.file(std::string("back.") + ext), *back->read());
      ASSERT_TRUE(out.ok()) << out.error().message();
      Picture again = read_reference(dir.file(std::string("back.") + ext));
      EXPECT_EQ(again.width(), 33) << coding << " -> " << ext;
      EXPECT_EQ(max_difference(*again.read(), *convert(*back, again.format()).read()), 0);
    }
  }
  const Picture rgba = screen_picture(PixelFormat::RGBA, 33, 17);
  write_reference(dir.file("src.pam"), rgba);
  EXPECT_EQ(max_difference(*read_reference(dir.file("src.pam")).read(), *rgba.read()), 0);
}

// Raw rgb input (xpra's rgb24/rgb32 bytes): only with an explicit RawImageSpec.
TEST(ImageIo, RawRgbInput) {
  TempDir dir;
  Picture bgrx = screen_picture(PixelFormat::BGRX, 8, 4);
  std::vector<uint8_t> raw;
  auto v = *bgrx.read();
  for (int y = 0; y < 4; ++y) raw.insert(raw.end(), v.planes[0].unchecked_row(y), v.planes[0].unchecked_row(y) + 32);
  spit(dir.file("raw.bin"), raw);
  auto pic = read_image_file(dir.file("raw.bin"), RawImageSpec{8, 4, PixelFormat::BGRX, 0});
  ASSERT_TRUE(pic.ok()) << pic.error().message();
  write_reference(dir.file("raw.pam"), *pic);
  EXPECT_EQ(max_difference(*read_reference(dir.file("raw.pam")).read(), *convert(bgrx, PixelFormat::RGB).read()), 0);
  EXPECT_FALSE(read_image_file(dir.file("raw.bin")).ok()) << "raw bytes are not a picture file";
  EXPECT_FALSE(read_image_file(dir.file("raw.bin"), RawImageSpec{9, 4, PixelFormat::BGRX, 0}).ok())
      << "fewer bytes than 9x4 needs";
}

TEST(ImageIo, BadInputNamesTheProblem) {
  TempDir dir;
  spit(dir.file("junk.jpg"), {0xFF, 0xD8, 0xFF, 0xE0, 0, 1, 2});
  auto junk = read_image_file(dir.file("junk.jpg"));
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().message().find("jpeg"), std::string::npos) << junk.error().message();
  auto missing = read_image_file(dir.file("missing.jpg"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("missing.jpg"), std::string::npos) << missing.error().message();
  const Picture rgb = screen_picture(PixelFormat::RGB, 4, 4);
  auto gif = write_image_file(dir.file("x.gif"), *rgb.read());
  ASSERT_FALSE(gif.ok());
  EXPECT_NE(gif.error().message().find("x.gif"), std::string::npos) << gif.error().message();
}

}  // namespace
}  // namespace pixpath::codecs::testing
