#include "pixpath/codecs/jpeg_baseline_parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace pixpath::codecs::jpeg {
namespace {

Error parse_error(ErrorCode code, std::string_view where, std::string reason) {
  return Error(code, "jpeg", fmt::format("baseline parse {}", where), std::move(reason));
}

// Names of the frame kinds this decoder refuses (SOF1..SOF15 except the DHT/JPG/DAC codes).
const char* refused_frame(uint8_t m) {
  switch (m) {
    case 0xC1: return "extended sequential (SOF1)";
    case 0xC2: return "progressive (SOF2)";
    case 0xC3: return "lossless (SOF3)";
    case 0xC5: return "differential sequential (SOF5, hierarchical)";
    case 0xC6: return "differential progressive (SOF6, hierarchical)";
    case 0xC7: return "differential lossless (SOF7, hierarchical)";
    case 0xC9: return "arithmetic-coded sequential (SOF9)";
    case 0xCA: return "arithmetic-coded progressive (SOF10)";
    case 0xCB: return "arithmetic-coded lossless (SOF11)";
    case 0xCD: return "arithmetic-coded differential sequential (SOF13)";
    case 0xCE: return "arithmetic-coded differential progressive (SOF14)";
    case 0xCF: return "arithmetic-coded differential lossless (SOF15)";
    default: return nullptr;
  }
}

uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

class Parser {
 public:
  Parser(std::span<const uint8_t> data, const BaselineLimits& limits, ParseDepth depth)
      : d_(data), limits_(limits), depth_(depth) {}

  Result<BaselineJpeg> run();

 private:
  // The payload of a marker segment at pos_ (just after the marker byte): [begin, end).
  Result<std::span<const uint8_t>> segment(std::string_view where);
  Result<void> on_app(uint8_t marker, std::span<const uint8_t> p);
  Result<void> on_dqt(std::span<const uint8_t> p);
  Result<void> on_dht(std::span<const uint8_t> p);
  Result<void> on_dri(std::span<const uint8_t> p);
  Result<void> on_sof(std::span<const uint8_t> p);
  Result<void> on_sos(std::span<const uint8_t> p);
  Result<void> check_huffman(const HuffmanSpec& spec, bool dc, int index);
  Result<void> scan_entropy_data();
  Result<void> after_scan();
  // Reads the next marker code at pos_ (skipping 0xFF fill bytes); pos_ ends after it.
  Result<uint8_t> next_marker(std::string_view where);
  void infer_color();

