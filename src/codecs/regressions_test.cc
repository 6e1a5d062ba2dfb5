// Replays every input kept under tests/data/regressions/<coding>/ (fuzz findings and bug
// reproducers) through that coding's decoder: each must end in a result, never a crash, and
// must not write outside its destination. A file NAME.opts next to an input may carry
// "w h rowstride rgb_format zlib lz4 alpha_offset" for codings that need packet fields.
#include <filesystem>
#include <fstream>

#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

TEST(CodecRegressions, ReplayAll) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest sets it)";
  const std::filesystem::path dir = std::filesystem::path(root) / "regressions";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir << " does not exist";
  int replayed = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".opts" ||
        entry.path().extension() == ".md") {
      continue;
    }
    std::string coding = entry.path().parent_path().filename().string();
    if (coding == "png_L") coding = "png/L";
    if (coding == "png_P") coding = "png/P";
    const Decoder* d = CodecRegistry::builtin().decoder(coding);
    if (!d) continue;
    SCOPED_TRACE(entry.path().string());
    auto data = slurp(entry.path().string());
    DrawOptions o;
    DecodeParams p;
    p.options = &o;
    p.limits.max_pixels = 4096 * 4096;
    std::ifstream opts(entry.path().string() + ".opts");
    if (opts) {
      int64_t alpha = 0;
      opts >> p.width >> p.height >> p.rowstride >> o.rgb_format >> o.zlib >> o.lz4 >> alpha;
      if (alpha) o.alpha_offset = alpha;
    }
    auto inf = d->inspect(data, p);
    if (inf.ok()) {
      for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGRX, PixelFormat::RGB}) {
        GuardedDestination dst(f, inf->width, inf->height);
        (void)d->decode_into(data, p, dst.view());
        EXPECT_TRUE(dst.guards_intact());
      }
    }
    ++replayed;
  }
  std::cout << "replayed " << replayed << " regression inputs\n";
}

}  // namespace
}  // namespace pixpath::codecs::testing
