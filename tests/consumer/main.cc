// A program outside pixpath, built against an installed pixpath (scripts/test-install builds
// it with find_package(pixpath) and with pkg-config): encodes a small picture with each of
// png, webp (lossless) and jpeg through the codec registry, decodes it back and checks the
// pixels — exactly for the lossless codings, within a bound for jpeg.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <pixpath/codecs/registry.h>
#include <pixpath/core/picture.h>
#include <pixpath/core/picture_view.h>
#include <pixpath/core/shared_bytes.h>

namespace {

constexpr int kWidth = 37, kHeight = 21;  // odd sizes: no codec gets an aligned-only shortcut

// A gradient with varying alpha (never 0: lossless webp may rewrite the colour of fully
// transparent pixels).
uint8_t expected(int x, int y, int channel) {
  switch (channel) {
    case 0: return static_cast<uint8_t>(x * 255 / (kWidth - 1));
    case 1: return static_cast<uint8_t>(y * 255 / (kHeight - 1));
    case 2: return static_cast<uint8_t>((x + y) * 4);
    default: return static_cast<uint8_t>(128 + (x * 7 + y * 3) % 128);
  }
}

// Encodes `source` as `coding`, decodes it to RGBA and returns the largest difference from the
// source over the compared channels (alpha too when `with_alpha`), or -1 on any failure.
int round_trip(const std::string& coding, const pixpath::ConstPictureView& source,
               const pixpath::codecs::EncodeParams& params, bool with_alpha) {
  const auto& registry = pixpath::codecs::CodecRegistry::builtin();
  const auto* encoder = registry.encoder(coding);
  const auto* decoder = registry.decoder(coding);
  if (!encoder || !decoder) {
    std::fprintf(stderr, "%s: this pixpath has no %s for it\n", coding.c_str(),
                 encoder ? "decoder" : "encoder");
    return -1;
  }
  auto encoded = encoder->encode(source, params);
  if (!encoded) {
    std::fprintf(stderr, "%s\n", encoded.error().message().c_str());
    return -1;
  }
  const size_t encoded_size = encoded->data.size();
  pixpath::codecs::DecodeParams decode_params;
  decode_params.options = &encoded->options;
  auto decoded = decoder->decode(pixpath::SharedBytes::adopt(std::move(encoded->data)),
                                 decode_params, pixpath::PixelFormat::RGBA);
  if (!decoded) {
    std::fprintf(stderr, "%s\n", decoded.error().message().c_str());
    return -1;
  }
  const pixpath::Picture& picture = decoded->picture;
  if (picture.format() != pixpath::PixelFormat::RGBA || picture.width() != kWidth ||
      picture.height() != kHeight) {
    std::fprintf(stderr, "%s: decoded %dx%d, expected %dx%d RGBA\n", coding.c_str(),
                 picture.width(), picture.height(), kWidth, kHeight);
    return -1;
  }
  auto view = picture.read();
  if (!view) {
    std::fprintf(stderr, "%s\n", view.error().message().c_str());
    return -1;
  }
  int worst = 0;
  for (int y = 0; y < kHeight; ++y) {
    const std::span<const uint8_t> row = view->plane(0).row(y);
    for (int x = 0; x < kWidth; ++x) {
      for (int c = 0; c < 4; ++c) {
        const int want = c == 3 && !with_alpha ? 255 : expected(x, y, c);
        const int diff = std::abs(int(row[size_t(x) * 4 + size_t(c)]) - want);
        if (diff > worst) worst = diff;
      }
    }
  }
  std::printf("%-5s %4zu bytes, largest difference %d\n", coding.c_str(), encoded_size, worst);
  return worst;
}

}  // namespace

int main() {
  std::vector<uint8_t> pixels(size_t(kWidth) * kHeight * 4);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x)
      for (int c = 0; c < 4; ++c) pixels[(size_t(y) * kWidth + size_t(x)) * 4 + size_t(c)] = expected(x, y, c);
  auto source = pixpath::make_view(pixpath::PixelFormat::RGBA, kWidth, kHeight,
                                   static_cast<const uint8_t*>(pixels.data()), size_t(kWidth) * 4);
  if (!source) {
    std::fprintf(stderr, "%s\n", source.error().message().c_str());
    return 1;
  }
  bool ok = true;
  pixpath::codecs::EncodeParams lossless;
  lossless.quality = 100;  // webp: lossless
  ok &= round_trip("png", *source, lossless, /*with_alpha=*/true) == 0;
  ok &= round_trip("webp", *source, lossless, /*with_alpha=*/true) == 0;
  // jpeg has no alpha (decodes opaque); at quality 95 without chroma subsampling a smooth
  // gradient comes back within a few levels.
  pixpath::codecs::EncodeParams jpeg;
  jpeg.quality = 95;
  jpeg.subsampling = pixpath::codecs::Subsampling::S444;
  const int jpeg_worst = round_trip("jpeg", *source, jpeg, /*with_alpha=*/false);
  ok &= jpeg_worst >= 0 && jpeg_worst <= 8;
  std::puts(ok ? "consumer: ok" : "consumer: FAILED");
  return ok ? 0 : 1;
}
