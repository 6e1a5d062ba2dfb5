// CPU reference of pixpath's parallel baseline-JPEG entropy decoder: the steps of
// jpeg_entropy_kernels.h (Weißenberger & Schmidt's self-synchronising subsequence decoding)
// run one subsequence at a time from a host loop over plain arrays, exactly as the CUDA
// kernels run them one per thread. Its output is the quantised DCT coefficients, equal to
// libjpeg-turbo's jpeg_read_coefficients for every file parse_baseline_jpeg accepts whose
// entropy data is intact. Damaged entropy data (see jpeg_entropy_kernels.h, subsequence_damage)
// still decodes, as libjpeg-turbo decodes it with a warning: the coefficients the data has
// (zeros where it has none) and warnings in CoefficientImage::warnings (Severity::Warning,
// subject "jpeg", stage "parallel decode"; Truncated for "Premature end ...", CorruptData for
// "Corrupt JPEG data: ..."), never a read or write out of bounds.
//
// It is the reference the GPU decoder is tested against, not a fast CPU decoder: TurboJPEG
// stays the CPU route.
//
// Threading: plain functions; no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pixpath/codecs/jpeg_baseline_parse.h"
#include "pixpath/codecs/jpeg_color_kernels.h"
#include "pixpath/codecs/jpeg_entropy_kernels.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs::jpeg {

struct ParallelDecodeOptions {
  uint32_t subsequence_bits = 1024;  // bits per subsequence (>= 8)
  uint64_t max_coefficient_bytes = uint64_t{1} << 30;
  bool transfer_maps = true;  // step 3a before the rounds (jpeg_entropy_kernels.h)
  bool write_pieces = true;   // step 5 in pieces (jpeg_entropy_kernels.h, write_piece)
};

// What the run did (for tests and the benchmark's breakdown); filled once the subsequences
// are synchronised, also when a later step fails.
struct ParallelDecodeStats {
  size_t segments = 0;
  size_t subsequences = 0;
  int sync_rounds = 0;               // rounds that changed at least one start state
  bool serial_sweep = false;         // kMaxSyncRounds were not enough: one serial walk
  size_t sync_decodes = 0;           // subsequence decodes done by those rounds
  size_t wrong_speculative_starts = 0;  // subsequences whose guessed start state was wrong
  int transfer_passes = 0;           // step 3a's passes (0: not run)
  size_t transfer_resolved = 0;      // subsequences whose start step 3a found
  size_t write_pieces = 0;           // step 5's write-outs (one a subsequence without pieces)
};

// Quantised coefficients, one plane per component: a raster of blocks_w x blocks_h blocks
// (the scan's stored size, FrameComponent::stored_blocks_w/_h), 64 int16 each, natural order.
struct CoefficientImage {
  int component_count = 0;
  std::array<uint32_t, kMaxComponents> blocks_w{}, blocks_h{};
  std::array<uint64_t, kMaxComponents> offset{};  // first coefficient of each plane
  std::vector<int16_t> coefficients;
  std::vector<Error> warnings;  // damaged entropy data (Severity::Warning); empty when intact

  const int16_t* block(int component, uint32_t bx, uint32_t by) const {
    return coefficients.data() + offset[size_t(component)] +
           (uint64_t(by) * blocks_w[size_t(component)] + bx) * 64;
  }
};

// What the damage checks found over a whole scan: per kind of EntropyDamage (index = bit
// number: bad code, past 63, ends early, extra bytes) the first segment that has it and how
// many segments do; the extraneous bytes of all segments; whether EOI is missing. The CPU
// reference fills it from its per-segment checks, the GPU decoder from its flag words.
struct EntropyDamageSummary {
  static constexpr int kKinds = 4;
  std::array<uint32_t, kKinds> first_segment{kNoSlot, kNoSlot, kNoSlot, kNoSlot};
  std::array<uint32_t, kKinds> segments{};
  uint64_t extraneous_bytes = 0;
  bool no_eoi = false;

  void add(uint32_t segment, uint32_t damage);  // damage: EntropyDamage bits
};

// One warning per kind of damage found (Severity::Warning, subject "jpeg", `stage`), worded
// like libjpeg-turbo's ("Premature end of JPEG ...": Truncated; "Corrupt JPEG data: ...":
// CorruptData), naming the first restart interval (or "the scan") and how many more.
std::vector<Error> entropy_damage_warnings(const BaselineJpeg& jpeg,
                                           const EntropyDamageSummary& summary,
                                           const std::string& stage);

// The decoding tables and block layout of the parsed scan (the GPU copies this to the device).
ScanTables build_scan_tables(const BaselineJpeg& jpeg);

// Step 1 of the method as plain arrays: everything the decoding steps read besides the tables
// and the quantisation, made once on the host by the CPU reference and by the GPU decoder alike
// (which uploads it as is; a route through the GPU module would hand it across the module's
// ABI, since the module links no pixpath library).
struct ParallelDecodePlan {
  UnstuffedScan scan;
  // Per subsequence: first bit, end bit, segment.
  std::vector<uint32_t> sub_begin, sub_end, sub_seg;
  // Per segment: end bit, first subsequence (one entry more: the subsequence count), coefficient
  // slots (blocks x 64), first block (in scan order).
  std::vector<uint32_t> seg_end_bit, seg_first_sub, seg_slots;
  std::vector<uint64_t> seg_first_block;
  // DC prediction (step 6): the scan's blocks (MCUs x blocks per MCU) and the restart
  // interval in MCUs (0: none), which places the segment starts.
  uint32_t scan_blocks = 0;
  uint32_t restart_mcus = 0;
  // The coefficient planes (CoefficientImage's layout).
  int component_count = 0;
  std::array<uint32_t, kMaxComponents> blocks_w{}, blocks_h{};
  std::array<uint64_t, kMaxComponents> offset{};
  uint64_t coefficients = 0;  // all planes together
};

// Errors (subject "jpeg", stage "parallel decode"): InvalidArgument (a subsequence under 8
// bits, `jpeg` not parsed from `data`), LimitExceeded (options.max_coefficient_bytes, 512 MiB
// of entropy-coded data, 2^32 coefficients in one restart interval).
Result<ParallelDecodePlan> plan_parallel_decode(std::span<const uint8_t> data,
                                                const BaselineJpeg& jpeg,
                                                const ParallelDecodeOptions& options = {});

// Step 6 on the host, as the GPU runs it (jpeg_entropy_kernels.h, kDcTileBlocks): the DC
// differences of `scan_blocks` blocks in `coefficients` (layout's planes) become DC values.
void predict_dc_in_tiles(const BlockLayout& layout, uint32_t restart_mcus, uint32_t scan_blocks,
                         int16_t* coefficients);

// `data` is what parse_baseline_jpeg parsed into `jpeg`.
Result<CoefficientImage> decode_coefficients_parallel(std::span<const uint8_t> data,
                                                      const BaselineJpeg& jpeg,
                                                      const ParallelDecodeOptions& options = {},
                                                      ParallelDecodeStats* stats = nullptr);

// How the chroma planes of `jpeg` are upsampled to RGB (jpeg_color_kernels.h), as libjpeg-turbo
// chooses it; Upsampling::None for gray. Unsupported (stage "upsampling"): colour models other
// than gray and YCbCr, Cb and Cr sampled differently, ratios other than 1, 2x1, 1x2 and 2x2,
// and chroma planes 1 or 2 samples wide (libjpeg-turbo then switches to box filters).
Result<Upsampling> chroma_upsampling(const BaselineJpeg& jpeg);

}  // namespace pixpath::codecs::jpeg
