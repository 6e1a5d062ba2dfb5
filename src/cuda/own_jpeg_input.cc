#include "own_jpeg_input.h"

#include <algorithm>

namespace pixpath::cuda::own_jpeg {

using namespace codecs::jpeg;

Result<OwnJpegInput> make_own_jpeg_input(std::span<const uint8_t> data, const BaselineJpeg& jpeg,
                                         uint32_t subsequence_bits) {
  PIXPATH_TRY(const Upsampling up, chroma_upsampling(jpeg));
  // No coefficient limit here beyond the parser's size limits: device memory is the limit.
  ParallelDecodeOptions o;
  o.subsequence_bits = subsequence_bits;
  o.max_coefficient_bytes = UINT64_MAX;
  PIXPATH_TRY(ParallelDecodePlan plan, plan_parallel_decode(data, jpeg, o));
  OwnJpegInput in;
  in.tables = std::make_unique<ScanTables>(build_scan_tables(jpeg));
  in.plan = std::move(plan);
  in.width = jpeg.width;
  in.height = jpeg.height;
  in.components = jpeg.component_count;
  for (int c = 0; c < jpeg.component_count; ++c) {
    const FrameComponent& fc = jpeg.components[size_t(c)];
    const auto& q = jpeg.quant[fc.quant].values;
    std::copy(q.begin(), q.end(), in.quant.begin() + 64 * c);
    in.sample_width[size_t(c)] = fc.sample_width;
    in.sample_height[size_t(c)] = fc.sample_height;
  }
  in.upsampling = up;
  in.has_eoi = jpeg.has_eoi;
  return in;
}

std::vector<Error> damage_warnings(const BaselineJpeg& jpeg, const DamageWords& words,
                                   const std::string& stage) {
  EntropyDamageSummary d;
  for (size_t k = 0; k < 4; ++k) {
    d.first_segment[k] = words.first_segment[k];
    d.segments[k] = words.segments[k];
  }
  d.extraneous_bytes = words.extraneous_bytes;
  d.no_eoi = !jpeg.has_eoi;
  return entropy_damage_warnings(jpeg, d, stage);
}

}  // namespace pixpath::cuda::own_jpeg
