// Host-side parsing of a baseline (SOF0, Huffman, 8-bit, one scan) JPEG for pixpath's own
// parallel decoder (the GPU decoder of issue 19 and its CPU reference,
// jpeg_parallel_decode.h). TurboJPEG and nvJPEG parse for the other routes; this parser only
// says what the parallel decoder needs, and refuses what it cannot decode (progressive,
// arithmetic, 12-bit, lossless, hierarchical, several scans) with ErrorCode::Unsupported so
// the caller can send the picture to another route.
//
// What it gives: frame geometry (components, sampling factors, MCU grid, block grids), the
// quantisation and Huffman tables in effect at the scan, the restart interval, the colour
// model (as libjpeg-turbo infers it from JFIF/Adobe markers and component ids), and the
// entropy-coded data of the scan cut at its restart markers (EntropySegment: byte ranges in
// the input, still byte-stuffed), plus unstuff_scan() which makes the plain bit stream a
// decoder reads (0xFF 0x00 -> 0xFF, markers removed, each segment byte-aligned).
//
// Errors: subject "jpeg", stage "baseline parse <marker>" (e.g. "baseline parse SOF"),
// reason in words; CorruptData / Truncated for broken input, Unsupported for valid JPEGs
// this decoder does not take, LimitExceeded for sizes over BaselineLimits.
//
// Threading: plain functions on caller-owned data; no shared state.
// Lifetime: BaselineJpeg holds offsets into the parsed bytes, not pointers; it owns its tables.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "pixpath/codecs/jpeg_entropy_kernels.h"  // kZigzagToNatural
#include "pixpath/codecs/jpeg_tables.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs::jpeg {

struct BaselineLimits {
  int max_width = 16384;
  int max_height = 16384;
  uint64_t max_pixels = uint64_t{16384} * 16384;
};

// libjpeg's limits: at most 10 blocks in one MCU of an interleaved scan, 4 components.
inline constexpr int kMaxBlocksInMcu = 10;
inline constexpr int kMaxComponents = 4;

struct QuantTable {
  bool defined = false;
  uint8_t precision = 0;            // 0: 8-bit entries, 1: 16-bit entries
  std::array<uint16_t, 64> values{};  // natural order, as libjpeg's quantval
};

// A DHT table as transmitted: counts[l] codes of length l (1..16), then the symbols.
struct HuffmanSpec {
  bool defined = false;
  std::array<uint8_t, 17> counts{};  // counts[0] unused
  std::array<uint8_t, 256> symbols{};
  int symbol_count = 0;
};

struct FrameComponent {
  uint8_t id = 0;
  uint8_t h = 1, v = 1;  // sampling factors 1..4
  uint8_t quant = 0;     // quantisation table 0..3
  uint8_t dc_table = 0, ac_table = 0;  // from the scan header
  // Component size in samples and in blocks (libjpeg's downsampled_width / width_in_blocks).
  int sample_width = 0, sample_height = 0;
  int width_in_blocks = 0, height_in_blocks = 0;
  // Blocks stored per row / rows of blocks: the MCU grid's (padded) size for an interleaved
  // scan, the component's own for a one-component scan. Coefficient planes use this size.
  int stored_blocks_w = 0, stored_blocks_h = 0;
};

enum class ColorModel { Gray, YCbCr, Rgb, Cmyk, Ycck };
const char* to_string(ColorModel m);

// One entropy-coded segment: the data of one restart interval (or of the whole scan without
// restart markers). [begin, end) are byte offsets into the parsed input, byte-stuffed, without
// the RSTn marker that precedes or follows it.
struct EntropySegment {
  uint32_t begin = 0, end = 0;
  uint32_t first_mcu = 0, mcu_count = 0;
};

struct BaselineJpeg {
  int width = 0, height = 0;
  int component_count = 0;  // in the frame and in the (single) scan
  std::array<FrameComponent, kMaxComponents> components{};
  int hmax = 1, vmax = 1;
  bool interleaved = false;  // the scan has more than one component
  int mcus_x = 0, mcus_y = 0;
  uint32_t total_mcus = 0;
  int blocks_per_mcu = 0;
  // For each block of an MCU, in coding order: its component and its (x, y) within the
  // component's h x v blocks of that MCU.
  std::array<uint8_t, kMaxBlocksInMcu> mcu_block_component{};
  std::array<uint8_t, kMaxBlocksInMcu> mcu_block_dx{}, mcu_block_dy{};

  std::array<QuantTable, 4> quant{};
  std::array<HuffmanSpec, 4> dc{}, ac{};  // the tables in effect at the scan
  int restart_interval = 0;                // MCUs per interval, 0 = no restart markers

  bool jfif = false, adobe = false;
  int adobe_transform = -1;  // the Adobe APP14 transform flag, -1 without APP14
  ColorModel color = ColorModel::YCbCr;

  uint32_t scan_begin = 0, scan_end = 0;  // the entropy-coded data, markers included
  std::vector<EntropySegment> segments;   // one per restart interval, in order
  uint32_t stuffed_bytes = 0;             // 0xFF 0x00 pairs in the scan data
  bool has_eoi = false;                   // false: the data ended after the scan without EOI
};

// How far parse_baseline_jpeg reads. Whole: everything above. Headers: the markers up to and
// including the scan header (frame, tables, restart interval, colour model), not the
// entropy-coded data: `segments` stays empty, scan_begin is where that data starts, scan_end 0
// and stuffed_bytes 0, and has_eoi says only whether the data's last two bytes are EOI (FF D9).
// For a decision about a picture without a pass over its bytes (the GPU route's share of
// several windows); what decodes it parses it Whole.
enum class ParseDepth { Whole, Headers };

Result<BaselineJpeg> parse_baseline_jpeg(std::span<const uint8_t> data,
                                         const BaselineLimits& limits = {},
                                         ParseDepth depth = ParseDepth::Whole);

// The frame as scan_jpeg_tables describes it (SOF0, 8-bit, size, components and their sampling,
// has_eoi as this parse's depth tells it, the Adobe transform; no quantisation tables): for a
// caller that decides on those fields (paint::gpu_exactness_refusal) and need not scan the
// picture again.
JpegTables frame_tables(const BaselineJpeg& jpeg);

// The scan's bit stream as a decoder reads it: the segments' bytes unstuffed and concatenated,
// segment i at bytes [segment_begin[i], segment_begin[i + 1]) (segment_begin has one entry
// more than there are segments), followed by kUnstuffedPadding zero bytes so a reader may
// load a few bytes past a segment's end without a bounds check.
struct UnstuffedScan {
  static constexpr size_t kUnstuffedPadding = 8;
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> segment_begin;
};

UnstuffedScan unstuff_scan(std::span<const uint8_t> data, const BaselineJpeg& jpeg);

}  // namespace pixpath::codecs::jpeg
