// JPEGs outside what xpra servers send (issue 15): CMYK and YCCK (decoded to RGB, matching
// Pillow within 2), arithmetic coding (matching djpeg exactly), and damaged files (a truncated
// and a bit-flipped one: decoded, but never silently: the warnings libjpeg-turbo gives, as djpeg
// prints them). The files and how they were made: tests/data/jpeg/README.md.
#include <cstdlib>
#include <filesystem>

#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

std::string data_file(const std::string& name) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  EXPECT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest sets it)";
  return std::string(root ? root : ".") + "/jpeg/" + name;
}

// Largest channel difference of two RGB pictures of one size (999 when the sizes differ).
int max_diff(const Picture& a, const Picture& b) {
  if (a.width() != b.width() || a.height() != b.height()) return 999;
  auto va = a.read();
  auto vb = b.read();
  int m = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width() * 3; ++x)
      m = std::max(m, std::abs(int(va->plane(0).row(y)[size_t(x)]) - int(vb->plane(0).row(y)[size_t(x)])));
  return m;
}

TEST(JpegCompat, CmykAndYcckDecodeToRgbAsPillowDoes) {
  for (const char* name : {"pillow-cmyk-q90", "turbojpeg-ycck-420-q85"}) {
    SCOPED_TRACE(name);
    const auto jpg = slurp(data_file(std::string(name) + ".jpg"));
    ASSERT_FALSE(jpg.empty());
    auto inf = decoder("jpeg").inspect(jpg, {});
    ASSERT_TRUE(inf.ok()) << inf.error().message();
    EXPECT_EQ(inf->natural_format, PixelFormat::RGB);
    EXPECT_NE(inf->detail.find(std::string(name).find("ycck") != std::string::npos ? "YCCK" : "CMYK"),
              std::string::npos)
        << inf->detail;
    const Picture pillow = convert(read_reference(data_file(std::string(name) + ".pillow.png")), PixelFormat::RGB);
    const Picture rgb = decode_as("jpeg", jpg, PixelFormat::RGB);
    EXPECT_LE(max_diff(rgb, pillow), 2);
    // Every packed order is the same pixels; the fourth byte is opaque.
    const Picture bgra = decode_as("jpeg", jpg, PixelFormat::BGRA);
    EXPECT_EQ(max_diff(convert(bgra, PixelFormat::RGB), rgb), 0);
    EXPECT_EQ(bgra.read()->plane(0).row(5)[3], 0xFF);
    // read_image (pixpath decode) gives RGB too.
    auto file = decode_image_file(data_file(std::string(name) + ".jpg"));
    ASSERT_TRUE(file.ok()) << file.error().message();
    EXPECT_EQ(file->picture.format(), PixelFormat::RGB);
    EXPECT_TRUE(file->warnings.empty());
    // No planar or gray output for four components.
    GuardedDestination gray(PixelFormat::GRAY8, rgb.width(), rgb.height());
    auto r = decoder("jpeg").decode_into(jpg, {}, gray.view());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
    EXPECT_TRUE(gray.guards_intact());
  }
}

TEST(JpegCompat, ArithmeticCodedMatchesDjpeg) {
  const auto jpg = slurp(data_file("cjpeg-arithmetic-q80.jpg"));
  auto inf = decoder("jpeg").inspect(jpg, {});
  ASSERT_TRUE(inf.ok()) << inf.error().message();
  EXPECT_NE(inf->detail.find("arithmetic"), std::string::npos) << inf->detail;
  const Picture djpeg = convert(read_reference(data_file("cjpeg-arithmetic-q80.djpeg.png")), PixelFormat::RGB);
  EXPECT_EQ(max_diff(decode_as("jpeg", jpg, PixelFormat::RGB), djpeg), 0);
}

TEST(JpegCompat, DamagedFilesDecodeWithWarnings) {
  const Picture intact = decode_as("jpeg", slurp(data_file("cjpeg-q75.jpg")), PixelFormat::RGB);
  struct Case {
    const char* file;
    ErrorCode code;
    const char* says;  // what djpeg says too
  };
  for (const Case& c : {Case{"cjpeg-q75-truncated.jpg", ErrorCode::Truncated, "Premature end of JPEG file"},
                        Case{"cjpeg-q75-bitflips.jpg", ErrorCode::CorruptData, "Corrupt JPEG data"}}) {
    SCOPED_TRACE(c.file);
    auto r = decode_image_file(data_file(c.file));
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->warnings.size(), 1u);
    const Error& w = r->warnings[0];
    EXPECT_EQ(w.severity(), Severity::Warning);
    EXPECT_EQ(w.code(), c.code);
    EXPECT_EQ(w.subject(), "jpeg");
    EXPECT_NE(w.reason().find(c.says), std::string::npos) << w.message();
    EXPECT_EQ(r->picture.width(), intact.width());
    EXPECT_EQ(r->picture.height(), intact.height());
    EXPECT_GT(max_diff(r->picture, intact), 16) << "the damage should show";
    // Straight into a destination: the report carries the same warning.
    GuardedDestination dst(PixelFormat::BGRX, intact.width(), intact.height());
    auto rep = decoder("jpeg").decode_into(slurp(data_file(c.file)), {}, dst.view());
    ASSERT_TRUE(rep.ok()) << rep.error().message();
    EXPECT_EQ(rep->warnings.size(), 1u);
    EXPECT_TRUE(dst.guards_intact());
  }
  auto clean = decode_image_file(data_file("cjpeg-q75.jpg"));
  ASSERT_TRUE(clean.ok());
  EXPECT_TRUE(clean->warnings.empty());
}

}  // namespace
}  // namespace pixpath::codecs::testing
