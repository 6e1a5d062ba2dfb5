#include "pixpath/codecs/jpeg_tables.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

namespace pixpath::codecs {
namespace {

constexpr const char* kSubject = "jpeg";
constexpr const char* kStage = "scan tables";

// Zigzag position -> natural (row-major) index (ITU T.81 figure A.6; libjpeg's
// jpeg_natural_order).
constexpr std::array<uint8_t, 64> kNaturalOrder = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

Error corrupt(const std::string& reason, ErrorCode code = ErrorCode::CorruptData) {
  return Error(code, kSubject, kStage, reason);
}

std::string at(size_t offset) { return " at byte " + std::to_string(offset); }

struct Slot {
  std::array<uint16_t, 64> quant{};
  bool defined = false;
  bool wide = false;
};

// DQT: one or more tables. Later definitions of a slot raise each coefficient to the largest.
Result<void> read_dqt(std::span<const uint8_t> seg, size_t offset, std::array<Slot, 4>& slots) {
  size_t i = 0;
  while (i < seg.size()) {
    const int pq = seg[i] >> 4, tq = seg[i] & 15;
    if (pq > 1 || tq > 3)
      return corrupt("DQT with precision " + std::to_string(pq) + ", table " + std::to_string(tq) +
                     at(offset));
    const size_t n = pq ? 128 : 64;
    if (seg.size() - i - 1 < n) return corrupt("DQT shorter than its table" + at(offset));
    Slot& s = slots[size_t(tq)];
    for (size_t k = 0; k < 64; ++k) {
      const uint16_t v = pq ? uint16_t((seg[i + 1 + 2 * k] << 8) | seg[i + 2 + 2 * k]) : seg[i + 1 + k];
      uint16_t& dst = s.quant[kNaturalOrder[k]];
      dst = s.defined ? std::max(dst, v) : v;
    }
    s.defined = true;
    s.wide |= pq == 1;
    i += 1 + n;
  }
  return ok();
}

Result<void> read_sof(std::span<const uint8_t> seg, size_t offset, uint8_t marker, JpegTables& t) {
  if (t.sof != 0) return corrupt("a second frame header" + at(offset));
  if (seg.size() < 6) return corrupt("frame header too short" + at(offset));
  t.sof = marker;
  t.precision = seg[0];
  t.height = (seg[1] << 8) | seg[2];
  t.width = (seg[3] << 8) | seg[4];
  const int n = seg[5];
  if (n < 1 || n > 4) return corrupt(std::to_string(n) + " components in the frame header" + at(offset));
  if (seg.size() < 6 + size_t(n) * 3) return corrupt("frame header shorter than its components" + at(offset));
  t.component_count = n;
  for (int c = 0; c < n; ++c) {
    auto& comp = t.components[size_t(c)];
    comp.id = seg[6 + 3 * c];
    comp.h_samp = seg[7 + 3 * c] >> 4;
    comp.v_samp = seg[7 + 3 * c] & 15;
    comp.table_slot = seg[8 + 3 * c];
    if (comp.table_slot > 3) return corrupt("component quantisation table " + std::to_string(comp.table_slot) + at(offset));
  }
  return ok();
}

// |C(u) C(v) / 4 cos((2x + 1) u pi / 16) cos((2y + 1) v pi / 16)|: the magnitude of coefficient
// (u, v)'s basis function at sample (x, y), [sample][coefficient], natural order both.
using BasisTable = std::array<std::array<double, 64>, 64>;
const BasisTable& basis_magnitudes() {
  static const BasisTable t = [] {
    BasisTable b{};
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x)
        for (int v = 0; v < 8; ++v)
          for (int u = 0; u < 8; ++u) {
            const double cu = u ? 1 : std::numbers::sqrt2 / 2, cv = v ? 1 : std::numbers::sqrt2 / 2;
            b[size_t(y * 8 + x)][size_t(v * 8 + u)] =
                std::abs(cu * cv / 4 * std::cos((2 * x + 1) * u * std::numbers::pi / 16) *
                         std::cos((2 * y + 1) * v * std::numbers::pi / 16));
          }
    return b;
  }();
  return t;
}

}  // namespace

