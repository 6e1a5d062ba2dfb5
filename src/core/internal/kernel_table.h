// The table of row kernels behind the pixel operations, and how pixel_ops.cc picks one.
// Two tables exist: baseline (any CPU) and, on x86-64, AVX2 (used when the CPU has it). Tests
// run the public operations on each table through ScopedKernelTableForTesting.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pixpath::internal {

using ConvertRowFn = void (*)(const uint8_t* src, uint8_t* dst, int pixels);
using MergeRowFn = void (*)(const uint8_t* rgb, const uint8_t* alpha, uint8_t* dst, int pixels);
using XorRowFn = void (*)(uint8_t* dst, const uint8_t* src, size_t bytes);

inline constexpr int kConvertibleFormats = 11;  // RGB .. ABGR, GRAY8

struct KernelTable {
  // [src][dst] over the first kConvertibleFormats formats; null where not allowed.
  std::array<ConvertRowFn, kConvertibleFormats * kConvertibleFormats> convert{};
  // [rgb src][dst - RGBA]: dst one of RGBA, BGRA, ARGB, ABGR.
  std::array<MergeRowFn, kConvertibleFormats * 4> merge{};
  XorRowFn xor_row = nullptr;
};

const KernelTable& baseline_kernels();
// The AVX2 table, or null when it is not built in or this CPU lacks AVX2.
const KernelTable* avx2_kernels_if_supported();
// The table the pixel operations use now: the override (tests), else the best for this CPU.
const KernelTable& active_kernels();

// Makes the pixel operations use `table` while alive (tests and benchmarks only; not for use
// while other threads run pixel operations). Does not nest.
class ScopedKernelTableForTesting {
 public:
  explicit ScopedKernelTableForTesting(const KernelTable& table);
  ~ScopedKernelTableForTesting();
  ScopedKernelTableForTesting(const ScopedKernelTableForTesting&) = delete;
  ScopedKernelTableForTesting& operator=(const ScopedKernelTableForTesting&) = delete;
};

}  // namespace pixpath::internal
