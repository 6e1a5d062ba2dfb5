// pixpath's own baseline JPEG parser and the CPU reference of its parallel entropy decoder
// (the GPU decoder's steps): parse, unstuff, decode at a subsequence size taken from the input,
// and check it against a serial decode of the same data (coefficients and damage warnings);
// the headers-only parse succeeds wherever the whole parse does, with the same frame.
#include <cstdint>
#include <span>

#include "pixpath/codecs/jpeg_parallel_decode.h"

using namespace pixpath::codecs::jpeg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  BaselineLimits limits;
  limits.max_width = 4096;
  limits.max_height = 4096;
  limits.max_pixels = 2048 * 2048;
  auto headers = parse_baseline_jpeg(in, limits, ParseDepth::Headers);
  auto parsed = parse_baseline_jpeg(in, limits);
  if (!parsed.ok()) return 0;
  if (!headers.ok() || headers->width != parsed->width || headers->height != parsed->height ||
      headers->component_count != parsed->component_count || headers->scan_begin != parsed->scan_begin ||
      headers->restart_interval != parsed->restart_interval || !headers->segments.empty()) {
    __builtin_trap();
  }
  const UnstuffedScan u = unstuff_scan(in, *parsed);
  if (u.segment_begin.size() != parsed->segments.size() + 1) __builtin_trap();
  ParallelDecodeOptions opt;
  // 8..519 bits: small sizes make every codeword cross subsequences and exercise the sync.
  opt.subsequence_bits = 8 + uint32_t(size % 512);
  opt.max_coefficient_bytes = 64 << 20;
  auto img = decode_coefficients_parallel(in, *parsed, opt);
  if (!img.ok()) return 0;
  // Damaged entropy data is reported as warnings only, and the same whatever the subsequence
  // size: a serial decode (one subsequence per segment) finds the same damage and coefficients.
  for (const auto& w : img->warnings) {
    if (w.fatal()) __builtin_trap();
  }
  opt.subsequence_bits = 1u << 30;
  auto serial = decode_coefficients_parallel(in, *parsed, opt);
  if (!serial.ok() || serial->coefficients != img->coefficients ||
      serial->warnings.size() != img->warnings.size()) {
    __builtin_trap();
  }
  for (size_t i = 0; i < img->warnings.size(); ++i) {
    if (serial->warnings[i].message() != img->warnings[i].message()) __builtin_trap();
  }
  return 0;
}
