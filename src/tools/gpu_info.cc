// The GPU section of `pixpath info`. The nvJPEG module (src/cuda) replaces the body when it
// lands: report the device, driver and whether the module loaded. Until then: not built.
#include "commands.h"

namespace pixpath::tools {

nlohmann::json gpu_info() {
  return {{"available", false}, {"reason", "not built/not available"}};
}

}  // namespace pixpath::tools
