// A small, bounded scanner of a JPEG's markers (no entropy decoding): the frame (SOFn, size,
// components and their sampling) and the quantisation tables each component uses, and from the
// tables a worst-case bound on how far the decoder's IDCT output can overshoot the range of the
// samples the encoder started from. The GPU route uses it to keep pictures whose ringing can
// leave nvJPEG's range on the CPU (paint/gpu_draw_decoder.h, gpu_exactness_refusal()).
//
// Untrusted input: every length is checked against the data, the walk stops at the end of the
// data or after kMaxMarkers markers; never allocates beyond a few fixed tables.
// Threading: stateless; call from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "pixpath/core/result.h"

namespace pixpath::codecs {

struct JpegComponentTables {
  int id = 0;
  int h_samp = 1, v_samp = 1;
  int table_slot = 0;  // Tq of the frame header
  // The quantisation table in natural (row-major, not zigzag) order. Where the slot was
  // defined more than once in the stream (tables may change between scans), the largest value
  // of every coefficient over all definitions: what the bound below needs.
  std::array<uint16_t, 64> quant{};
  bool quant_defined = false;
  bool quant_16bit = false;  // some definition used 16-bit precision (Pq = 1)
};

struct JpegTables {
  uint8_t sof = 0;  // the SOFn marker's second byte: 0xC0 baseline, 0xC1 extended, 0xC2 ...
  int precision = 0;
  int width = 0, height = 0;
  int component_count = 0;
  std::array<JpegComponentTables, 4> components{};
  bool has_sos = false;        // a scan header was seen
  bool has_eoi = false;        // the walk ended at an EOI marker (not at the end of the data)
  int adobe_transform = -1;    // APP14 "Adobe" transform byte, -1 without that marker
  // "baseline", "extended", "progressive", "lossless", "arithmetic", ...
  std::string process() const;
};

inline constexpr int kJpegScanMaxMarkers = 4096;

// Walks every marker of the stream (skipping entropy-coded data byte by byte). Fails
// (CorruptData / Truncated, subject "jpeg", stage "scan tables") on a broken marker structure,
// no SOI, no frame header, a component without a defined quantisation table, or more than
// kJpegScanMaxMarkers markers.
[[nodiscard]] Result<JpegTables> scan_jpeg_tables(std::span<const uint8_t> data);

// The worst case, in sample levels, of |IDCT output - encoder input| for one component whose
// encoder rounded each coefficient to the nearest multiple of its quantiser (the error of a
// coefficient is at most q/2, its sign free): the largest, over the 64 samples of a block, of
// the sum over the 64 coefficients of q/2 times the magnitude of that coefficient's basis
// function at that sample. Exact for a real-valued IDCT; a picture whose encoder input lay in
// [0, 255] decodes, before range limiting, to within [-bound, 255 + bound] (plus the integer
// DCTs' own rounding, a level or two).
double idct_overshoot_bound(const std::array<uint16_t, 64>& natural_quant);

}  // namespace pixpath::codecs
