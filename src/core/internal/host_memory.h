// Host memory for picture storages (PictureStorage::allocate_host, StoragePool blocks).
#pragma once

#include <cstddef>

namespace pixpath::internal {

// Blocks of this size and up are 2 MiB aligned and advised for transparent huge pages.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugeBlockFrom = size_t{4} << 20;

// `bytes` (a multiple of 64, > 0) of uninitialised host memory, at least 64-byte aligned;
// nullptr when out of memory. Free with std::free.
//
// Blocks of 4 MiB and more (a 1080p or 4K picture) start on a 2 MiB boundary and their whole
// 2 MiB pages are advised MADV_HUGEPAGE, as numpy does for its arrays: where the kernel's
// transparent huge pages are in "madvise" mode (Debian's and Ubuntu's default) they are then
// mapped with 2 MiB pages instead of 4 KiB ones. A decoder writing a 4K RGB picture (25 MB)
// into 4 KiB pages takes ~6,000 TLB misses per picture; measured on a 2-core EPYC VM, TurboJPEG
// decoding a 4K screen JPEG into such memory took 4-5% longer than into numpy's arrays
// (docs/python-peers.md). First touch is cheaper too: 12 faults instead of ~6,000. The advice
// is best effort (kernels without THP ignore it). The tail beyond the last whole 2 MiB page
// stays in 4 KiB pages, so a picture costs no more physical memory than its bytes.
void* allocate_host_block(size_t bytes);

}  // namespace pixpath::internal
