// Dequantisation + inverse DCT of one 8x8 block, bit-exact to libjpeg-turbo's "islow" integer
// IDCT (the -dct int path TurboJPEG uses), in the two arithmetics libjpeg-turbo has:
//  - IdctArithmetic::C: jidctint.c (JSIMD_FORCENONE=1, or a build without SIMD): 64-bit JLONG
//    intermediates and the range-limit table of jdmaster.c prepare_range_limit_table, indexed
//    by the value & RANGE_MASK (1023): clamp(v + 128, 0, 255) for v in [-512, 511], and values
//    outside that window wrap around (v = 600 gives 0, v = -600 gives 255);
//  - IdctArithmetic::Simd: the x86-64 SIMD code (jidctint-avx2.asm / -sse2.asm, what Debian's
//    TurboJPEG runs): 16-bit lanes, so the dequantised coefficients and the sums of two of them
//    wrap at 16 bits, a block whose rows 1..7 are zero takes a 16-bit "DC only" column pass,
//    the pass results saturate to 16 bits and the samples saturate to 0..255.
// The two agree wherever no 16-bit value overflows and |v| <= 511, which covers pictures
// encoded from 8-bit samples; the tests check both against the installed library.
// Written for the CPU tests and the CUDA kernels alike (PIXPATH_HD, see
// jpeg_entropy_kernels.h). Threading: pure functions.
#pragma once

#include <cstdint>

#include "pixpath/codecs/jpeg_entropy_kernels.h"  // PIXPATH_HD

