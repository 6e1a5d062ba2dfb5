// The row kernels compiled for AVX2 (this file alone gets -mavx2; see CMakeLists.txt).
#define KERNEL_NS avx2
#include "internal/pixel_kernels.h"

namespace pixpath::internal {
const KernelTable& avx2_kernels() { return avx2::table(); }
}  // namespace pixpath::internal
