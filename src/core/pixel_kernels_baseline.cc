// The row kernels for any x86-64 (SSE2) or other CPU.
#define KERNEL_NS baseline
#include "internal/pixel_kernels.h"

namespace pixpath::internal {
const KernelTable& baseline_kernels() { return baseline::table(); }
}  // namespace pixpath::internal