  std::span<const uint8_t> d_;
  BaselineLimits limits_;
  ParseDepth depth_;
  size_t pos_ = 0;
  BaselineJpeg j_;
  bool have_frame_ = false;
};

Result<std::span<const uint8_t>> Parser::segment(std::string_view where) {
  if (pos_ + 2 > d_.size()) {
    return parse_error(ErrorCode::Truncated, where,
                       fmt::format("data ends at byte {} inside the marker's length", d_.size()));
  }
  const size_t len = (size_t{d_[pos_]} << 8) | d_[pos_ + 1];
  if (len < 2) {
    return parse_error(ErrorCode::CorruptData, where,
                       fmt::format("segment length {} at byte {} (at least 2)", len, pos_));
  }
  if (pos_ + len > d_.size()) {
    return parse_error(ErrorCode::Truncated, where,
                       fmt::format("segment of {} bytes at byte {} runs past the end ({} bytes)",
                                   len, pos_, d_.size()));
  }
  std::span<const uint8_t> p = d_.subspan(pos_ + 2, len - 2);
  pos_ += len;
  return p;
}

Result<uint8_t> Parser::next_marker(std::string_view where) {
  if (pos_ >= d_.size() || d_[pos_] != 0xFF) {
    if (pos_ >= d_.size()) {
      return parse_error(ErrorCode::Truncated, where,
                         fmt::format("data ends at byte {} where a marker was expected", pos_));
    }
    return parse_error(ErrorCode::CorruptData, where,
                       fmt::format("byte {} is 0x{:02X} where a marker (0xFF) was expected", pos_,
                                   d_[pos_]));
  }
  while (pos_ < d_.size() && d_[pos_] == 0xFF) ++pos_;  // the marker's 0xFF and fill bytes
  if (pos_ >= d_.size()) {
    return parse_error(ErrorCode::Truncated, where, "data ends inside a marker");
  }
  const uint8_t m = d_[pos_++];
  if (m == 0x00) {
    return parse_error(ErrorCode::CorruptData, where,
                       fmt::format("stuffed 0xFF 0x00 at byte {} outside a scan", pos_ - 2));
  }
  return m;
}

Result<void> Parser::on_app(uint8_t marker, std::span<const uint8_t> p) {
  if (marker == 0xE0 && p.size() >= 14 && std::memcmp(p.data(), "JFIF\0", 5) == 0) {
    j_.jfif = true;
  }
  if (marker == 0xEE && p.size() >= 12 && std::memcmp(p.data(), "Adobe", 5) == 0) {
    j_.adobe = true;
    j_.adobe_transform = p[11];
  }
  return ok();
}

Result<void> Parser::on_dqt(std::span<const uint8_t> p) {
  size_t i = 0;
  while (i < p.size()) {
    const int pq = p[i] >> 4, tq = p[i] & 15;
    ++i;
    if (pq > 1 || tq > 3) {
      return parse_error(ErrorCode::CorruptData, "DQT",
                         fmt::format("table {} with precision code {} (0..3 and 0..1)", tq, pq));
    }
    const size_t need = pq ? 128 : 64;
    if (i + need > p.size()) {
      return parse_error(ErrorCode::CorruptData, "DQT",
                         fmt::format("table {} needs {} bytes, the segment has {} left", tq, need,
                                     p.size() - i));
    }
    QuantTable& q = j_.quant[size_t(tq)];
    q.defined = true;
    q.precision = uint8_t(pq);
    for (size_t k = 0; k < 64; ++k) {
      const uint16_t v = pq ? uint16_t((p[i + 2 * k] << 8) | p[i + 2 * k + 1]) : p[i + k];
      q.values[kZigzagToNatural[k]] = v;
    }
    i += need;
  }
  return ok();
}

Result<void> Parser::on_dht(std::span<const uint8_t> p) {
  size_t i = 0;
  while (i < p.size()) {
    const int tc = p[i] >> 4, th = p[i] & 15;
    ++i;
    if (tc > 1 || th > 3) {
      return parse_error(ErrorCode::CorruptData, "DHT",
                         fmt::format("table class {} index {} (class 0..1, index 0..3)", tc, th));
    }
    if (i + 16 > p.size()) {
      return parse_error(ErrorCode::CorruptData, "DHT", "segment ends inside the code counts");
    }
    HuffmanSpec s;
    int total = 0;
    for (int l = 1; l <= 16; ++l) {
      s.counts[size_t(l)] = p[i + size_t(l) - 1];
      total += s.counts[size_t(l)];
    }
    i += 16;
    if (total > 256 || i + size_t(total) > p.size()) {
      return parse_error(ErrorCode::CorruptData, "DHT",
                         fmt::format("{} table {}: {} symbols, {} bytes left in the segment",
                                     tc ? "AC" : "DC", th, total, p.size() - i));
    }
    std::memcpy(s.symbols.data(), p.data() + i, size_t(total));
    s.symbol_count = total;
    s.defined = true;
    i += size_t(total);
    (tc ? j_.ac : j_.dc)[size_t(th)] = s;
  }
  return ok();
}

Result<void> Parser::on_dri(std::span<const uint8_t> p) {
  if (p.size() != 2) {
    return parse_error(ErrorCode::CorruptData, "DRI",
                       fmt::format("segment of {} payload bytes (2 expected)", p.size()));
  }
  j_.restart_interval = (p[0] << 8) | p[1];
  return ok();
}

Result<void> Parser::on_sof(std::span<const uint8_t> p) {
  if (have_frame_) return parse_error(ErrorCode::CorruptData, "SOF", "a second frame header");
  if (p.size() < 6) return parse_error(ErrorCode::CorruptData, "SOF", "segment too short");
  const int precision = p[0];
  const int height = (p[1] << 8) | p[2], width = (p[3] << 8) | p[4], nf = p[5];
  if (precision != 8) {
    return parse_error(ErrorCode::Unsupported, "SOF",
                       fmt::format("{}-bit samples (this decoder takes 8-bit)", precision));
  }
  if (height == 0) {
    return parse_error(ErrorCode::Unsupported, "SOF",
                       "height 0 (set later by a DNL marker, not taken by this decoder)");
  }
  if (width == 0) return parse_error(ErrorCode::CorruptData, "SOF", "width 0");
  if (nf < 1 || nf > kMaxComponents) {
    return parse_error(nf < 1 ? ErrorCode::CorruptData : ErrorCode::Unsupported, "SOF",
                       fmt::format("{} components (1..{})", nf, kMaxComponents));
  }
  if (p.size() != 6 + 3 * size_t(nf)) {
    return parse_error(ErrorCode::CorruptData, "SOF",
                       fmt::format("segment of {} payload bytes for {} components ({} expected)",
                                   p.size(), nf, 6 + 3 * nf));
  }
  if (width > limits_.max_width || height > limits_.max_height ||
      uint64_t(width) * uint64_t(height) > limits_.max_pixels) {
    return parse_error(ErrorCode::LimitExceeded, "SOF",
                       fmt::format("{}x{} is over the limits ({}x{}, {} pixels)", width, height,
                                   limits_.max_width, limits_.max_height, limits_.max_pixels));
  }
  j_.width = width;
  j_.height = height;
  j_.component_count = nf;
  for (int c = 0; c < nf; ++c) {
    FrameComponent& fc = j_.components[size_t(c)];
    fc.id = p[6 + 3 * size_t(c)];
    fc.h = uint8_t(p[7 + 3 * size_t(c)] >> 4);
    fc.v = uint8_t(p[7 + 3 * size_t(c)] & 15);
    fc.quant = p[8 + 3 * size_t(c)];
    if (fc.h < 1 || fc.h > 4 || fc.v < 1 || fc.v > 4) {
      return parse_error(ErrorCode::CorruptData, "SOF",
                         fmt::format("component {} has sampling factors {}x{} (1..4)", fc.id,
                                     fc.h, fc.v));
    }
    if (fc.quant > 3) {
      return parse_error(ErrorCode::CorruptData, "SOF",
                         fmt::format("component {} uses quantisation table {} (0..3)", fc.id,
                                     fc.quant));
    }
    for (int o = 0; o < c; ++o) {
      if (j_.components[size_t(o)].id == fc.id) {
        return parse_error(ErrorCode::CorruptData, "SOF",
                           fmt::format("component id {} appears twice", fc.id));
      }
    }
    j_.hmax = std::max(j_.hmax, int(fc.h));
    j_.vmax = std::max(j_.vmax, int(fc.v));
  }
  for (int c = 0; c < nf; ++c) {
    FrameComponent& fc = j_.components[size_t(c)];
    fc.sample_width = int(ceil_div(uint64_t(width) * fc.h, uint64_t(j_.hmax)));
    fc.sample_height = int(ceil_div(uint64_t(height) * fc.v, uint64_t(j_.vmax)));
    fc.width_in_blocks = int(ceil_div(uint64_t(width) * fc.h, uint64_t(j_.hmax) * 8));
    fc.height_in_blocks = int(ceil_div(uint64_t(height) * fc.v, uint64_t(j_.vmax) * 8));
  }
  have_frame_ = true;
  return ok();
}

Result<void> Parser::check_huffman(const HuffmanSpec& spec, bool dc, int index) {
  const char* kind = dc ? "DC" : "AC";
  if (!spec.defined) {
    // libjpeg-turbo substitutes the standard tables (Motion-JPEG); the other routes do that.
    return parse_error(ErrorCode::Unsupported, "SOS",
                       fmt::format("{} Huffman table {} is not defined (Motion-JPEG default "
                                   "tables are left to the other decoders)", kind, index));
  }
  // jpeg_make_d_derived_tbl's checks: the canonical codes fit their lengths.
  uint32_t code = 0;
  for (int l = 1; l <= 16; ++l) {
    code += spec.counts[size_t(l)];
    if (code > (1u << l)) {
      return parse_error(ErrorCode::CorruptData, "SOS",
                         fmt::format("{} Huffman table {} has more codes of length {} than fit",
                                     kind, index, l));
    }
    code <<= 1;
  }
  if (dc) {
    for (int i = 0; i < spec.symbol_count; ++i) {
      if (spec.symbols[size_t(i)] > 15) {
        return parse_error(ErrorCode::CorruptData, "SOS",
                           fmt::format("DC Huffman table {} holds symbol {} (0..15)", index,
                                       spec.symbols[size_t(i)]));
      }
    }
  }
  return ok();
}

Result<void> Parser::on_sos(std::span<const uint8_t> p) {
  if (!have_frame_) return parse_error(ErrorCode::CorruptData, "SOS", "scan before the frame header");
  if (p.empty()) return parse_error(ErrorCode::CorruptData, "SOS", "empty scan header");
  const int ns = p[0];
  if (ns < 1 || ns > kMaxComponents || p.size() != 4 + 2 * size_t(ns)) {
    return parse_error(ErrorCode::CorruptData, "SOS",
                       fmt::format("{} components in a header of {} bytes", ns, p.size()));
  }
  if (ns != j_.component_count) {
    return parse_error(ErrorCode::Unsupported, "SOS",
                       fmt::format("a scan of {} of the frame's {} components (several scans "
                                   "are not taken by this decoder)", ns, j_.component_count));
  }
  std::array<int, kMaxComponents> order{};  // scan position -> frame component
  for (int s = 0; s < ns; ++s) {
    const uint8_t id = p[1 + 2 * size_t(s)], tables = p[2 + 2 * size_t(s)];
    int found = -1;
    for (int c = 0; c < j_.component_count; ++c) {
      if (j_.components[size_t(c)].id == id) found = c;
    }
    if (found < 0) {
      return parse_error(ErrorCode::CorruptData, "SOS",
                         fmt::format("component id {} is not in the frame", id));
    }
    for (int o = 0; o < s; ++o) {
      if (order[size_t(o)] == found) {
        return parse_error(ErrorCode::CorruptData, "SOS",
                           fmt::format("component id {} appears twice", id));
      }
    }
    order[size_t(s)] = found;
    FrameComponent& fc = j_.components[size_t(found)];
    fc.dc_table = uint8_t(tables >> 4);
    fc.ac_table = uint8_t(tables & 15);
    if (fc.dc_table > 3 || fc.ac_table > 3) {
      return parse_error(ErrorCode::CorruptData, "SOS",
                         fmt::format("component id {} uses Huffman tables DC {} AC {} (0..3)", id,
                                     fc.dc_table, fc.ac_table));
    }
    PIXPATH_CHECK(check_huffman(j_.dc[fc.dc_table], true, fc.dc_table));
    PIXPATH_CHECK(check_huffman(j_.ac[fc.ac_table], false, fc.ac_table));
    if (!j_.quant[fc.quant].defined) {
      return parse_error(ErrorCode::CorruptData, "SOS",
                         fmt::format("component id {} uses quantisation table {}, never defined",
                                     id, fc.quant));
    }
  }
  const size_t tail = 1 + 2 * size_t(ns);
  const int ss = p[tail], se = p[tail + 1], ah = p[tail + 2] >> 4, al = p[tail + 2] & 15;
  if (ss != 0 || se != 63 || ah != 0 || al != 0) {
    return parse_error(ErrorCode::Unsupported, "SOS",
                       fmt::format("spectral selection {}..{} / approximation {},{} in a "
                                   "sequential scan", ss, se, ah, al));
  }
  // MCU geometry (libjpeg's per_scan_setup).
  j_.interleaved = ns > 1;
  if (j_.interleaved) {
    j_.mcus_x = int(ceil_div(uint64_t(j_.width), uint64_t(j_.hmax) * 8));
    j_.mcus_y = int(ceil_div(uint64_t(j_.height), uint64_t(j_.vmax) * 8));
    int b = 0;
    for (int s = 0; s < ns; ++s) {
      FrameComponent& fc = j_.components[size_t(order[size_t(s)])];
      fc.stored_blocks_w = j_.mcus_x * fc.h;
      fc.stored_blocks_h = j_.mcus_y * fc.v;
      for (int y = 0; y < fc.v; ++y) {
        for (int x = 0; x < fc.h; ++x) {
          if (b >= kMaxBlocksInMcu) {
            return parse_error(ErrorCode::CorruptData, "SOS",
                               fmt::format("more than {} blocks in one MCU", kMaxBlocksInMcu));
          }
          j_.mcu_block_component[size_t(b)] = uint8_t(order[size_t(s)]);
          j_.mcu_block_dx[size_t(b)] = uint8_t(x);
          j_.mcu_block_dy[size_t(b)] = uint8_t(y);
          ++b;
        }
      }
    }
    j_.blocks_per_mcu = b;
  } else {
    FrameComponent& fc = j_.components[size_t(order[0])];
    j_.mcus_x = fc.width_in_blocks;
    j_.mcus_y = fc.height_in_blocks;
    fc.stored_blocks_w = fc.width_in_blocks;
    fc.stored_blocks_h = fc.height_in_blocks;
    j_.blocks_per_mcu = 1;
    j_.mcu_block_component[0] = uint8_t(order[0]);
  }
  j_.total_mcus = uint32_t(j_.mcus_x) * uint32_t(j_.mcus_y);
  return ok();
}

Result<void> Parser::scan_entropy_data() {
  const uint8_t* d = d_.data();
  const size_t n = d_.size();
  j_.scan_begin = uint32_t(pos_);
  EntropySegment seg;
  seg.begin = uint32_t(pos_);
  size_t i = pos_;
  int next_rst = 0;
  for (;;) {
    const void* ff = i < n ? std::memchr(d + i, 0xFF, n - i) : nullptr;
    if (!ff) {  // the data ends inside the scan: no EOI
      seg.end = uint32_t(n);
      j_.segments.push_back(seg);
      j_.scan_end = uint32_t(n);
      pos_ = n;
      return ok();
    }
    const size_t at = size_t(static_cast<const uint8_t*>(ff) - d);
    size_t k = at + 1;
    while (k < n && d[k] == 0xFF) ++k;  // fill bytes (libjpeg skips them)
    if (k >= n) {
      seg.end = uint32_t(at);
      j_.segments.push_back(seg);
      j_.scan_end = uint32_t(n);
      pos_ = n;
      return ok();
    }
    if (d[k] == 0x00) {
      ++j_.stuffed_bytes;
      i = k + 1;
      continue;
    }
    if (d[k] >= 0xD0 && d[k] <= 0xD7) {
      if (d[k] - 0xD0 != next_rst) {
        return parse_error(ErrorCode::CorruptData, "scan",
                           fmt::format("restart marker RST{} at byte {} where RST{} belongs",
                                       d[k] - 0xD0, k - 1, next_rst));
      }
      next_rst = (next_rst + 1) & 7;
      seg.end = uint32_t(at);
      j_.segments.push_back(seg);
      seg = EntropySegment{};
      seg.begin = uint32_t(k + 1);
      i = k + 1;
      continue;
    }
    seg.end = uint32_t(at);
    j_.segments.push_back(seg);
    j_.scan_end = uint32_t(at);
    pos_ = at;  // next_marker reads the marker
    return ok();
  }
}

Result<void> Parser::after_scan() {
  for (;;) {
    if (pos_ >= d_.size()) return ok();  // no EOI: has_eoi stays false
    PIXPATH_TRY(const uint8_t m, next_marker("after the scan"));
    if (m == 0xD9) {
      j_.has_eoi = true;
      return ok();
    }
    if (m == 0xDA) {
      return parse_error(ErrorCode::Unsupported, "SOS",
                         "a second scan (several scans are not taken by this decoder)");
    }
    if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) continue;  // stand-alone markers
    PIXPATH_TRY(auto p, segment("after the scan"));
    (void)p;
  }
}

