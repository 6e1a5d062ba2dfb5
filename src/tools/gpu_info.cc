// The GPU section of `pixpath info`: loads the nvJPEG module (src/cuda, a shared library
// loaded at run time) and describes each CUDA device, or says why there is none.
#include "commands.h"
#include "pixpath/cuda/gpu_jpeg.h"

namespace pixpath::tools {

nlohmann::json gpu_info() {
  auto info = cuda::gpu_info_json();
  if (!info.ok()) return {{"available", false}, {"reason", info.error().message()}};
  auto j = nlohmann::json::parse(*info, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return {{"available", false}, {"reason", "the GPU module returned bad JSON"}};
  if (j.is_object() && !j.contains("available")) j["available"] = true;
  return j;
}

}  // namespace pixpath::tools
