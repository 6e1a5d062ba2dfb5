// Shared by the codec tests: decode/encode shorthands over the builtin registry.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codecs/testing/test_images.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs::testing {

// Picture sizes every decoder's round-trip tests cover: one pixel, odd, a long thin row, even.
struct TestSize {
  int w, h;
};
inline constexpr TestSize kTestSizes[] = {{1, 1}, {17, 13}, {4097, 3}, {64, 48}};

inline const Decoder& decoder(std::string_view coding) {
  const Decoder* d = CodecRegistry::builtin().decoder(coding);
  if (!d) std::abort();
  return *d;
}
inline const Encoder& encoder(std::string_view coding) {
  const Encoder* e = CodecRegistry::builtin().encoder(coding);
  if (!e) std::abort();
  return *e;
}

inline std::vector<uint8_t> encode(std::string_view coding, const Picture& pic,
                                   EncodeParams params = {}, EncodedPicture* full = nullptr) {
  auto v = pic.read();
  EXPECT_TRUE(v.ok());
  auto e = encoder(coding).encode(*v, params);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  if (!e.ok()) return {};
  if (full) *full = *e;
  return e->data;
}

// Decodes into a freshly allocated picture of `format` (through decode()).
inline Picture decode_as(std::string_view coding, const std::vector<uint8_t>& data,
                         PixelFormat format, const DecodeParams& params = {}) {
  auto r = decoder(coding).decode(SharedBytes::copy_of(data), params, format);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? r->picture : Picture();
}

inline Picture convert(const Picture& src, PixelFormat format) {
  auto out = Picture::allocate(format, src.width(), src.height());
  auto dv = out->write();
  EXPECT_TRUE(convert_pixels(*src.read(), *dv).ok());
  return std::move(*out);
}

inline Picture read_reference(const std::string& path) {
  auto p = read_image_file(path);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message());
  return p.ok() ? std::move(*p) : Picture();
}

inline void write_reference(const std::string& path, const Picture& pic) {
  auto r = write_image_file(path, *pic.read());
  ASSERT_TRUE(r.ok()) << r.error().message();
}

#define PIXPATH_REQUIRE_TOOL(tool)                                                   \
  do {                                                                               \
    if (!::pixpath::codecs::testing::have_tool(tool)) GTEST_SKIP() << tool " is not installed"; \
  } while (0)

}  // namespace pixpath::codecs::testing
