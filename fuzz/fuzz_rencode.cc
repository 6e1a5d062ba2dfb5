// rencodeplus as xpra 6.x speaks it. Input: the bytes of one value. A value that decodes must
// encode back to bytes that decode to an identical value (same kinds, floats bit for bit), and
// encoding that value again must give the same bytes (the encoder is canonical).
#include <cstdlib>

#include "pixpath/net/xpra/rencode.h"

using namespace pixpath;
using namespace pixpath::xpra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SharedBytes in = SharedBytes::copy_of(std::span<const uint8_t>(data, size));
  auto v = rencode_decode(in);
  if (!v.ok()) {
    (void)v.error().message();
    return 0;
  }
  (void)v->debug_string(80);
  auto again = rencode_encode(*v);
  auto w = rencode_decode(SharedBytes::copy_of(std::span<const uint8_t>(again)));
  if (!w.ok() || !identical(*w, *v)) std::abort();  // the encoder wrote something it misreads
  if (rencode_encode(*w) != again) std::abort();
  return 0;
}
