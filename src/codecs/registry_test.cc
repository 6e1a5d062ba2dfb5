#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

TEST(CodecRegistry, HasEveryCoding) {
  const auto& reg = CodecRegistry::builtin();
  for (const char* c : {"rgb24", "rgb32", "jpeg", "jpega", "png", "png/L", "png/P", "webp"}) {
    ASSERT_NE(reg.decoder(c), nullptr) << c;
    EXPECT_EQ(reg.decoder(c)->coding(), c);
  }
  for (const char* c : {"rgb24", "rgb32", "jpeg", "jpega", "png", "png/L", "webp"}) {
    ASSERT_NE(reg.encoder(c), nullptr) << c;
  }
  EXPECT_EQ(reg.decoder("h264"), nullptr);
  EXPECT_EQ(reg.decodable_codings().size(), 8u);
  for (const auto& d : reg.describe()) {
    EXPECT_FALSE(d.library.empty());
    EXPECT_FALSE(d.outputs.empty()) << d.coding;
  }
  auto libs = reg.library_versions();
  ASSERT_EQ(libs.size(), 6u);
  for (const auto& l : libs) EXPECT_FALSE(l.version.empty()) << l.name;
}

}  // namespace
}  // namespace pixpath::codecs::testing
