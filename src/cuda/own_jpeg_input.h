// What pixpath's own GPU JPEG decoder (own_jpeg_decode.h) needs of one picture, as plain data,
// and what it gives back about damaged entropy data. Made on the host with pixpath_codecs
// (make_own_jpeg_input); the GPU module, which links no pixpath library (module_abi.h), takes
// it across its ABI as is and runs decode_input_to_planes on it. No CUDA header.
//
// Threading: plain data; no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pixpath/codecs/jpeg_baseline_parse.h"
#include "pixpath/codecs/jpeg_color_kernels.h"
#include "pixpath/codecs/jpeg_entropy_kernels.h"
#include "pixpath/codecs/jpeg_parallel_decode.h"
#include "pixpath/core/result.h"

namespace pixpath::cuda::own_jpeg {

struct OwnJpegInput {
  std::unique_ptr<codecs::jpeg::ScanTables> tables;  // about 11 KB
  codecs::jpeg::ParallelDecodePlan plan;              // step 1's arrays
  std::array<uint16_t, 4 * 64> quant{};               // per component, natural order
  int width = 0, height = 0, components = 0;
  std::array<int, 4> sample_width{}, sample_height{};  // each component's real samples
  codecs::jpeg::Upsampling upsampling = codecs::jpeg::Upsampling::None;
  bool has_eoi = true;
};

// The damage the kernels found (jpeg_entropy_kernels.h, EntropyDamage): per kind the first
// segment (kNoSlot: none) and how many segments; the extraneous bytes of all segments.
struct DamageWords {
  uint32_t first_segment[4] = {codecs::jpeg::kNoSlot, codecs::jpeg::kNoSlot,
                               codecs::jpeg::kNoSlot, codecs::jpeg::kNoSlot};
  uint32_t segments[4] = {};
  uint32_t extraneous_bytes = 0;
};

// Bits per subsequence on the GPU route. Shorter subsequences make the speculative decode and
// the write-out shorter (one thread walks each) but the transfer maps' walks chain through
// more of them; at 256 bits the extra entries run out. Chosen on the H200 with the transfer
// maps before their walks were chained (2026-12-03/05: 768 ahead of 512 and 1024 at every
// size, 640 within 0.01 ms of it); not swept again since the chains (docs/performance.md).
inline constexpr uint32_t kDefaultSubsequenceBits = 768;

// The input for `jpeg` (parsed from `data` by parse_baseline_jpeg), cut into subsequences of
// `subsequence_bits`. Unsupported (stage "upsampling") for what the colour conversion does not
// take (chroma_upsampling's refusals); plan_parallel_decode's errors.
Result<OwnJpegInput> make_own_jpeg_input(std::span<const uint8_t> data,
                                         const codecs::jpeg::BaselineJpeg& jpeg,
                                         uint32_t subsequence_bits = kDefaultSubsequenceBits);

// The warnings for what the kernels found (entropy_damage_warnings; a missing EOI included).
std::vector<Error> damage_warnings(const codecs::jpeg::BaselineJpeg& jpeg, const DamageWords& words,
                                   const std::string& stage);

}  // namespace pixpath::cuda::own_jpeg