void Parser::infer_color() {
  // libjpeg-turbo's default_decompress_parms.
  const auto& c = j_.components;
  switch (j_.component_count) {
    case 1: j_.color = ColorModel::Gray; break;
    case 3:
      if (j_.jfif) {
        j_.color = ColorModel::YCbCr;
      } else if (j_.adobe) {
        j_.color = j_.adobe_transform == 0 ? ColorModel::Rgb : ColorModel::YCbCr;
      } else if (c[0].id == 82 && c[1].id == 71 && c[2].id == 66) {
        j_.color = ColorModel::Rgb;
      } else {
        j_.color = ColorModel::YCbCr;
      }
      break;
    case 4:
      j_.color = (j_.adobe && j_.adobe_transform == 0) || !j_.adobe ? ColorModel::Cmyk
                                                                   : ColorModel::Ycck;
      break;
    default: j_.color = ColorModel::YCbCr; break;  // 2 components: not a colour model
  }
}

Result<BaselineJpeg> Parser::run() {
  if (d_.size() < 2 || d_[0] != 0xFF || d_[1] != 0xD8) {
    return parse_error(ErrorCode::CorruptData, "SOI", "the data does not start with SOI (FF D8)");
  }
  pos_ = 2;
  for (;;) {
    PIXPATH_TRY(const uint8_t m, next_marker("markers"));
    if (const char* kind = refused_frame(m)) {
      return parse_error(ErrorCode::Unsupported, "SOF",
                         fmt::format("{} is not for this decoder (baseline only)", kind));
    }
    if (m == 0xD9) return parse_error(ErrorCode::CorruptData, "EOI", "end of image before any scan");
    if (m == 0xD8) return parse_error(ErrorCode::CorruptData, "SOI", "a second SOI");
    if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) continue;  // stand-alone, ignored as libjpeg does
    if (m == 0xDC) {
      return parse_error(ErrorCode::Unsupported, "DNL", "DNL markers are not taken by this decoder");
    }
    const char* name = m == 0xC0 ? "SOF" : m == 0xC4 ? "DHT" : m == 0xDB ? "DQT" : m == 0xDD ? "DRI"
                       : m == 0xDA ? "SOS" : "marker segment";
    PIXPATH_TRY(auto p, segment(name));
    switch (m) {
      case 0xC0: PIXPATH_CHECK(on_sof(p)); break;
      case 0xC4: PIXPATH_CHECK(on_dht(p)); break;
      case 0xDB: PIXPATH_CHECK(on_dqt(p)); break;
      case 0xDD: PIXPATH_CHECK(on_dri(p)); break;
      case 0xDA: {
        PIXPATH_CHECK(on_sos(p));
        if (depth_ == ParseDepth::Headers) {
          j_.scan_begin = uint32_t(pos_);
          const size_t n = d_.size();
          j_.has_eoi = n >= 4 && d_[n - 2] == 0xFF && d_[n - 1] == 0xD9;
          infer_color();
          return std::move(j_);
        }
        PIXPATH_CHECK(scan_entropy_data());
        PIXPATH_CHECK(after_scan());
        // Restart intervals: one segment each (a trailing empty segment is tolerated).
        const uint32_t ri = uint32_t(j_.restart_interval);
        const uint32_t expected = ri ? ceil_div(j_.total_mcus, ri) : 1;
        while (j_.segments.size() > expected && j_.segments.back().begin >= j_.segments.back().end) {
          j_.segments.pop_back();
        }
        if (j_.segments.size() != expected) {
          const bool fewer = j_.segments.size() < expected;
          return parse_error(fewer ? ErrorCode::Truncated : ErrorCode::CorruptData, "scan",
                             fmt::format("{} restart intervals where {} MCUs at {} per interval "
                                         "make {}", j_.segments.size(), j_.total_mcus, ri,
                                         expected));
        }
        for (uint32_t k = 0; k < expected; ++k) {
          EntropySegment& s = j_.segments[k];
          s.first_mcu = ri ? k * ri : 0;
          s.mcu_count = ri ? std::min(ri, j_.total_mcus - s.first_mcu) : j_.total_mcus;
        }
        infer_color();
        return std::move(j_);
      }
      default:
        if (m >= 0xE0 && m <= 0xEF) PIXPATH_CHECK(on_app(m, p));
        break;  // COM, DAC, JPG and others: skipped
    }
  }
}

}  // namespace

