// Row kernels for the pixel operations. This header is compiled twice, once per instruction
// set (pixel_kernels_baseline.cc, pixel_kernels_avx2.cc), into different namespaces; pixel_ops.cc
// picks one at run time. Every kernel is a template over compile-time formats so the compiler
// sees constant byte positions and vectorises the loop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "internal/kernel_table.h"
#include "pixpath/core/pixel_format.h"

namespace pixpath::internal {

struct Layout {
  int bpp, r, g, b, a, x;
};
constexpr Layout layout_of(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB: return {3, 0, 1, 2, -1, -1};
    case PixelFormat::BGR: return {3, 2, 1, 0, -1, -1};
    case PixelFormat::RGBX: return {4, 0, 1, 2, -1, 3};
    case PixelFormat::BGRX: return {4, 2, 1, 0, -1, 3};
    case PixelFormat::XRGB: return {4, 1, 2, 3, -1, 0};
    case PixelFormat::XBGR: return {4, 3, 2, 1, -1, 0};
    case PixelFormat::RGBA: return {4, 0, 1, 2, 3, -1};
    case PixelFormat::BGRA: return {4, 2, 1, 0, 3, -1};
    case PixelFormat::ARGB: return {4, 1, 2, 3, 0, -1};
    case PixelFormat::ABGR: return {4, 3, 2, 1, 0, -1};
    case PixelFormat::GRAY8: return {1, 0, 0, 0, -1, -1};
    default: return {0, -1, -1, -1, -1, -1};
  }
}

// KERNEL_NS is defined by the including translation unit.
namespace KERNEL_NS {

#if defined(__AVX2__)
// 3-byte -> 4-byte pixels, 8 per step with byte shuffles (the compiler does not vectorise the
// byte loop below: 7 GB/s against 30+ for memcpy). Returns the pixels done; the caller does
// the rest. Loads stay inside the row: the last step reads bytes [3i + 12, 3i + 28) <= 3n.
template <PixelFormat S, PixelFormat D>
int convert_3to4_avx2(const uint8_t* s, uint8_t* d, int n) {
  static_assert(layout_of(S).bpp == 3 && layout_of(D).bpp == 4);
  constexpr auto masks = [] {
    constexpr Layout ls = layout_of(S), ld = layout_of(D);
    std::array<std::array<int8_t, 32>, 2> m{};  // [0] shuffle, [1] bytes forced to 0xFF
    for (int lane = 0; lane < 2; ++lane) {
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) {
          const int at = lane * 16 + k * 4 + j;
          int src = -1;
          if (j == ld.r) src = ls.r;
          if (j == ld.g) src = ls.g;
          if (j == ld.b) src = ls.b;
          m[0][at] = static_cast<int8_t>(src >= 0 ? k * 3 + src : -128);
          m[1][at] = static_cast<int8_t>(src >= 0 ? 0 : -1);
        }
      }
    }
    return m;
  }();
  const __m256i shuffle = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(masks[0].data()));
  const __m256i fill = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(masks[1].data()));
  int i = 0;
  for (; i + 10 <= n; i += 8) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * i));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * i + 12));
    const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 4 * i),
                        _mm256_or_si256(_mm256_shuffle_epi8(v, shuffle), fill));
  }
  return i;
}
#endif