namespace pixpath::codecs::jpeg {

enum class IdctArithmetic : uint8_t { C, Simd };

// jidctint.c's post-IDCT range-limit table entry for the descaled value v (pixel - 128).
PIXPATH_HD uint8_t range_limit_c(int32_t v) {
  const int x = static_cast<int>(v & 1023);
  if (x < 128) return static_cast<uint8_t>(x + 128);
  if (x < 512) return 255;
  if (x < 896) return 0;
  return static_cast<uint8_t>(x - 896);
}

// jidctint.c. `coef`: 64 quantised coefficients, natural order; `quant`: the table, natural
// order; writes 8 rows of 8 samples at out, out + stride, ...
PIXPATH_HD void idct_islow_block_c(const int16_t* coef, const uint16_t* quant, uint8_t* out,
                                   uint32_t stride) {
  constexpr int kConstBits = 13, kPass1Bits = 2;
  constexpr int64_t k0_298631336 = 2446, k0_390180644 = 3196, k0_541196100 = 4433,
                    k0_765366865 = 6270, k0_899976223 = 7373, k1_175875602 = 9633,
                    k1_501321110 = 12299, k1_847759065 = 15137, k1_961570560 = 16069,
                    k2_053119869 = 16819, k2_562915447 = 20995, k3_072711026 = 25172;
  int32_t ws[64];
  // Pass 1: columns. The all-AC-zero shortcut of the C code gives the same values.
  for (int c = 0; c < 8; ++c) {
    // libjpeg-turbo keeps the quantisation table as 16-bit MULTIPLIER (short) in SIMD builds.
    auto dq = [&](int r) -> int64_t {
      return static_cast<int64_t>(coef[r * 8 + c]) *
             static_cast<int64_t>(static_cast<int16_t>(quant[r * 8 + c]));
    };
    int64_t z2 = dq(2), z3 = dq(6);
    int64_t z1 = (z2 + z3) * k0_541196100;
    int64_t tmp2 = z1 + z3 * -k1_847759065;
    int64_t tmp3 = z1 + z2 * k0_765366865;
    z2 = dq(0);
    z3 = dq(4);
    int64_t tmp0 = (z2 + z3) * (int64_t{1} << kConstBits);
    int64_t tmp1 = (z2 - z3) * (int64_t{1} << kConstBits);
    const int64_t tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3;
    const int64_t tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
    tmp3 = dq(1);
    tmp2 = dq(3);
    tmp1 = dq(5);
    tmp0 = dq(7);
    int64_t z4 = tmp1 + tmp3;
    z3 = tmp0 + tmp2;
    z2 = tmp1 + tmp2;
    z1 = tmp0 + tmp3;
    const int64_t z5 = (z3 + z4) * k1_175875602;
    tmp3 *= k1_501321110;
    tmp2 *= k3_072711026;
    tmp1 *= k2_053119869;
    tmp0 *= k0_298631336;
    z4 = z4 * -k0_390180644 + z5;
    z3 = z3 * -k1_961570560 + z5;
    z1 *= -k0_899976223;
    z2 *= -k2_562915447;
    tmp3 += z1 + z4;
    tmp2 += z2 + z3;
    tmp1 += z2 + z4;
    tmp0 += z1 + z3;
    constexpr int s1 = kConstBits - kPass1Bits;
    constexpr int64_t r1 = int64_t{1} << (s1 - 1);
    ws[0 * 8 + c] = static_cast<int32_t>((tmp10 + tmp3 + r1) >> s1);
    ws[7 * 8 + c] = static_cast<int32_t>((tmp10 - tmp3 + r1) >> s1);
    ws[1 * 8 + c] = static_cast<int32_t>((tmp11 + tmp2 + r1) >> s1);
    ws[6 * 8 + c] = static_cast<int32_t>((tmp11 - tmp2 + r1) >> s1);
    ws[2 * 8 + c] = static_cast<int32_t>((tmp12 + tmp1 + r1) >> s1);
    ws[5 * 8 + c] = static_cast<int32_t>((tmp12 - tmp1 + r1) >> s1);
    ws[3 * 8 + c] = static_cast<int32_t>((tmp13 + tmp0 + r1) >> s1);
    ws[4 * 8 + c] = static_cast<int32_t>((tmp13 - tmp0 + r1) >> s1);
  }
  // Pass 2: rows. The all-AC-zero shortcut gives the same values here too.
  constexpr int s2 = kConstBits + kPass1Bits + 3;
  constexpr int64_t r2 = int64_t{1} << (s2 - 1);
  for (int r = 0; r < 8; ++r) {
    const int32_t* w = ws + r * 8;
    int64_t z2 = w[2], z3 = w[6];
    int64_t z1 = (z2 + z3) * k0_541196100;
    int64_t tmp0 = (int64_t{w[0]} + w[4]) * (int64_t{1} << kConstBits);
    int64_t tmp3 = z1 + z2 * k0_765366865;
    int64_t tmp1 = (int64_t{w[0]} - w[4]) * (int64_t{1} << kConstBits);
    int64_t tmp2 = z1 + z3 * -k1_847759065;
    const int64_t tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3;
    const int64_t tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
    tmp3 = w[1];
    tmp2 = w[3];
    tmp1 = w[5];
    tmp0 = w[7];
    int64_t z4 = tmp1 + tmp3;
    z3 = tmp0 + tmp2;
    z2 = tmp1 + tmp2;
    z1 = tmp0 + tmp3;
    const int64_t z5 = (z3 + z4) * k1_175875602;
    tmp3 *= k1_501321110;
    tmp2 *= k3_072711026;
    tmp1 *= k2_053119869;
    tmp0 *= k0_298631336;
    z4 = z4 * -k0_390180644 + z5;
    z3 = z3 * -k1_961570560 + z5;
    z2 *= -k2_562915447;
    z1 *= -k0_899976223;
    tmp3 += z1 + z4;
    tmp2 += z2 + z3;
    tmp1 += z2 + z4;
    tmp0 += z1 + z3;
    uint8_t* o = out + static_cast<uint64_t>(r) * stride;
    o[0] = range_limit_c(static_cast<int32_t>((tmp10 + tmp3 + r2) >> s2));
    o[7] = range_limit_c(static_cast<int32_t>((tmp10 - tmp3 + r2) >> s2));
    o[1] = range_limit_c(static_cast<int32_t>((tmp11 + tmp2 + r2) >> s2));
    o[6] = range_limit_c(static_cast<int32_t>((tmp11 - tmp2 + r2) >> s2));
    o[2] = range_limit_c(static_cast<int32_t>((tmp12 + tmp1 + r2) >> s2));
    o[5] = range_limit_c(static_cast<int32_t>((tmp12 - tmp1 + r2) >> s2));
    o[3] = range_limit_c(static_cast<int32_t>((tmp13 + tmp0 + r2) >> s2));
    o[4] = range_limit_c(static_cast<int32_t>((tmp13 - tmp0 + r2) >> s2));
  }
}

namespace idct_simd {

PIXPATH_HD int16_t wrap16(int64_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v & 0xFFFF)); }
PIXPATH_HD int32_t wrap32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v & 0xFFFFFFFFu));
}
PIXPATH_HD int16_t sat16(int32_t v) {
  return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}
// pmaddwd: a * b + c * d of 16-bit values into 32 bits (wrapping).
PIXPATH_HD int32_t madd(int16_t a, int32_t b, int16_t c, int32_t d) {
  return wrap32(int64_t{a} * static_cast<int16_t>(b) + int64_t{c} * static_cast<int16_t>(d));
}