const char* to_string(ColorModel m) {
  switch (m) {
    case ColorModel::Gray: return "gray";
    case ColorModel::YCbCr: return "YCbCr";
    case ColorModel::Rgb: return "RGB";
    case ColorModel::Cmyk: return "CMYK";
    case ColorModel::Ycck: return "YCCK";
  }
  return "?";
}

Result<BaselineJpeg> parse_baseline_jpeg(std::span<const uint8_t> data, const BaselineLimits& limits,
                                         ParseDepth depth) {
  if (data.size() > UINT32_MAX - 64) {
    return parse_error(ErrorCode::LimitExceeded, "SOI",
                       fmt::format("{} bytes (offsets are 32-bit)", data.size()));
  }
  return Parser(data, limits, depth).run();
}

JpegTables frame_tables(const BaselineJpeg& jpeg) {
  JpegTables t;
  t.sof = 0xC0;
  t.precision = 8;
  t.width = jpeg.width;
  t.height = jpeg.height;
  t.component_count = jpeg.component_count;
  for (size_t k = 0; k < t.components.size(); ++k) {
    t.components[k].id = jpeg.components[k].id;
    t.components[k].h_samp = jpeg.components[k].h;
    t.components[k].v_samp = jpeg.components[k].v;
  }
  t.has_sos = true;
  t.has_eoi = jpeg.has_eoi;
  t.adobe_transform = jpeg.adobe_transform;
  return t;
}

