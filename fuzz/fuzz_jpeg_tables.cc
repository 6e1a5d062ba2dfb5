// The JPEG marker scanner (codecs/jpeg_tables.h) and the GPU route's refusals built on it
// (paint/gpu_draw_decoder.h): any bytes end in a result, never a crash, a read past the data or
// an unbounded walk; a scanned frame is self-consistent.
#include <cstdlib>

#include "pixpath/codecs/jpeg_tables.h"
#include "pixpath/paint/gpu_draw_decoder.h"

using namespace pixpath;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  auto t = codecs::scan_jpeg_tables(in);
  if (t.ok()) {
    if (t->component_count < 1 || t->component_count > 4) std::abort();
    for (int c = 0; c < t->component_count; ++c) {
      const double b = codecs::idct_overshoot_bound(t->components[size_t(c)].quant);
      if (!(b >= 0) || b > 64 * 65535.0) std::abort();  // NaN or beyond any table
    }
  }
  for (bool engines : {true, false})
    for (bool exactness : {true, false}) (void)paint::gpu_exactness_refusal(in, engines, exactness);
  return 0;
}
