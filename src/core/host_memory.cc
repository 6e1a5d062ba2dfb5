#include "internal/host_memory.h"

#include <sys/mman.h>

#include <cstdlib>

namespace pixpath::internal {

void* allocate_host_block(size_t bytes) {
  if (bytes < kHugeBlockFrom) return std::aligned_alloc(64, bytes);
  // aligned_alloc wants the size to be a multiple of the alignment.
  const size_t rounded = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (rounded < bytes) return nullptr;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
#ifdef MADV_HUGEPAGE
  if (p) (void)madvise(p, bytes & ~(kHugePageBytes - 1), MADV_HUGEPAGE);  // advice only
#endif
  return p;
}

}  // namespace pixpath::internal
