// Decoders are immutable and called from many threads at once (per-thread TurboJPEG handles).
#include <gtest/gtest.h>

#include <thread>

#include "codecs/testing/test_images.h"
#include "pixpath/codecs/registry.h"

namespace pixpath::codecs::testing {
namespace {

TEST(CodecsThreaded, ConcurrentDecodesMatch) {
  const auto& reg = CodecRegistry::builtin();
  Picture src = screen_picture(PixelFormat::RGBA, 96, 64);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> streams;
  EncodedPicture jpega;
  for (const char* c : {"jpeg", "png", "webp", "jpega"}) {
    auto e = reg.encoder(c)->encode(*src.read(), {});
    ASSERT_TRUE(e.ok());
    if (std::string(c) == "jpega") jpega = *e;
    streams.emplace_back(c, e->data);
  }
  std::vector<Picture> expected;
  for (auto& [c, data] : streams) {
    DecodeParams p;
    p.options = &jpega.options;
    auto d = reg.decoder(c)->decode(SharedBytes::copy_of(data), p, PixelFormat::RGBA);
    ASSERT_TRUE(d.ok());
    expected.push_back(d->picture);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        const size_t k = size_t(t + i) % streams.size();
        GuardedDestination dst(PixelFormat::RGBA, 96, 64);
        DecodeParams p;
        p.options = &jpega.options;
        auto r = reg.decoder(streams[k].first)->decode_into(streams[k].second, p, dst.view());
        if (!r.ok() || max_difference(dst.view(), *expected[k].read()) != 0) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace pixpath::codecs::testing
