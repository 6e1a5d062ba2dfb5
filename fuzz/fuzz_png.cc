#include "fuzz_common.h"

using namespace pixpath;
using namespace pixpath::codecs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Decoder& d = *CodecRegistry::builtin().decoder("png");
  DecodeParams p;
  p.limits = fuzz::fuzz_limits();
  std::span<const uint8_t> in(data, size);
  fuzz::decode_into_format(d, in, p, PixelFormat::RGBA);
  fuzz::decode_into_format(d, in, p, PixelFormat::RGB);
  fuzz::decode_into_format(d, in, p, PixelFormat::BGRX);
  fuzz::decode_into_format(d, in, p, PixelFormat::GRAY8);
  return 0;
}
