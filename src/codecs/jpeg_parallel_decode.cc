#include "pixpath/codecs/jpeg_parallel_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>

namespace pixpath::codecs::jpeg {
namespace {

Error decode_error(ErrorCode code, std::string reason) {
  return Error(code, "jpeg", "parallel decode", std::move(reason));
}

// libjpeg's jpeg_make_d_derived_tbl (the parser checked the code lengths).
void build_lookup(const HuffmanSpec& spec, HuffmanLookup* t) {
  *t = HuffmanLookup{};
  std::array<uint8_t, 257> size{};
  std::array<uint32_t, 257> code{};
  int p = 0;
  for (int l = 1; l <= 16; ++l) {
    for (int i = 0; i < spec.counts[size_t(l)]; ++i) size[size_t(p++)] = uint8_t(l);
  }
  const int n = p;
  uint32_t c = 0;
  int si = n ? size[0] : 0;
  p = 0;
  while (p < n) {
    while (p < n && size[size_t(p)] == si) code[size_t(p++)] = c++;
    c <<= 1;
    ++si;
  }
  p = 0;
  t->limit[0] = 0;
  for (int l = 1; l <= 16; ++l) {
    if (spec.counts[size_t(l)]) {
      t->valoffset[l] = p - int32_t(code[size_t(p)]);
      p += spec.counts[size_t(l)];
      // libjpeg's maxcode[l] is code[p - 1]; a code of length l is <= it.
      t->limit[l] = (code[size_t(p - 1)] + 1) << (16 - l);
    } else {
      t->limit[l] = t->limit[l - 1];
    }
  }
  std::copy(spec.symbols.begin(), spec.symbols.end(), t->symbols);
  for (int i = 0; i < n; ++i) {
    const int l = size[size_t(i)];
    if (l > kLookaheadBits) continue;
    const uint32_t first = code[size_t(i)] << (kLookaheadBits - l);
    const uint32_t count = 1u << (kLookaheadBits - l);
    for (uint32_t k = 0; k < count; ++k) {
      t->lookahead[first + k] = uint16_t((l << 8) | spec.symbols[size_t(i)]);
    }
  }
}

// Step 3a (jpeg_entropy_kernels.h, transfer maps) as the GPU runs it, one entry (and the chain
// of walks from it, transfer_chain) at a time: passes until one leaves no extra entry
// undecoded, then the composition from each segment's first
// subsequence, which sets start, end and slots where the composed entry is known. Fills the
// transfer fields of *st.
void transfer_starts(const ScanTables& t, const uint8_t* bytes, const ParallelDecodePlan& plan,
                     const std::vector<VariantRecord>& variants, uint32_t nvar,
                     std::vector<DecodeState>& start, std::vector<DecodeState>& end,
                     std::vector<uint32_t>& slots, std::vector<uint8_t>& trace,
                     std::vector<PathRecord>& path, ParallelDecodeStats* st) {
  const size_t n = plan.sub_begin.size();
  const uint32_t nx = transfer_extra_entries(nvar);
  std::vector<uint64_t> extras((n + 1) * nx, kNoState);  // of each subsequence, and past the last
  std::vector<uint8_t> map(n * kTransferStride, kTransferUnknown);
  std::vector<uint32_t> map_slots(n * kTransferStride, 0);
  std::vector<uint8_t> map_trace(n * kTransferStride, kNoTrace);
  std::vector<PathRecord> map_path(n * kTransferStride);
  const auto first_of_segment = [&](size_t j) { return plan.seg_first_sub[plan.sub_seg[j]] == j; };
  const auto cas = [](uint64_t* w, uint64_t expected, uint64_t desired) {
    const uint64_t old = *w;
    if (old == expected) *w = desired;
    return old;
  };
  bool added = false;
  TransferChainArrays chain;
  chain.begin = plan.sub_begin.data();
  chain.end = plan.sub_end.data();
  chain.variants = variants.data();
  chain.variant_count = nvar;
  chain.extras = extras.data();
  chain.map = map.data();
  chain.map_slots = map_slots.data();
  chain.map_trace = map_trace.data();
  chain.map_path = map_path.data();
  const auto run = [&](size_t j, uint32_t e, uint32_t pass) {
    const uint32_t seg = plan.sub_seg[j];
    chain.segment_end_bit = plan.seg_end_bit[seg];
    chain.last = plan.seg_first_sub[seg + 1] - 1;
    transfer_chain(t, bytes, chain, uint32_t(j), e, pass, cas, &added);
  };
  for (size_t j = 0; j < n; ++j) {  // pass 0: the variant ends of the predecessor
    if (first_of_segment(j)) continue;
    for (uint32_t e = 0; e < nvar; ++e) run(j, e, 0);
  }
  int passes = 1;
  for (uint32_t pass = 1; added && pass < uint32_t(kMaxTransferPasses); ++pass, ++passes) {
    added = false;  // the extras the pass before added
    for (size_t j = 0; j < n; ++j) {
      if (first_of_segment(j)) continue;
      for (uint32_t x = 0; x < nx; ++x) {
        const uint64_t w = extras[j * nx + x];
        if (w != kNoState && extra_pass(w) == pass - 1) run(j, nvar + x, pass);
      }
    }
  }
  size_t resolved = 0;
  uint8_t idx = 0;  // the entry of subsequence j + 1 that j's end is
  for (size_t j = 0; j < n; ++j) {
    if (first_of_segment(j)) {
      idx = 0;  // a known start: its end is variant 0's
      continue;
    }
    const uint8_t a = idx;
    idx = a == kTransferUnknown ? kTransferUnknown : map[j * kTransferStride + a];
    if (idx == kTransferUnknown) continue;
    start[j] = transfer_entry_state(&variants[(j - 1) * nvar], &extras[j * nx], nvar, a);
    slots[j] = map_slots[j * kTransferStride + a];
    trace[j] = map_trace[j * kTransferStride + a];
    if (trace_has_path(trace[j])) path[j] = map_path[j * kTransferStride + a];
    end[j] = transfer_entry_state(&variants[j * nvar], &extras[(j + 1) * nx], nvar, idx);
    ++resolved;
  }
  st->transfer_passes = passes;
  st->transfer_resolved = resolved;
}

}  // namespace

void EntropyDamageSummary::add(uint32_t segment, uint32_t damage) {
  for (int k = 0; k < kKinds; ++k) {
    if (!(damage & (1u << k))) continue;
    first_segment[size_t(k)] = std::min(first_segment[size_t(k)], segment);
    ++segments[size_t(k)];
  }
}

std::vector<Error> entropy_damage_warnings(const BaselineJpeg& jpeg,
                                           const EntropyDamageSummary& summary,
                                           const std::string& stage) {
  std::vector<Error> out;
  auto where = [&](int kind) {
    const uint32_t s = summary.first_segment[size_t(kind)];
    const uint32_t more = summary.segments[size_t(kind)] - 1;
    if (jpeg.segments.size() <= 1 || s >= jpeg.segments.size()) return std::string("in the scan");
    const EntropySegment& seg = jpeg.segments[s];
    std::string w = fmt::format("in restart interval {} (MCUs {}..{})", s, seg.first_mcu,
                                seg.first_mcu + seg.mcu_count - 1);
    if (more) w += fmt::format(" and {} more", more);
    return w;
  };
  auto warn = [&](ErrorCode code, std::string reason) {
    out.emplace_back(code, "jpeg", stage, std::move(reason), Severity::Warning);
  };
  if (summary.segments[2]) {
    warn(ErrorCode::Truncated,
         fmt::format("Premature end of JPEG data: the entropy-coded data ends before the last "
                     "MCU {}", where(2)));
  }
  if (summary.segments[0]) {
    warn(ErrorCode::CorruptData, fmt::format("Corrupt JPEG data: bad Huffman code {}", where(0)));
  }
  if (summary.segments[1]) {
    warn(ErrorCode::CorruptData,
         fmt::format("Corrupt JPEG data: a zero run past coefficient 63 {}", where(1)));
  }
  if (summary.segments[3]) {
    warn(ErrorCode::CorruptData,
         fmt::format("Corrupt JPEG data: {} extraneous bytes after the last MCU {}",
                     summary.extraneous_bytes, where(3)));
  }
  if (summary.no_eoi) {
    warn(ErrorCode::Truncated, "Premature end of JPEG file: no EOI marker after the scan");
  }
  return out;
}

ScanTables build_scan_tables(const BaselineJpeg& jpeg) {
  ScanTables t;
  for (size_t i = 0; i < 4; ++i) {
    build_lookup(jpeg.dc[i], &t.dc[i]);
    build_lookup(jpeg.ac[i], &t.ac[i]);
  }
  t.blocks_per_mcu = uint8_t(jpeg.blocks_per_mcu);
  BlockLayout& l = t.layout;
  l.mcus_x = uint32_t(jpeg.mcus_x);
  l.blocks_per_mcu = uint32_t(jpeg.blocks_per_mcu);
  for (int b = 0; b < jpeg.blocks_per_mcu; ++b) {
    const FrameComponent& fc = jpeg.components[jpeg.mcu_block_component[size_t(b)]];
    t.block_dc[b] = fc.dc_table;
    t.block_ac[b] = fc.ac_table;
    l.block_component[b] = jpeg.mcu_block_component[size_t(b)];
    l.block_dx[b] = jpeg.mcu_block_dx[size_t(b)];
    l.block_dy[b] = jpeg.mcu_block_dy[size_t(b)];
  }
  uint64_t offset = 0;
  for (int c = 0; c < jpeg.component_count; ++c) {
    const FrameComponent& fc = jpeg.components[size_t(c)];
    l.comp_h[c] = jpeg.interleaved ? fc.h : 1;
    l.comp_v[c] = jpeg.interleaved ? fc.v : 1;
    l.comp_blocks_w[c] = uint32_t(fc.stored_blocks_w);
    l.comp_offset[c] = offset;
    offset += uint64_t(fc.stored_blocks_w) * uint64_t(fc.stored_blocks_h) * 64;
  }
  return t;
}

Result<Upsampling> chroma_upsampling(const BaselineJpeg& jpeg) {
  auto refuse = [](std::string reason) {
    return Error(ErrorCode::Unsupported, "jpeg", "upsampling", std::move(reason));
  };
  if (jpeg.color == ColorModel::Gray && jpeg.component_count == 1) return Upsampling::None;
  if (jpeg.color != ColorModel::YCbCr || jpeg.component_count != 3) {
    return refuse(fmt::format("colour model {} with {} components", to_string(jpeg.color),
                              jpeg.component_count));
  }
  const FrameComponent& y = jpeg.components[0];
  const FrameComponent& cb = jpeg.components[1];
  const FrameComponent& cr = jpeg.components[2];
  if (cb.h != cr.h || cb.v != cr.v || y.h != jpeg.hmax || y.v != jpeg.vmax) {
    return refuse(fmt::format("sampling {}x{},{}x{},{}x{}", y.h, y.v, cb.h, cb.v, cr.h, cr.v));
  }
  const int hr = y.h / cb.h, vr = y.v / cb.v;
  if (hr * cb.h != y.h || vr * cb.v != y.v || hr > 2 || vr > 2) {
    return refuse(fmt::format("chroma ratio {}x{} / {}x{}", y.h, y.v, cb.h, cb.v));
  }
  if (hr == 2 && cb.sample_width <= 2) {
    return refuse(fmt::format("chroma {} samples wide (libjpeg-turbo upsamples it by replication)",
                              cb.sample_width));
  }
  if (hr == 1 && vr == 1) return Upsampling::None;
  if (hr == 2 && vr == 1) return Upsampling::H2V1;
  if (hr == 1 && vr == 2) return Upsampling::H1V2;
  return Upsampling::H2V2;
}

Result<ParallelDecodePlan> plan_parallel_decode(std::span<const uint8_t> data,
                                                const BaselineJpeg& jpeg,
                                                const ParallelDecodeOptions& options) {
  if (options.subsequence_bits < 8) {
    return decode_error(ErrorCode::InvalidArgument,
                        fmt::format("subsequence of {} bits (at least 8)", options.subsequence_bits));
  }
  if (jpeg.blocks_per_mcu < 1 || jpeg.segments.empty() || jpeg.scan_end > data.size()) {
    return decode_error(ErrorCode::InvalidArgument, "the parsed picture does not match the data");
  }
  ParallelDecodePlan p;
  p.component_count = jpeg.component_count;
  for (int c = 0; c < jpeg.component_count; ++c) {
    const FrameComponent& fc = jpeg.components[size_t(c)];
    p.blocks_w[size_t(c)] = uint32_t(fc.stored_blocks_w);
    p.blocks_h[size_t(c)] = uint32_t(fc.stored_blocks_h);
    p.offset[size_t(c)] = p.coefficients;
    p.coefficients += uint64_t(fc.stored_blocks_w) * uint64_t(fc.stored_blocks_h) * 64;
  }
  if (p.coefficients * sizeof(int16_t) > options.max_coefficient_bytes) {
    return decode_error(ErrorCode::LimitExceeded,
                        fmt::format("{} coefficient bytes for {}x{} (limit {})",
                                    p.coefficients * sizeof(int16_t), jpeg.width, jpeg.height,
                                    options.max_coefficient_bytes));
  }
  p.scan = unstuff_scan(data, jpeg);
  const UnstuffedScan& u = p.scan;
  if (u.bytes.size() >= (size_t{1} << 29)) {  // bit positions are 32-bit
    return decode_error(ErrorCode::LimitExceeded,
                        fmt::format("{} bytes of entropy-coded data (under 512 MiB)", u.bytes.size()));
  }
  const size_t nseg = jpeg.segments.size();
  const uint32_t bpm = uint32_t(jpeg.blocks_per_mcu);
  p.seg_end_bit.resize(nseg);
  p.seg_first_sub.resize(nseg + 1);
  p.seg_slots.resize(nseg);
  p.seg_first_block.resize(nseg);
  for (size_t s = 0; s < nseg; ++s) {
    const EntropySegment& seg = jpeg.segments[s];
    const uint64_t need = uint64_t(seg.mcu_count) * bpm * 64;
    if (need > UINT32_MAX) {
      return decode_error(ErrorCode::LimitExceeded,
                          fmt::format("{} coefficients in one restart interval (under 2^32)", need));
    }
    p.seg_slots[s] = uint32_t(need);
    p.seg_first_block[s] = uint64_t(seg.first_mcu) * bpm;
    const uint32_t b = u.segment_begin[s] * 8, e = u.segment_begin[s + 1] * 8;
    p.seg_end_bit[s] = e;
    p.seg_first_sub[s] = uint32_t(p.sub_begin.size());
    uint32_t at = b;
    do {  // at least one (possibly empty) subsequence per segment
      const uint32_t end = e - at > options.subsequence_bits ? at + options.subsequence_bits : e;
      p.sub_begin.push_back(at);
      p.sub_end.push_back(end);
      p.sub_seg.push_back(uint32_t(s));
      at = end;
    } while (at < e);
  }
  p.seg_first_sub[nseg] = uint32_t(p.sub_begin.size());
  const uint64_t blocks = uint64_t(jpeg.total_mcus) * bpm;
  if (blocks > UINT32_MAX) {
    return decode_error(ErrorCode::LimitExceeded, fmt::format("{} blocks (under 2^32)", blocks));
  }
  p.scan_blocks = uint32_t(blocks);
  p.restart_mcus = uint32_t(jpeg.restart_interval);
  return p;
}

Result<CoefficientImage> decode_coefficients_parallel(std::span<const uint8_t> data,
                                                      const BaselineJpeg& jpeg,
                                                      const ParallelDecodeOptions& options,
                                                      ParallelDecodeStats* stats) {
  // Step 1: segments and subsequences (plain arrays, as the kernels take them).
  PIXPATH_TRY(const ParallelDecodePlan plan, plan_parallel_decode(data, jpeg, options));
  CoefficientImage img;
  img.component_count = plan.component_count;
  img.blocks_w = plan.blocks_w;
  img.blocks_h = plan.blocks_h;
  img.offset = plan.offset;
  const uint64_t total = plan.coefficients;
  auto tables = std::make_unique<ScanTables>(build_scan_tables(jpeg));
  const uint8_t* bytes = plan.scan.bytes.data();
  const size_t nseg = jpeg.segments.size();
  const std::vector<uint32_t>& seg_end_bit = plan.seg_end_bit;
  const std::vector<uint32_t>& seg_first_sub = plan.seg_first_sub;
  const std::vector<uint32_t>& sub_begin = plan.sub_begin;
  const std::vector<uint32_t>& sub_end = plan.sub_end;
  const std::vector<uint32_t>& sub_seg = plan.sub_seg;
  const size_t nsub = sub_begin.size();

  // Step 2: speculative decode of every subsequence from its first bit, once per block index
  // (the variants, as the GPU runs them: decode_variant; variant 0 is the ordinary guess).
  std::vector<DecodeState> start(nsub), end(nsub);
  std::vector<uint32_t> slots(nsub);
  const uint32_t nvar = tables->blocks_per_mcu;
  std::vector<VariantRecord> variants(nsub * nvar);
  // Each start's trace for the write pieces: the guess is variant 0's own start.
  std::vector<uint8_t> trace(nsub, make_trace(0, 0));
  std::vector<PathRecord> path(nsub);  // read where a trace has kTracePath
  for (size_t j = 0; j < nsub; ++j) {
    start[j] = DecodeState{sub_begin[j], 0, 0};
    for (uint32_t v = 0; v < nvar; ++v) {
      variants[j * nvar + v] = decode_variant(*tables, bytes, DecodeState{sub_begin[j], uint8_t(v), 0},
                                              sub_begin[j], sub_end[j], seg_end_bit[sub_seg[j]]);
    }
    end[j] = variants[j * nvar].end;
    slots[j] = variants[j * nvar].slots;
  }

  // Step 3: synchronisation rounds (each reads the previous round's end states), at most
  // kMaxSyncRounds of them, then one serial walk over the segments if they did not converge.
  ParallelDecodeStats st;
  st.segments = nseg;
  st.subsequences = nsub;
  if (options.transfer_maps && nvar > 0) {
    transfer_starts(*tables, bytes, plan, variants, nvar, start, end, slots, trace, path, &st);
  }
  std::vector<DecodeState> prev_end(nsub);
  bool converged = false;
  for (int round = 0; round <= kMaxSyncRounds; ++round) {
    prev_end = end;
    size_t changed = 0;
    for (size_t j = 0; j < nsub; ++j) {
      if (seg_first_sub[sub_seg[j]] == j) continue;  // its start is known
      SubsequenceResult r;
      if (sync_subsequence_variants(*tables, bytes, prev_end[j - 1], sub_begin[j], sub_end[j],
                                    seg_end_bit[sub_seg[j]], &variants[j * nvar], nvar, &start[j],
                                    &r, &trace[j])) {
        end[j] = r.end;
        slots[j] = r.slots;
        ++changed;
      }
    }
    if (!changed) {
      converged = true;
      break;
    }
    ++st.sync_rounds;
    st.sync_decodes += changed;
  }
  if (!converged) {
    st.serial_sweep = true;
    for (size_t s = 0; s < nseg; ++s) {
      sync_segment_serially(*tables, bytes, seg_first_sub[s], seg_first_sub[s + 1] - seg_first_sub[s],
                            sub_end.data(), seg_end_bit[s], start.data(), end.data(), slots.data(),
                            trace.data());
    }
  }
  for (size_t j = 0; j < nsub; ++j) {
    if (!same_state(start[j], DecodeState{sub_begin[j], 0, 0})) ++st.wrong_speculative_starts;
  }
  if (stats) *stats = st;  // also when a later step fails

  // Step 4: exclusive prefix sum of the slot counts within each segment.
  std::vector<uint32_t> first_slot(nsub);
  std::vector<uint64_t> seg_slot_sum(nseg);
  for (size_t s = 0; s < nseg; ++s) {
    uint64_t sum = 0;
    for (uint32_t j = seg_first_sub[s]; j < seg_first_sub[s + 1]; ++j) {
      first_slot[j] = uint32_t(std::min<uint64_t>(sum, UINT32_MAX));
      sum += slots[j];
    }
    seg_slot_sum[s] = sum;  // below the segment's blocks x 64: it ends early (step 5's checks)
  }

  // Step 5: write-out from the synchronised states (in pieces, as the GPU writes them, where
  // the variants give the states inside), and the damage checks per segment (the OR of its
  // pieces' damage, as the GPU's write kernel ORs it per segment).
  img.coefficients.assign(total, 0);
  EntropyDamageSummary damage;
  const bool pieces = options.write_pieces && nvar > 0;
  for (size_t s = 0; s < nseg; ++s) {
    const uint32_t seg_slots = plan.seg_slots[s];
    uint32_t d = slot_sum_damage(seg_slot_sum[s], seg_slots);
    for (uint32_t j = seg_first_sub[s]; j < seg_first_sub[s + 1]; ++j) {
      for (int p = 0; p < (pieces ? kWritePieces : 1); ++p) {
        WritePiece piece{start[j], sub_end[j], first_slot[j]};
        if (pieces && !write_piece(&variants[size_t(j) * nvar], trace[j], &path[j], start[j],
                                   sub_begin[j], sub_end[j], first_slot[j], slots[j], p, &piece)) {
          continue;
        }
        ++st.write_pieces;
        const WriteResult w = write_subsequence(
            *tables, bytes, piece.start, piece.end_bit, seg_end_bit[s], piece.first_slot,
            seg_slots, plan.seg_first_block[s], kZigzagToNatural.data(), img.coefficients.data());
        const uint32_t sd = subsequence_damage(w, seg_end_bit[s]);
        if (sd & kDamageExtraBytes) {
          damage.extraneous_bytes += extraneous_bytes(w.last_block_end_bit, seg_end_bit[s]);
        }
        d |= sd;
      }
    }
    damage.add(uint32_t(s), d);
  }
  if (stats) stats->write_pieces = st.write_pieces;
  damage.no_eoi = !jpeg.has_eoi;
  img.warnings = entropy_damage_warnings(jpeg, damage, "parallel decode");

  // Step 6: DC prediction.
  predict_dc_in_tiles(tables->layout, plan.restart_mcus, plan.scan_blocks, img.coefficients.data());
  return img;
}

void predict_dc_in_tiles(const BlockLayout& layout, uint32_t restart_mcus, uint32_t scan_blocks,
                         int16_t* coefficients) {
  const uint32_t tiles = (scan_blocks + kDcTileBlocks - 1) / kDcTileBlocks;
  std::vector<DcSums> tile_sum(tiles);
  for (uint32_t b = 0; b < scan_blocks; ++b) {  // 6a
    uint32_t c;
    uint64_t at;
    const DcSums e = dc_scan_element(layout, restart_mcus, b, coefficients, &c, &at);
    DcSums& run = tile_sum[b / kDcTileBlocks];
    run = b % kDcTileBlocks ? dc_combine(run, e) : e;
    coefficients[at] = static_cast<int16_t>(static_cast<int32_t>(run.v[c]));
  }
  std::vector<DcSums> carry(tiles);
  for (uint32_t t = 1; t < tiles; ++t) carry[t] = dc_combine(carry[t - 1], tile_sum[t - 1]);  // 6b
  for (uint32_t b = 0; b < scan_blocks; ++b) {  // 6c
    if (!dc_takes_carry(b, layout.blocks_per_mcu, restart_mcus)) continue;
    const uint32_t c = layout.block_component[b % layout.blocks_per_mcu];
    int16_t& dc = coefficients[block_coefficient_offset(layout, b)];
    dc = static_cast<int16_t>(
        static_cast<int32_t>(uint32_t(static_cast<int32_t>(dc)) + carry[b / kDcTileBlocks].v[c]));
  }
}

}  // namespace pixpath::codecs::jpeg
