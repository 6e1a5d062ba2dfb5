#include "fuzz_common.h"

using namespace pixpath;
using namespace pixpath::codecs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Decoder& d = *CodecRegistry::builtin().decoder("jpeg");
  DecodeParams p;
  p.limits = fuzz::fuzz_limits();
  std::span<const uint8_t> in(data, size);
  fuzz::decode_into_format(d, in, p, PixelFormat::BGRX);
  fuzz::decode_into_format(d, in, p, PixelFormat::RGB);
  // The planar format matching the stream, when there is one.
  if (auto inf = d.inspect(in, p); inf.ok() && info(inf->natural_format).planes > 1) {
    fuzz::decode_into_format(d, in, p, inf->natural_format);
  }
  return 0;
}
