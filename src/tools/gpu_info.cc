// The GPU section of `pixpath info`: loads the nvJPEG module (src/cuda, a shared library
// loaded at run time) and describes each CUDA device, or says why there is none.
#include "commands.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::tools {

nlohmann::json gpu_info() {
  auto info = cuda::gpu_info_json();
  if (!info.ok()) return {{"available", false}, {"reason", info.error().message()}};
  auto j = nlohmann::json::parse(*info, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return {{"available", false}, {"reason", "the GPU module returned bad JSON"}};
  if (j.is_object() && !j.contains("available")) j["available"] = true;
  // The paint engine's batch limit with --gpu-batch 0 (paint_engine.h, gpu_max_batch).
  if (j.is_object())
    j["paint_gpu_batch_auto"] = "one per hardware JPEG engine plus one on the own decoder's route, " +
                                std::to_string(paint::kGpuBatchPerEngine) +
                                " per engine on nvJPEG's (8 without engines)";
  return j;
}

}  // namespace pixpath::tools