template <PixelFormat S, PixelFormat D>
void convert_row(const uint8_t* __restrict s, uint8_t* __restrict d, int n) {
  constexpr Layout ls = layout_of(S), ld = layout_of(D);
  if constexpr (ls.bpp == 4 && ld.bpp == 4) {
    // Whole-pixel arithmetic on 32-bit words: shifts and masks vectorise on every x86.
    for (int i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, s + 4 * i, 4);
      uint32_t o = ((v >> (8 * ls.r)) & 0xFF) << (8 * ld.r) |
                   ((v >> (8 * ls.g)) & 0xFF) << (8 * ld.g) |
                   ((v >> (8 * ls.b)) & 0xFF) << (8 * ld.b);
      if constexpr (ld.a >= 0) {
        if constexpr (ls.a >= 0) {
          o |= ((v >> (8 * ls.a)) & 0xFF) << (8 * ld.a);
        } else {
          o |= uint32_t{0xFF} << (8 * ld.a);
        }
      }
      if constexpr (ld.x >= 0) o |= uint32_t{0xFF} << (8 * ld.x);
      std::memcpy(d + 4 * i, &o, 4);
    }
  } else {
    int i = 0;
#if defined(__AVX2__)
    if constexpr (ls.bpp == 3 && ld.bpp == 4) i = convert_3to4_avx2<S, D>(s, d, n);
#endif
    for (; i < n; ++i) {
      const uint8_t* sp = s + ls.bpp * i;
      uint8_t* dp = d + ld.bpp * i;
      if constexpr (ld.bpp == 1) {
        dp[0] = sp[0];  // GRAY8 -> GRAY8 only
      } else {
        dp[ld.r] = sp[ls.r];
        dp[ld.g] = sp[ls.g];
        dp[ld.b] = sp[ls.b];
        if constexpr (ld.a >= 0) dp[ld.a] = ls.a >= 0 ? sp[ls.a < 0 ? 0 : ls.a] : 0xFF;
        if constexpr (ld.x >= 0) dp[ld.x] = 0xFF;
      }
    }
  }
}

template <PixelFormat S, PixelFormat D>
void merge_row(const uint8_t* __restrict s, const uint8_t* __restrict a, uint8_t* __restrict d,
               int n) {
  constexpr Layout ls = layout_of(S), ld = layout_of(D);
  if constexpr (ls.bpp == 4) {
    for (int i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, s + 4 * i, 4);
      const uint32_t o = ((v >> (8 * ls.r)) & 0xFF) << (8 * ld.r) |
                         ((v >> (8 * ls.g)) & 0xFF) << (8 * ld.g) |
                         ((v >> (8 * ls.b)) & 0xFF) << (8 * ld.b) | uint32_t{a[i]} << (8 * ld.a);
      std::memcpy(d + 4 * i, &o, 4);
    }
  } else {
    for (int i = 0; i < n; ++i) {
      const uint8_t* sp = s + ls.bpp * i;
      uint8_t* dp = d + 4 * i;
      dp[ld.r] = sp[ls.r];
      dp[ld.g] = sp[ls.g];
      dp[ld.b] = sp[ls.b];
      dp[ld.a] = a[i];
    }
  }
}

inline void xor_row(uint8_t* __restrict d, const uint8_t* __restrict s, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] ^= s[i];
}

template <size_t... I>
constexpr KernelTable make_table(std::index_sequence<I...>) {
  KernelTable t;
  constexpr int N = kConvertibleFormats;
  // Allowed: anything among packed RGB + GRAY8 as source; GRAY8 destination only from GRAY8.
  ((t.convert[I] = (I % N == 10 && I / N != 10)
                       ? nullptr
                       : &convert_row<static_cast<PixelFormat>(I / N), static_cast<PixelFormat>(I % N)>),
   ...);
  return t;
}

template <size_t... I>
constexpr void fill_merge(KernelTable& t, std::index_sequence<I...>) {
  // I / 4: rgb source (RGB..ABGR, skipping GRAY8), I % 4: RGBA, BGRA, ARGB, ABGR.
  ((t.merge[I] = (I / 4 >= 10) ? nullptr
                               : &merge_row<static_cast<PixelFormat>(I / 4),
                                            static_cast<PixelFormat>(
                                                static_cast<int>(PixelFormat::RGBA) + I % 4)>),
   ...);
}

inline const KernelTable& table() {
  static const KernelTable t = [] {
    KernelTable k = make_table(std::make_index_sequence<kConvertibleFormats * kConvertibleFormats>());
    fill_merge(k, std::make_index_sequence<kConvertibleFormats * 4>());
    k.xor_row = &xor_row;
    return k;
  }();
  return t;
}

}  // namespace KERNEL_NS
}  // namespace pixpath::internal