UnstuffedScan unstuff_scan(std::span<const uint8_t> data, const BaselineJpeg& jpeg) {
  UnstuffedScan out;
  size_t total = 0;
  for (const auto& s : jpeg.segments) total += s.end - s.begin;
  out.bytes.reserve(total + UnstuffedScan::kUnstuffedPadding);
  out.segment_begin.reserve(jpeg.segments.size() + 1);
  for (const auto& s : jpeg.segments) {
    out.segment_begin.push_back(uint32_t(out.bytes.size()));
    size_t i = s.begin;
    while (i < s.end) {
      const void* ff = std::memchr(data.data() + i, 0xFF, s.end - i);
      const size_t run_end = ff ? size_t(static_cast<const uint8_t*>(ff) - data.data()) : s.end;
      out.bytes.insert(out.bytes.end(), data.begin() + std::ptrdiff_t(i),
                       data.begin() + std::ptrdiff_t(run_end));
      if (!ff) break;
      // 0xFF, any fill 0xFFs, then 0x00: one data byte 0xFF (the parser saw only that form
      // inside a segment).
      out.bytes.push_back(0xFF);
      size_t k = run_end + 1;
      while (k < s.end && data[k] == 0xFF) ++k;
      i = k + 1;
    }
  }
  out.segment_begin.push_back(uint32_t(out.bytes.size()));
  out.bytes.resize(out.bytes.size() + UnstuffedScan::kUnstuffedPadding, 0);
  return out;
}

}  // namespace pixpath::codecs::jpeg