// One 1-D pass of the SIMD dodct macro over 8 values in[0..7] (16-bit), results descaled by
// `shift` and saturated to 16 bits.
PIXPATH_HD void dodct(const int16_t* in, int16_t* out, int shift) {
  constexpr int32_t F298 = 2446, F390 = 3196, F541 = 4433, F765 = 6270, F899 = 7373,
                    F1175 = 9633, F1501 = 12299, F1847 = 15137, F1961 = 16069, F2053 = 16819,
                    F2562 = 20995, F3072 = 25172;
  // Even part.
  const int32_t tmp3 = madd(in[2], F541 + F765, in[6], F541);
  const int32_t tmp2 = madd(in[2], F541, in[6], F541 - F1847);
  const int32_t tmp0 = int32_t{wrap16(int32_t{in[0]} + in[4])} * 8192;
  const int32_t tmp1 = int32_t{wrap16(int32_t{in[0]} + wrap16(-int32_t{in[4]}))} * 8192;
  const int32_t tmp10 = wrap32(int64_t{tmp0} + tmp3), tmp13 = wrap32(int64_t{tmp0} - tmp3);
  const int32_t tmp11 = wrap32(int64_t{tmp1} + tmp2), tmp12 = wrap32(int64_t{tmp1} - tmp2);
  // Odd part.
  const int16_t z3 = wrap16(int32_t{in[7]} + in[3]), z4 = wrap16(int32_t{in[5]} + in[1]);
  const int32_t z3p = madd(z3, F1175 - F1961, z4, F1175);
  const int32_t z4p = madd(z3, F1175, z4, F1175 - F390);
  const int32_t o0 = wrap32(int64_t{madd(in[7], F298 - F899, in[1], -F899)} + z3p);
  const int32_t o1 = wrap32(int64_t{madd(in[5], F2053 - F2562, in[3], -F2562)} + z4p);
  const int32_t o3 = wrap32(int64_t{madd(in[7], -F899, in[1], F1501 - F899)} + z4p);
  const int32_t o2 = wrap32(int64_t{madd(in[5], -F2562, in[3], F3072 - F2562)} + z3p);
  const int32_t round = int32_t{1} << (shift - 1);
  auto d = [&](int64_t v) { return sat16(wrap32(wrap32(v) + int64_t{round}) >> shift); };
  out[0] = d(int64_t{tmp10} + o3);
  out[7] = d(int64_t{tmp10} - o3);
  out[1] = d(int64_t{tmp11} + o2);
  out[6] = d(int64_t{tmp11} - o2);
  out[2] = d(int64_t{tmp12} + o1);
  out[5] = d(int64_t{tmp12} - o1);
  out[3] = d(int64_t{tmp13} + o0);
  out[4] = d(int64_t{tmp13} - o0);
}

}  // namespace idct_simd

// libjpeg-turbo's x86-64 SIMD islow IDCT (jidctint-avx2.asm), scalar.
PIXPATH_HD void idct_islow_block_simd(const int16_t* coef, const uint16_t* quant, uint8_t* out,
                                      uint32_t stride) {
  using namespace idct_simd;
  int16_t in[64];
  bool ac_zero = true;
  for (int k = 0; k < 64; ++k) {
    in[k] = wrap16(int32_t{coef[k]} * int32_t{static_cast<int16_t>(quant[k])});  // pmullw
    if (k >= 8 && coef[k] != 0) ac_zero = false;
  }
  int16_t ws[64];  // ws[r * 8 + c]
  if (ac_zero) {
    for (int c = 0; c < 8; ++c) {
      const int16_t v = wrap16(int32_t{in[c]} * 4);  // psllw PASS1_BITS
      for (int r = 0; r < 8; ++r) ws[r * 8 + c] = v;
    }
  } else {
    for (int c = 0; c < 8; ++c) {
      int16_t col[8], res[8];
      for (int r = 0; r < 8; ++r) col[r] = in[r * 8 + c];
      dodct(col, res, 11);
      for (int r = 0; r < 8; ++r) ws[r * 8 + c] = res[r];
    }
  }
  for (int r = 0; r < 8; ++r) {
    int16_t res[8];
    dodct(ws + r * 8, res, 18);
    uint8_t* o = out + static_cast<uint64_t>(r) * stride;
    for (int c = 0; c < 8; ++c) {
      const int v = res[c] < -128 ? -128 : (res[c] > 127 ? 127 : res[c]);  // packsswb
      o[c] = static_cast<uint8_t>(v + 128);
    }
  }
}

PIXPATH_HD void idct_islow_block(const int16_t* coef, const uint16_t* quant, uint8_t* out,
                                 uint32_t stride, IdctArithmetic arithmetic) {
  if (arithmetic == IdctArithmetic::Simd) {
    idct_islow_block_simd(coef, quant, out, stride);
  } else {
    idct_islow_block_c(coef, quant, out, stride);
  }
}

}  // namespace pixpath::codecs::jpeg
