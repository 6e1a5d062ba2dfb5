#include "own_jpeg_decode.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include "own_jpeg_errors.h"
#include "own_jpeg_kernels.h"
#include "pixpath/codecs/jpeg_parallel_decode.h"

namespace pixpath::cuda::own_jpeg {

using namespace codecs::jpeg;

Result<PlanesOut> decode_to_planes(std::span<const uint8_t> data, const BaselineJpeg& jpeg,
                                   const Options& options, DeviceBuffers& buffers,
                                   cudaStream_t stream, Report* report) {
  if (options.subsequence_bits < 8 || jpeg.segments.empty() || jpeg.blocks_per_mcu < 1) {
    return gpu_error(ErrorCode::InvalidArgument, "bad options or an unparsed picture");
  }
  const auto host_start = std::chrono::steady_clock::now();
  // Step 1, shared with the CPU reference (its tests check these arrays). The tests decode
  // pictures the colour conversion does not take (4:1:1, ...): no upsampling check here.
  ParallelDecodeOptions plan_options;
  plan_options.subsequence_bits = options.subsequence_bits;
  plan_options.max_coefficient_bytes = UINT64_MAX;
  auto plan = plan_parallel_decode(data, jpeg, plan_options);
  if (!plan.ok()) return gpu_error(plan.error().code(), plan.error().reason());
  OwnJpegInput in;
  in.tables = std::make_unique<ScanTables>(build_scan_tables(jpeg));
  in.plan = std::move(plan).value();
  in.width = jpeg.width;
  in.height = jpeg.height;
  in.components = jpeg.component_count;
  for (int c = 0; c < jpeg.component_count; ++c) {
    const auto& q = jpeg.quant[jpeg.components[size_t(c)].quant].values;
    std::copy(q.begin(), q.end(), in.quant.begin() + 64 * c);
  }
  const float prep_ms =
      std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - host_start).count();
  DamageWords words;
  PIXPATH_TRY(PlanesOut out, decode_input_to_planes(in, options, buffers, stream, report, &words));
  if (report) {
    report->phase_ms[kPhaseHost] += prep_ms;
    report->wall_ms += prep_ms;
  }
  out.warnings = damage_warnings(jpeg, words, "own gpu decode");
  return out;
}

Result<void> planes_to_rgba(const BaselineJpeg& jpeg, const PlanesOut& planes, uint8_t* rgba,
                            size_t rgba_pitch, cudaStream_t stream) {
  PIXPATH_TRY(const Upsampling up, chroma_upsampling(jpeg));
  auto plane = [&](int c) {
    const FrameComponent& fc = jpeg.components[size_t(c)];
    return SamplePlane{planes.plane[c], uint32_t(planes.pitch[c]), fc.sample_width,
                       fc.sample_height};
  };
  const bool gray = jpeg.component_count == 1;
  OWN_CUDA_TRY("convert", launch_rgba(plane(0), gray ? SamplePlane{} : plane(1),
                                      gray ? SamplePlane{} : plane(2), up, jpeg.width, jpeg.height,
                                      rgba, rgba_pitch, stream));
  return ok();
}

}  // namespace pixpath::cuda::own_jpeg
