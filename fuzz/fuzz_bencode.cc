// bencode as xpra speaks it. Input: the bytes of one value. A value that decodes must encode
// back to bytes that decode to an equal value (round trip), and to the same bytes when the
// input was canonical.
#include <cstdlib>

#include "pixpath/net/xpra/bencode.h"

using namespace pixpath;
using namespace pixpath::xpra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SharedBytes in = SharedBytes::copy_of(std::span<const uint8_t>(data, size));
  auto v = bencode_decode(in);
  if (!v.ok()) {
    (void)v.error().message();
    return 0;
  }
  (void)v->debug_string(80);
  auto again = bencode_encode(*v);
  auto w = bencode_decode(SharedBytes::copy_of(std::span<const uint8_t>(again)));
  if (!w.ok() || !(*w == *v)) std::abort();  // the encoder wrote something it cannot read
  return 0;
}