std::string JpegTables::process() const {
  switch (sof) {
    case 0xC0: return "baseline";
    case 0xC1: return "extended";
    case 0xC2: return "progressive";
    case 0xC3: return "lossless";
    case 0xC9: return "arithmetic";
    case 0xCA: return "progressive arithmetic";
    case 0xCB: return "lossless arithmetic";
    default: return "SOF " + std::to_string(int(sof));
  }
}

Result<JpegTables> scan_jpeg_tables(std::span<const uint8_t> d) {
  if (d.size() < 4 || d[0] != 0xFF || d[1] != 0xD8)
    return corrupt("no SOI marker", d.size() < 4 ? ErrorCode::Truncated : ErrorCode::CorruptData);
  JpegTables t;
  std::array<Slot, 4> slots{};
  size_t i = 2;
  int markers = 0;
  bool in_scan = false;
  while (i < d.size()) {
    if (in_scan) {  // entropy-coded data: up to the next marker that is not a stuffed 0 or RSTn
      const auto* p = static_cast<const uint8_t*>(std::memchr(d.data() + i, 0xFF, d.size() - i));
      if (!p) break;
      i = size_t(p - d.data());
      if (i + 1 >= d.size()) break;
      const uint8_t m = d[i + 1];
      if (m == 0x00 || (m >= 0xD0 && m <= 0xD7) || m == 0xFF) {
        i += m == 0xFF ? 1 : 2;
        continue;
      }
      in_scan = false;
    }
    if (d[i] != 0xFF) return corrupt("expected a marker" + at(i));
    if (i + 1 >= d.size()) break;
    const uint8_t m = d[i + 1];
    if (m == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (++markers > kJpegScanMaxMarkers)
      return corrupt("more than " + std::to_string(kJpegScanMaxMarkers) + " markers", ErrorCode::LimitExceeded);
    if (m == 0xD9) {  // EOI
      t.has_eoi = true;
      break;
    }
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
      i += 2;
      continue;
    }
    if (i + 4 > d.size()) return corrupt("marker segment cut off" + at(i), ErrorCode::Truncated);
    const size_t len = (size_t{d[i + 2]} << 8) | d[i + 3];
    if (len < 2) return corrupt("marker length " + std::to_string(len) + at(i));
    if (i + 2 + len > d.size()) return corrupt("marker segment cut off" + at(i), ErrorCode::Truncated);
    const std::span<const uint8_t> seg = d.subspan(i + 4, len - 2);
    if (m == 0xDB) {
      PIXPATH_CHECK(read_dqt(seg, i, slots));
    } else if ((m >= 0xC0 && m <= 0xCF) && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      PIXPATH_CHECK(read_sof(seg, i, m, t));
    } else if (m == 0xEE && seg.size() >= 12 && std::equal(seg.begin(), seg.begin() + 5, "Adobe")) {
      t.adobe_transform = seg[11];
    } else if (m == 0xDA) {
      if (t.sof == 0) return corrupt("scan before the frame header" + at(i));
      t.has_sos = true;
      in_scan = true;
    }
    i += 2 + len;
  }
  if (t.sof == 0) return corrupt("no frame header", ErrorCode::Truncated);
  for (int c = 0; c < t.component_count; ++c) {
    auto& comp = t.components[size_t(c)];
    const Slot& s = slots[size_t(comp.table_slot)];
    if (!s.defined && t.sof != 0xC3 && t.sof != 0xCB)
      return corrupt("component " + std::to_string(comp.id) + " uses undefined quantisation table " +
                     std::to_string(comp.table_slot));
    comp.quant = s.quant;
    comp.quant_defined = s.defined;
    comp.quant_16bit = s.wide;
  }
  return t;
}

double idct_overshoot_bound(const std::array<uint16_t, 64>& q) {
  const BasisTable& basis = basis_magnitudes();
  double worst = 0;
  for (const auto& at_sample : basis) {
    double sum = 0;
    for (size_t k = 0; k < 64; ++k) sum += q[k] / 2.0 * at_sample[k];
    worst = std::max(worst, sum);
  }
  return worst;
}

}  // namespace pixpath::codecs
