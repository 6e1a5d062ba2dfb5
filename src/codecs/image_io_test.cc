#include <sstream>

#include "codecs/testing/codec_test_util.h"
#include "pixpath/codecs/codec_commands.h"

namespace pixpath::codecs::testing {
namespace {

int run(bool enc, std::vector<std::string> args, std::string* err_text = nullptr) {
  std::ostringstream out, err;
  const int rc = enc ? run_encode(args, out, err) : run_decode(args, out, err);
  if (err_text) *err_text = err.str();
  return rc;
}

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

TEST(ImageIo, EncodeAndDecodeCommands) {
  TempDir dir;
  write_reference(dir.file("src.pam"), screen_picture(PixelFormat::RGBA, 33, 17));
  write_reference(dir.file("src.ppm"), screen_picture(PixelFormat::RGB, 33, 17));
  for (std::string coding : {"jpeg", "jpega", "png", "webp", "rgb24", "rgb32"}) {
    std::string err;
    const std::string out = dir.file("out." + std::string(coding == "png/L" ? "pngl" : coding));
    std::vector<std::string> args = {dir.file(coding == "jpega" ? "src.pam" : "src.ppm"), "-o", out, "--coding", coding, "--quality", "80"};
    if (coding == "jpeg") args.insert(args.end(), {"--subsampling", "444", "--restart", "1"});
    if (coding.rfind("rgb", 0) == 0) args.insert(args.end(), {"--compression", "lz4"});
    EXPECT_EQ(run(true, args, &err), 0) << coding << ": " << err;
    if (coding == "jpeg" || coding == "png" || coding == "webp") {
      EXPECT_EQ(run(false, {out, "-o", dir.file("back.png")}, &err), 0) << err;
      EXPECT_EQ(run(false, {out, "-o", dir.file("back.ppm")}, &err), 0) << err;
      Picture back = read_reference(dir.file("back.ppm"));
      EXPECT_EQ(back.width(), 33);
    }
  }
  // Raw rgb input.
  Picture bgrx = screen_picture(PixelFormat::BGRX, 8, 4);
  std::vector<uint8_t> raw;
  auto v = *bgrx.read();
  for (int y = 0; y < 4; ++y) raw.insert(raw.end(), v.planes[0].unchecked_row(y), v.planes[0].unchecked_row(y) + 32);
  spit(dir.file("raw.bin"), raw);
  std::string err;
  EXPECT_EQ(run(false, {dir.file("raw.bin"), "-o", dir.file("raw.pam"), "--size", "8x4", "--rgb-format", "BGRX"}, &err), 0) << err;
  EXPECT_EQ(max_difference(*read_reference(dir.file("raw.pam")).read(), *convert(bgrx, PixelFormat::RGB).read()), 0);
}

TEST(ImageIo, BadInputGivesOneLineAndNonZero) {
  TempDir dir;
  spit(dir.file("junk.jpg"), {0xFF, 0xD8, 0xFF, 0xE0, 0, 1, 2});
  std::string err;
  EXPECT_EQ(run(false, {dir.file("junk.jpg"), "-o", dir.file("x.png")}, &err), 1);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("jpeg"), std::string::npos) << err;
  EXPECT_EQ(run(false, {dir.file("missing.jpg"), "-o", dir.file("x.png")}, &err), 1);
  EXPECT_EQ(run(false, {dir.file("junk.jpg")}, &err), 2);
  EXPECT_EQ(run(true, {dir.file("junk.jpg"), "-o", "x", "--coding", "gif"}, &err), 2);
  EXPECT_EQ(run(true, {dir.file("junk.jpg"), "-o", "x", "--coding", "jpeg", "--quality", "0"}, &err), 2);
  EXPECT_EQ(run(false, {dir.file("junk.jpg"), "-o", dir.file("x.gif"), "--size", "2x2"}, &err), 2);
}

}  // namespace
}  // namespace pixpath::codecs::testing
