// Input: 4 bytes little-endian alpha_offset, then the jpega data.
#include "fuzz_common.h"

using namespace pixpath;
using namespace pixpath::codecs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const Decoder& d = *CodecRegistry::builtin().decoder("jpega");
  DrawOptions o;
  o.alpha_offset = int64_t(data[0] | (data[1] << 8) | (data[2] << 16) | (uint32_t(data[3]) << 24));
  DecodeParams p;
  p.options = &o;
  p.limits = fuzz::fuzz_limits();
  fuzz::decode_into_format(d, {data + 4, size - 4}, p, PixelFormat::BGRA);
  return 0;
}
