// The per-subsequence steps of pixpath's parallel baseline-JPEG entropy decoder, after
// Weißenberger & Schmidt, "Accelerating JPEG Decompression on GPUs" (HiPC 2021,
// arXiv 2111.09219). Written once for the CPU reference (jpeg_parallel_decode.h, which runs
// them from a host loop) and for the CUDA kernels (which run one subsequence per thread):
// plain structs and arrays, no allocation, no exceptions, no library calls; every function is
// `PIXPATH_HD` (host and device under nvcc, plain inline otherwise).
//
// The method, in the order the host loop runs it:
//  1. The scan's unstuffed bit stream (unstuff_scan) is cut into segments (restart intervals;
//     the whole scan without them) and each segment into subsequences of a fixed number of
//     bits. A subsequence's decode starts at its first bit with a guessed state (first block of
//     an MCU, DC coefficient), except the first of a segment, whose state is known.
//  2. decode_subsequence: every subsequence decodes codewords from its start state until the
//     next codeword would start at or past its end; it records the state there (bit position,
//     block within the MCU, zigzag index) and how many coefficient slots it passed.
//  3. Synchronisation (sync_subsequence): a subsequence whose recorded start state differs
//     from its predecessor's end state is decoded again from that end state; it keeps going
//     round by round until no start state changes. Huffman codes resynchronise within a few
//     codewords, so most subsequences agree after the first round. A round fixes at least one
//     more subsequence, so the rounds always end, but data that never resynchronises (found
//     by the fuzzer) would take as many rounds as subsequences: after kMaxSyncRounds rounds,
//     sync_segment_serially walks each segment once in order instead (one thread per segment
//     on the GPU, as slow as a serial decoder, but bounded).
//     Before the rounds, step 3a (transfer maps, below) finds most start states at once.
//  4. An exclusive prefix sum of the slot counts gives each subsequence its first coefficient
//     slot within its segment (slot = 64 * block + zigzag index, blocks in MCU order).
//  5. write_subsequence decodes once more from the synchronised state and writes each
//     non-zero coefficient (DC: the difference) to its block in the planar coefficient layout
//     (BlockLayout), natural order. The output starts zeroed. Where the variants of step 2
//     give the synchronised decode's states inside the subsequence, it is written in pieces
//     (write_piece), one thread each on the GPU.
//  6. DC prediction (a segmented scan in tiles: dc_scan_element, dc_combine, dc_takes_carry):
//     per segment and component, the running sum of the DC differences, in block order.
// Exactness: the decoding rules are libjpeg-turbo's (jdhuff.c decode_mcu_slow/_fast): a run
// past coefficient 63 writes coefficient 63 and ends the block; DC sums wrap as unsigned int
// and are stored as 16-bit; bits past a segment's end read as zeros.
//
// Damaged entropy data (a bit flip, a cut) is found on the synchronised decode of step 5,
// per segment, and reported as a decode warning (the picture is still decoded, as
// libjpeg-turbo decodes it with a warning): subsequence_damage() below. What counts as damage is
// what an encoder never writes: a bit pattern that is no code of its table, a run that puts a
// coefficient past index 63, a segment whose data ends before its last block (or inside the
// last codeword), and a whole byte or more left after the last block (libjpeg-turbo: "N
// extraneous bytes before marker"; up to 7 padding bits are normal). Synchronisation that does
// not converge within kMaxSyncRounds is no damage by itself (valid streams with unusual tables
// can need the serial walk, which makes the states exact); damage in such data shows in the
// same checks on the walked decode.
//
// Threading: pure functions of their arguments; subsequences are independent within a step.
#pragma once

#include <array>
#include <cstdint>

#if defined(__CUDACC__)
#define PIXPATH_HD __host__ __device__ __forceinline__
#else
#define PIXPATH_HD inline
#endif

namespace pixpath::codecs::jpeg {

// jpeg_natural_order: zigzag index -> natural (row-major) index in an 8x8 block.
inline constexpr std::array<uint8_t, 64> kZigzagToNatural = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

inline constexpr int kLookaheadBits = 9;

// A Huffman table ready for decoding (libjpeg's d_derived_tbl, flattened).
struct HuffmanLookup {
  // Codes of at most kLookaheadBits bits: (length << 8) | symbol for every
  // kLookaheadBits-bit prefix; 0 where the code is longer.
  uint16_t lookahead[1 << kLookaheadBits];
  // limit[l]: one past the largest code of length <= l, left-justified to 16 bits (codes are
  // canonical, so limit rises with l and a 16-bit window w holds a code of the shortest
  // length l with w < limit[l]); limit[0] = 0.
  uint32_t limit[17];
  int32_t valoffset[17];  // symbols[code + valoffset[length]]
  uint8_t symbols[256];
};

// Where each block of the scan goes: planar coefficients, one plane per component, each a
// raster of stored_blocks_w x stored_blocks_h blocks of 64 int16 in natural order.
struct BlockLayout {
  uint32_t mcus_x = 0;
  uint32_t blocks_per_mcu = 0;
  uint8_t block_component[10] = {};
  uint8_t block_dx[10] = {}, block_dy[10] = {};
  uint8_t comp_h[4] = {}, comp_v[4] = {};  // 1 x 1 in a one-component scan
  uint32_t comp_blocks_w[4] = {};
  uint64_t comp_offset[4] = {};  // in coefficients
};

// Everything the decoding steps read besides the bits (device: constant or shared memory).
struct ScanTables {
  HuffmanLookup dc[4], ac[4];
  uint8_t block_dc[10] = {}, block_ac[10] = {};  // table of each block of an MCU
  uint8_t blocks_per_mcu = 1;
  BlockLayout layout;
};

// A decoder's position: bit in the unstuffed stream, block within the MCU, next zigzag index
// (0 = the DC coefficient comes next).
struct DecodeState {
  uint32_t bit = 0;
  uint8_t block = 0;
  uint8_t z = 0;
};

PIXPATH_HD bool same_state(const DecodeState& a, const DecodeState& b) {
  return a.bit == b.bit && a.block == b.block && a.z == b.z;
}

// 32 bits of the stream from bit `pos`; bits at or past `end_bit` read as 0. `bytes` must
// hold at least 8 bytes from byte pos / 8 (UnstuffedScan's padding guarantees that for any
// pos < end_bit); on the GPU it must also be 4-byte aligned (the upload places each array at a
// 256-byte boundary), so two aligned word loads and a funnel shift replace five byte loads.
PIXPATH_HD uint32_t peek32(const uint8_t* bytes, uint32_t pos, uint32_t end_bit) {
  if (pos >= end_bit) return 0;
#if defined(__CUDA_ARCH__)
  const uint32_t* w = reinterpret_cast<const uint32_t*>(bytes) + (pos >> 5);
  const uint32_t hi = __byte_perm(__ldg(w), 0, 0x0123), lo = __byte_perm(__ldg(w + 1), 0, 0x0123);
  uint32_t bits = __funnelshift_l(lo, hi, pos & 31);
#else
  const uint8_t* p = bytes + (pos >> 3);
  const uint64_t w = (uint64_t{p[0]} << 32) | (uint64_t{p[1]} << 24) | (uint64_t{p[2]} << 16) |
                     (uint64_t{p[3]} << 8) | uint64_t{p[4]};
  uint32_t bits = static_cast<uint32_t>(w >> (8 - (pos & 7)));
#endif
  const uint32_t left = end_bit - pos;
  if (left < 32) bits &= ~0u << (32 - left);
  return bits;
}

// Decodes one Huffman code from the top of `bits`; returns the symbol and sets *length, or
// returns -1 with *length 0 for a bit pattern that is no code of the table. Codes longer than
// the lookahead: the length from comparing the window with every longer length's limit at
// once (independent comparisons, no loop of dependent loads: one lane's long code holds up
// its whole warp).
PIXPATH_HD int huffman_decode(const HuffmanLookup& t, uint32_t bits, int* length) {
  const uint16_t e = t.lookahead[bits >> (32 - kLookaheadBits)];
  if (e) {
    *length = e >> 8;
    return e & 0xFF;
  }
  const uint32_t window = bits >> 16;
  int l = kLookaheadBits + 1;
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int k = kLookaheadBits + 1; k <= 16; ++k) l += window >= t.limit[k] ? 1 : 0;
  if (l > 16) {
    *length = 0;
    return -1;
  }
  *length = l;
  return t.symbols[(static_cast<int32_t>(window >> (16 - l)) + t.valoffset[l]) & 0xFF];
}

// libjpeg's HUFF_EXTEND: the s-bit value r as a signed coefficient.
PIXPATH_HD int32_t huffman_extend(uint32_t r, int s) {
  return r < (1u << (s - 1)) ? static_cast<int32_t>(r) - static_cast<int32_t>((1u << s) - 1)
                             : static_cast<int32_t>(r);
}

// One codeword (with its extra bits) at s.bit. Returns the coefficient slots it passes
// (1..64): the coefficient it codes and any zeros before it, or the rest of the block at an
// end of block. Sets *zpos to the zigzag index of the coefficient it codes (-1: none; a DC
// difference is always coded) and *value to its value. For a pattern that is no code: returns
// 0, sets *zpos -1 and moves s.bit 16 bits on (a speculative decode may be anywhere; a
// synchronised one reports corrupt data). *past_63 (when given) is set when the codeword's run
// goes past coefficient 63 (a coefficient after zero run r at index > 63, or a ZRL past the
// block's end): decoded as libjpeg-turbo does, but no encoder writes it.
PIXPATH_HD int decode_step(const ScanTables& t, const uint8_t* bytes, uint32_t end_bit,
                           DecodeState& s, int* zpos, int32_t* value, bool* past_63 = nullptr) {
  const uint32_t bits = peek32(bytes, s.bit, end_bit);
  const bool dc = s.z == 0;
  const HuffmanLookup& table = dc ? t.dc[t.block_dc[s.block]] : t.ac[t.block_ac[s.block]];
  int length = 0;
  const int sym = huffman_decode(table, bits, &length);
  // The rest without branches (selects): the lanes of a warp decode different kinds of
  // codeword in the same step, and each branch they disagree on would run its sides in turn.
  // DC: `size` extra bits, coefficient 0. AC: a run of zeros, then a coefficient of `size`
  // bits; size 0 is an end of block (run 0..14) or sixteen zeros (ZRL, run 15). No code: 16
  // bits on, nothing passed.
  const bool bad = sym < 0;
  const uint32_t u = bad ? 0u : static_cast<uint32_t>(sym);
  const uint32_t size = dc ? u : (u & 15);  // DC symbols are 0..15 (checked by the parser)
  const uint32_t run = dc ? 0 : (u >> 4);
  const uint32_t z = s.z;
  // The extra bits follow the code inside the same 32-bit window (code <= 16 bits, extra <= 15;
  // bits at or past end_bit are zero in it as in a second peek): one read of the stream a
  // codeword.
  const uint32_t extra = size ? (bits << length) >> (32 - size) : 0;
  s.bit += bad ? 16u : static_cast<uint32_t>(length) + size;
  const bool coded = !bad && (dc || size != 0);  // a coefficient is coded (a DC difference always)
  const uint32_t k = z + run > 63 ? 63 : z + run;  // libjpeg: jpeg_natural_order[64..79] are 63
  const uint32_t zrl = z + 16 > 64 ? 64 : z + 16;
  const uint32_t znew = bad ? z : coded ? k + 1 : (run == 15 ? zrl : 64);
  if (past_63) {
    if ((size != 0 && z + run > 63) || (!coded && run == 15 && z + 16 > 64)) *past_63 = true;
  }
  *zpos = coded ? static_cast<int>(k) : -1;
  *value = size ? huffman_extend(extra, static_cast<int>(size)) : 0;
  const bool next_block = znew >= 64;
  const uint32_t nb = s.block + 1u;
  s.block = static_cast<uint8_t>(next_block ? (nb == t.blocks_per_mcu ? 0u : nb) : s.block);
  s.z = static_cast<uint8_t>(next_block ? 0u : znew);
  return static_cast<int>(znew - z);
}

struct SubsequenceResult {
  DecodeState end;       // the state at the first codeword at or past the subsequence's end
  uint32_t slots = 0;    // coefficient slots passed
  uint32_t invalid = 0;  // patterns that were no code
};

// Step 2 and each round of step 3: decodes from `start` while the next codeword starts before
// `end_bit` (the subsequence's end); `segment_end_bit` bounds what is read.
PIXPATH_HD SubsequenceResult decode_subsequence(const ScanTables& t, const uint8_t* bytes,
                                                DecodeState start, uint32_t end_bit,
                                                uint32_t segment_end_bit) {
  SubsequenceResult r;
  DecodeState s = start;
  int zpos;
  int32_t value;
  while (s.bit < end_bit) {
    const int passed = decode_step(t, bytes, segment_end_bit, s, &zpos, &value);
    r.slots += static_cast<uint32_t>(passed);
    if (passed == 0) ++r.invalid;
  }
  r.end = s;
  return r;
}

// Step 3, one subsequence in one round: `start` is its current start state, `predecessor_end`
// the end state its predecessor reached in the previous round. Returns true (and updates
// start, result) when they differed, so the round changed something.
PIXPATH_HD bool sync_subsequence(const ScanTables& t, const uint8_t* bytes,
                                 DecodeState predecessor_end, uint32_t end_bit,
                                 uint32_t segment_end_bit, DecodeState* start,
                                 SubsequenceResult* result) {
  if (same_state(*start, predecessor_end)) return false;
  *start = predecessor_end;
  *result = decode_subsequence(t, bytes, predecessor_end, end_bit, segment_end_bit);
  return true;
}

inline constexpr int kMaxSyncRounds = 16;

// Step 2 with block-phase variants (an acceleration of step 3; the result is the same). Most
// speculative decodes that end in the wrong state have the bit position and zigzag index
// right but the block within the MCU wrong, and a decode started at the subsequence's first
// bit with the right block index would have ended right (measured on screen JPEGs). So step 2
// decodes each subsequence once per block index (the variants; variant 0 is the ordinary
// speculative decode) and records each variant's state at kVariantCheckpoints points. A sync
// round's decode from its predecessor's end then stops at the first checkpoint where its state
// equals a variant's state there -- the same state at the same bit: the same decode from there
// on -- and takes that variant's end state and remaining slot count. Without such a meeting it
// decodes to the end as sync_subsequence does.
// The checkpoints also split the write-out (step 5, write pieces below).
inline constexpr int kVariantCheckpoints = 4;

struct VariantRecord {
  DecodeState end;
  uint32_t slots = 0;
  DecodeState at[kVariantCheckpoints];      // the first codeword start at or past checkpoint k
  uint32_t slots_at[kVariantCheckpoints] = {};  // slots passed before it
};

// Checkpoint k of the subsequence [begin, end_bit): 1/8, 1/4, 1/2 and 3/4 of the way.
PIXPATH_HD uint32_t variant_checkpoint(uint32_t begin, uint32_t end_bit, int k) {
  const uint32_t len = end_bit - begin;
  return begin + (k == 3 ? len - (len >> 2) : len >> (3 - k));
}

// One variant: decode_subsequence from `start`, recording the checkpoints. `begin` is the
// subsequence's first bit.
PIXPATH_HD VariantRecord decode_variant(const ScanTables& t, const uint8_t* bytes,
                                        DecodeState start, uint32_t begin, uint32_t end_bit,
                                        uint32_t segment_end_bit) {
  VariantRecord v;
  DecodeState s = start;
  uint32_t slots = 0;
  int k = 0;
  uint32_t next = variant_checkpoint(begin, end_bit, 0);  // checkpoint k's bit
  int zpos;
  int32_t value;
  while (s.bit < end_bit) {
    while (s.bit >= next) {
      v.at[k] = s;
      v.slots_at[k] = slots;
      ++k;
      next = k < kVariantCheckpoints ? variant_checkpoint(begin, end_bit, k) : end_bit;
    }
    slots += static_cast<uint32_t>(decode_step(t, bytes, segment_end_bit, s, &zpos, &value));
  }
  for (; k < kVariantCheckpoints; ++k) {  // past the last codeword start: the end state
    v.at[k] = s;
    v.slots_at[k] = slots;
  }
  v.end = s;
  v.slots = slots;
  return v;
}

// A decode of subsequence [begin, end_bit) from `entry` that stops where it meets one of the
// subsequence's variants (variant_count of them; see above): its end state and slot count,
// and which variant it met at which checkpoint (-1: none; it decoded to the end).
// Its states at the checkpoints it passed before it met one (all four when it met none): the
// write pieces' starts where no variant gives them (PathRecord below).
struct TransferResult {
  DecodeState end;
  uint32_t slots = 0;
  int met = -1;
  int met_at = -1;
  DecodeState at[kVariantCheckpoints];
  uint32_t slots_at[kVariantCheckpoints] = {};
};

// What the write-out (step 5) knows of a synchronised subsequence's decode, one byte (its
// "trace"): from checkpoint `from` on it is variant `variant`'s decode (the same state at the
// checkpoint: the same decode from there), so the variant's states at the later checkpoints
// are its states there; kNoTrace: nothing known. A start that is a variant's own start (the
// speculative guess when it was right, a segment's first subsequence) is that variant from
// checkpoint 0. With kTracePath, the subsequence's PathRecord holds its own states at the
// checkpoints before `from` (from 4: it met no variant; variant then 15): a transfer-map walk
// that met its variant late, or none, recorded them on its way.
inline constexpr uint8_t kNoTrace = 0xFF;
inline constexpr uint8_t kTracePath = 0x80;
inline constexpr int kTraceNoVariant = 15;
PIXPATH_HD uint8_t make_trace(int variant, int from, bool path = false) {
  if (path) {
    return static_cast<uint8_t>(kTracePath | (variant < 0 ? (kVariantCheckpoints << 4) | kTraceNoVariant
                                                          : (from << 4) | variant));
  }
  return variant < 0 || from < 0 ? kNoTrace : static_cast<uint8_t>((from << 4) | variant);
}
PIXPATH_HD int trace_from(uint8_t trace) {
  return trace == kNoTrace ? kVariantCheckpoints : (trace >> 4) & 7;
}
PIXPATH_HD bool trace_has_path(uint8_t trace) { return trace != kNoTrace && (trace & kTracePath); }
PIXPATH_HD uint8_t transfer_trace(const TransferResult& r) { return make_trace(r.met, r.met_at); }

// A synchronised decode's own states at checkpoints 1 .. kVariantCheckpoints - 1 (the write
// pieces' boundaries) and the slots it passed before each, from its start.
struct PathRecord {
  DecodeState at[kVariantCheckpoints - 1];
  uint32_t slots_at[kVariantCheckpoints - 1] = {};
};

// Whether a transfer walk's checkpoints are worth a PathRecord: it met its variant after
// checkpoint 1 (so write piece 1 would wait for it), or met none.
PIXPATH_HD bool transfer_needs_path(const TransferResult& r) { return r.met < 0 || r.met_at > 1; }
PIXPATH_HD PathRecord transfer_path(const TransferResult& r) {
  PathRecord p;
  for (int k = 1; k < kVariantCheckpoints; ++k) {
    p.at[k - 1] = r.at[k];
    p.slots_at[k - 1] = r.slots_at[k];
  }
  return p;
}

PIXPATH_HD TransferResult transfer_subsequence(const ScanTables& t, const uint8_t* bytes,
                                               DecodeState entry, uint32_t begin,
                                               uint32_t end_bit, uint32_t segment_end_bit,
                                               const VariantRecord* variants,
                                               uint32_t variant_count) {
  TransferResult r;
  DecodeState s = entry;
  uint32_t slots = 0;
  int k = 0;
  uint32_t next = variant_checkpoint(begin, end_bit, 0);  // checkpoint k's bit
  int zpos;
  int32_t value;
  while (s.bit < end_bit) {
    while (s.bit >= next) {
      for (uint32_t v = 0; v < variant_count; ++v) {
        if (same_state(s, variants[v].at[k])) {
          r.end = variants[v].end;
          r.slots = slots + (variants[v].slots - variants[v].slots_at[k]);
          r.met = static_cast<int>(v);
          r.met_at = k;
          return r;
        }
      }
      r.at[k] = s;
      r.slots_at[k] = slots;
      ++k;
      next = k < kVariantCheckpoints ? variant_checkpoint(begin, end_bit, k) : end_bit;
    }
    slots += static_cast<uint32_t>(decode_step(t, bytes, segment_end_bit, s, &zpos, &value));
  }
  for (; k < kVariantCheckpoints; ++k) {  // past the last codeword start: the end state
    r.at[k] = s;
    r.slots_at[k] = slots;
  }
  r.end = s;
  r.slots = slots;
  return r;
}

// sync_subsequence with the variants of this subsequence (variant_count of them): the same
// *start and result (end, slots; result->invalid is not counted here), and the new start's
// trace (for the write pieces).
PIXPATH_HD bool sync_subsequence_variants(const ScanTables& t, const uint8_t* bytes,
                                          DecodeState predecessor_end, uint32_t begin,
                                          uint32_t end_bit, uint32_t segment_end_bit,
                                          const VariantRecord* variants, uint32_t variant_count,
                                          DecodeState* start, SubsequenceResult* result,
                                          uint8_t* trace) {
  if (same_state(*start, predecessor_end)) return false;
  *start = predecessor_end;
  const TransferResult r = transfer_subsequence(t, bytes, predecessor_end, begin, end_bit,
                                                segment_end_bit, variants, variant_count);
  result->end = r.end;
  result->slots = r.slots;
  result->invalid = 0;
  *trace = transfer_trace(r);
  return true;
}

// Step 3a, transfer maps (before the rounds; an acceleration, the rounds still check every
// start state afterwards). The rounds carry a correction one subsequence a round, and screen
// content's long flat stretches make chains of 15-30 wrong subsequences (measured on 4K screen
// JPEGs at 1024 bits). Instead, each subsequence j gets a small set of candidate entry states
// (its "entries"): entry v < V (V = variant_count) is the end state of variant v of
// subsequence j - 1; entries V.. are extra states (below). transfer_subsequence from each entry
// gives either a variant w of j (its end: entry w of j + 1) or, where it meets none, a new
// end state, which becomes an extra entry of j + 1 (deduplicated; at most
// transfer_extra_entries(V), beyond that the result is unknown). The walk that added an
// extra goes on from it into the next subsequence ("decode until synchronised", transfer_chain,
// up to kTransferChain subsequences); what it leaves is decoded in further passes until a pass
// adds none. So each subsequence has a map from its entries to
// the entries of its successor (kTransferUnknown where not known); the true entry of each
// subsequence follows from composing the maps from its segment's first subsequence (whose
// start is known: its end is entry 0 of the next) -- a prefix over function composition, in
// parallel on the GPU. Where the composed index is known the subsequence takes that start,
// end and slot count; elsewhere it keeps the speculative ones and the rounds go on as before.
// Why it works: the true decode almost always meets a variant within its subsequence, and
// where it does not, its end is among the extras (4K screen JPEGs: every start right with
// 2-11 passes, against 15-23 rounds).
inline constexpr int kTransferStride = 32;     // bytes of one subsequence's map
inline constexpr uint8_t kTransferUnknown = 0xFF;
PIXPATH_HD uint32_t transfer_extra_entries(uint32_t variant_count) { return 2 * variant_count + 2; }
inline constexpr int kMaxTransferPasses = 32;
inline constexpr int kTransferChain = 16;  // subsequences one transfer_chain walks at most
// A map holds every entry: at most 10 blocks an MCU (the JPEG limit the parser checks).
static_assert(10 + 2 * 10 + 2 <= kTransferStride, "a subsequence's map must hold its entries");

// An extra entry in one word: the DecodeState in bits 0-47, the pass that added it in bits
// 48-63, or kChainedPass when the walk that added it goes on from it itself (kNoState: an
// empty entry).
inline constexpr uint64_t kNoState = ~uint64_t{0};
inline constexpr uint32_t kChainedPass = 0xFFFF;
PIXPATH_HD uint64_t pack_state(const DecodeState& s) {
  return uint64_t{s.bit} | (uint64_t{s.block} << 32) | (uint64_t{s.z} << 40);
}
PIXPATH_HD uint32_t extra_pass(uint64_t w) { return static_cast<uint32_t>(w >> 48); }
PIXPATH_HD DecodeState unpack_state(uint64_t w) {
  DecodeState s;
  s.bit = static_cast<uint32_t>(w);
  s.block = static_cast<uint8_t>(w >> 32);
  s.z = static_cast<uint8_t>(w >> 40);
  return s;
}

// Entry `e` of subsequence j: the end of variant e of j - 1 (`pred_variants`), or extra
// entry e - variant_count of j (`extras`, transfer_extra_entries words).
PIXPATH_HD DecodeState transfer_entry_state(const VariantRecord* pred_variants, const uint64_t* extras,
                                            uint32_t variant_count, uint32_t e) {
  return e < variant_count ? pred_variants[e].end : unpack_state(extras[e - variant_count]);
}

// One entry of subsequence j in pass `pass`: decodes j from `entry` (transfer_subsequence with
// j's `variants`) and sets *map_out (the entry of j + 1 it leads to), *slots_out and
// *trace_out (the trace of a start at that entry, for the write pieces; with kTracePath when
// it wrote the walk's checkpoints to *path_out, transfer_needs_path). An end
// that meets no variant becomes an extra entry of j + 1 (`next_extras`): an equal one is
// reused, else the first empty word is claimed with cas(word*, expected, desired) -> the old
// value (atomicCAS on the GPU), and *added set; none left: kTransferUnknown.
// (The first entries of j + 1 are the ends of j's own `variants`, checked before the extras.)
template <class Cas>
PIXPATH_HD void transfer_entry(const ScanTables& t, const uint8_t* bytes, DecodeState entry,
                               uint32_t begin, uint32_t end_bit, uint32_t segment_end_bit,
                               const VariantRecord* variants, uint32_t variant_count,
                               uint64_t* next_extras, uint32_t pass, Cas cas, uint8_t* map_out,
                               uint32_t* slots_out, uint8_t* trace_out, PathRecord* path_out,
                               bool* added) {
  const TransferResult r = transfer_subsequence(t, bytes, entry, begin, end_bit, segment_end_bit,
                                                variants, variant_count);
  *slots_out = r.slots;
  if (transfer_needs_path(r)) {
    *path_out = transfer_path(r);
    *trace_out = make_trace(r.met, r.met_at, true);
  } else {
    *trace_out = transfer_trace(r);
  }
  if (r.met >= 0) {
    *map_out = static_cast<uint8_t>(r.met);
    return;
  }
  for (uint32_t v = 0; v < variant_count; ++v) {
    if (same_state(variants[v].end, r.end)) {
      *map_out = static_cast<uint8_t>(v);
      return;
    }
  }
  const uint64_t want = pack_state(r.end) | (uint64_t{pass} << 48);
  const uint32_t extras = transfer_extra_entries(variant_count);
  for (uint32_t x = 0; x < extras; ++x) {
    uint64_t w = next_extras[x];
    if (w == kNoState) {
      w = cas(&next_extras[x], kNoState, want);
      if (w == kNoState) {
        *added = true;
        *map_out = static_cast<uint8_t>(variant_count + x);
        return;
      }
    }
    if (same_state(unpack_state(w), r.end)) {
      *map_out = static_cast<uint8_t>(variant_count + x);
      return;
    }
  }
  *map_out = kTransferUnknown;
}

// What a transfer walk reads and writes, per subsequence of one segment (`last`: the segment's
// last subsequence): each subsequence's bits and variants, its extra entries
// (transfer_extra_entries words a subsequence), and per entry (kTransferStride a subsequence)
// its map, slot count, trace and path record (transfer_entry).
struct TransferChainArrays {
  const uint32_t* begin = nullptr;
  const uint32_t* end = nullptr;
  uint32_t segment_end_bit = 0;
  uint32_t last = 0;
  const VariantRecord* variants = nullptr;
  uint32_t variant_count = 0;
  uint64_t* extras = nullptr;
  uint8_t* map = nullptr;
  uint32_t* map_slots = nullptr;
  uint8_t* map_trace = nullptr;
  PathRecord* map_path = nullptr;
};

// Entry e of subsequence j (not its segment's first) in pass `pass`, and on: transfer_entry;
// while the walk's end is a new extra entry of the next subsequence of the segment, claimed by
// this walk, it decodes that subsequence from there too (the extra tagged kChainedPass), up to
// kTransferChain subsequences. An extra it claims and does not follow (the chain's last) is
// left to the next pass: *added. An end that enters the next segment needs no pass (its first
// subsequence's start is known).
template <class Cas>
PIXPATH_HD void transfer_chain(const ScanTables& t, const uint8_t* bytes, const TransferChainArrays& x,
                               uint32_t j, uint32_t e, uint32_t pass, Cas cas, bool* added) {
  const uint32_t nv = x.variant_count, nx = transfer_extra_entries(nv);
  for (int hop = 1;; ++hop) {
    const DecodeState entry =
        transfer_entry_state(x.variants + uint64_t(j - 1) * nv, x.extras + uint64_t(j) * nx, nv, e);
    const bool go_on = j < x.last && hop < kTransferChain;
    const uint64_t at = uint64_t(j) * kTransferStride + e;
    bool claimed = false;
    transfer_entry(t, bytes, entry, x.begin[j], x.end[j], x.segment_end_bit,
                   x.variants + uint64_t(j) * nv, nv, x.extras + uint64_t(j + 1) * nx,
                   go_on ? kChainedPass : pass, cas, &x.map[at], &x.map_slots[at], &x.map_trace[at],
                   &x.map_path[at], &claimed);
    if (!claimed) return;
    if (!go_on) {
      if (j < x.last) *added = true;
      return;
    }
    e = x.map[at];
    ++j;
  }
}

// `then` after `first` (maps of `entries` entries): out[v] = then[first[v]], unknown stays
// unknown. `out` may be `first`.
PIXPATH_HD void compose_transfer(const uint8_t* first, const uint8_t* then, uint8_t* out,
                                 uint32_t entries) {
  for (uint32_t v = 0; v < entries; ++v) {
    out[v] = first[v] == kTransferUnknown ? kTransferUnknown : then[first[v]];
  }
}

// Step 3's bounded fallback for one segment (subsequences [first, first + count)): in order,
// each subsequence whose start differs from its predecessor's end is decoded again from it
// (its trace, when `trace` is given, becomes kNoTrace). Arrays are indexed by subsequence.
PIXPATH_HD void sync_segment_serially(const ScanTables& t, const uint8_t* bytes, uint32_t first,
                                      uint32_t count, const uint32_t* end_bit,
                                      uint32_t segment_end_bit, DecodeState* start,
                                      DecodeState* end, uint32_t* slots, uint8_t* trace) {
  for (uint32_t j = first + 1; j < first + count; ++j) {
    SubsequenceResult r;
    if (sync_subsequence(t, bytes, end[j - 1], end_bit[j], segment_end_bit, &start[j], &r)) {
      end[j] = r.end;
      slots[j] = r.slots;
      if (trace) trace[j] = kNoTrace;
    }
  }
}

// The coefficient index of block `block` (in scan order: MCU by MCU) in the planar layout.
// 32-bit divisions where the block number fits (every picture the parser's size limits let
// through; a 64-bit division is several times dearer on the GPU).
PIXPATH_HD uint64_t block_coefficient_offset(const BlockLayout& l, uint64_t block) {
  uint64_t mx, my;
  uint32_t k;
  if (block <= 0xFFFFFFFFull) {
    const uint32_t b = static_cast<uint32_t>(block);
    const uint32_t mcu = b / l.blocks_per_mcu;
    k = b - mcu * l.blocks_per_mcu;
    mx = mcu % l.mcus_x;
    my = mcu / l.mcus_x;
  } else {
    const uint64_t mcu = block / l.blocks_per_mcu;
    k = static_cast<uint32_t>(block - mcu * l.blocks_per_mcu);
    mx = mcu % l.mcus_x;
    my = mcu / l.mcus_x;
  }
  const uint32_t c = l.block_component[k];
  const uint64_t bx = mx * l.comp_h[c] + l.block_dx[k];
  const uint64_t by = my * l.comp_v[c] + l.block_dy[k];
  return l.comp_offset[c] + (by * l.comp_blocks_w[c] + bx) * 64;
}

inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

struct WriteResult {
  uint32_t slots = 0;
  uint32_t first_invalid_slot = kNoSlot;  // the slot (within the segment) of a bad code
  uint32_t first_past_63_slot = kNoSlot;  // the slot of a run past coefficient 63
  // The bit after the codeword that completes the segment's last block, when this
  // subsequence decodes it (kNoSlot otherwise); past the segment's end when that codeword read
  // bits the data does not have.
  uint32_t last_block_end_bit = kNoSlot;
};

// Step 5: decodes from the synchronised `start`, whose first slot within its segment is
// `first_slot`, and writes the coefficients of slots below `segment_slots` (the segment's
// blocks x 64; later slots are the padding after the last block) into `out`, the segment's
// first block being `segment_first_block`. `natural` maps zigzag to natural order.
PIXPATH_HD WriteResult write_subsequence(const ScanTables& t, const uint8_t* bytes,
                                         DecodeState start, uint32_t end_bit,
                                         uint32_t segment_end_bit, uint32_t first_slot,
                                         uint32_t segment_slots, uint64_t segment_first_block,
                                         const uint8_t* natural, int16_t* out) {
  WriteResult r;
  DecodeState s = start;
  uint32_t slot = first_slot;  // the slot of the current block's coefficient s.z
  uint64_t cached_block = ~uint64_t{0}, cached_offset = 0;  // block_coefficient_offset, once a block
  int zpos;
  int32_t value;
  while (s.bit < end_bit) {
    const uint32_t block_slot = slot - s.z;
    bool past_63 = false;
    const int passed = decode_step(t, bytes, segment_end_bit, s, &zpos, &value, &past_63);
    if (slot < segment_slots) {
      if (passed == 0 && r.first_invalid_slot == kNoSlot) r.first_invalid_slot = slot;
      if (past_63 && r.first_past_63_slot == kNoSlot) r.first_past_63_slot = slot;
      if (uint64_t(slot) + uint32_t(passed) >= segment_slots) r.last_block_end_bit = s.bit;
    }
    if (passed == 0) {
    } else if (zpos >= 0 && value != 0) {
      const uint32_t at = block_slot + static_cast<uint32_t>(zpos);
      if (at < segment_slots) {
        const uint64_t block = segment_first_block + at / 64;
        if (block != cached_block) {
          cached_block = block;
          cached_offset = block_coefficient_offset(t.layout, block);
        }
        out[cached_offset + natural[zpos]] = static_cast<int16_t>(value);
      }
    }
    slot += static_cast<uint32_t>(passed);
    r.slots += static_cast<uint32_t>(passed);
  }
  return r;
}

// Step 5 in pieces: a subsequence's write-out split at checkpoints 1-3 (1/4, 1/2 and 3/4 of
// the way), one thread a piece, so a picture with few subsequences still fills the GPU. Piece
// p >= 1 starts at the decode's state at checkpoint p (the first codeword start at or past the
// checkpoint): the variant's state there when the trace's `from` <= p (the same on the true
// decode as on the variant's; its first slot is the subsequence's slot count minus what the
// variant passes from there to the end), else its own recorded state when the trace has a
// PathRecord (its first slot: the subsequence's plus the slots recorded before it). Piece 0
// starts at the synchronised start and ends at the first known boundary. Pieces whose start is
// not known have nothing to do (the piece before covers them); without a trace piece 0 writes
// the whole subsequence. The pieces together decode exactly the codewords write_subsequence
// decodes from `start`.
inline constexpr int kWritePieces = 4;

struct WritePiece {
  DecodeState start;
  uint32_t end_bit = 0;     // decodes the codewords that start before it
  uint32_t first_slot = 0;  // the slot of `start` within the segment
};

// Piece p of a subsequence [begin, end_bit) whose synchronised decode starts at `start` (slot
// `first_slot`) and passes `slots` slots; `variants` are its own, `path` its PathRecord (read
// only with kTracePath). False: nothing to do.
PIXPATH_HD bool write_piece(const VariantRecord* variants, uint8_t trace, const PathRecord* path,
                            DecodeState start, uint32_t begin, uint32_t end_bit,
                            uint32_t first_slot, uint32_t slots, int p, WritePiece* out) {
  const int from = trace_from(trace);
  const bool own = trace_has_path(trace);
  const int variant = trace == kNoTrace ? kTraceNoVariant : trace & 15;
  const auto boundary = [&](int q) {
    return q < kWritePieces ? variant_checkpoint(begin, end_bit, q) : end_bit;
  };
  if (p == 0) {
    out->start = start;
    out->first_slot = first_slot;
    out->end_bit = boundary(own || from <= 1 ? 1 : from);
    return true;
  }
  if (p < from) {
    if (!own) return false;
    out->start = path->at[p - 1];
    out->first_slot = first_slot + path->slots_at[p - 1];
  } else {
    const VariantRecord& v = variants[variant];
    out->start = v.at[p];
    out->first_slot = first_slot + slots - (v.slots - v.slots_at[p]);
  }
  out->end_bit = boundary(p + 1);
  return true;
}

// What the checks of one segment found (step 5, see the header comment); a bit set per kind.
enum EntropyDamage : uint32_t {
  kDamageBadCode = 1,      // a pattern that is no Huffman code (before the last block's end)
  kDamagePast63 = 2,       // a run past coefficient 63
  kDamageEndsEarly = 4,    // the data ends before the last block, or inside its last codeword
  kDamageExtraBytes = 8,   // a whole byte or more after the last block
};

// Whole bytes left in a segment after its last block ends at `last_block_end_bit` (the padding
// to the byte boundary, up to 7 bits, is not counted); 0 when the block ends at or past the end.
PIXPATH_HD uint32_t extraneous_bytes(uint32_t last_block_end_bit, uint32_t segment_end_bit) {
  return last_block_end_bit < segment_end_bit ? (segment_end_bit - last_block_end_bit) / 8 : 0;
}

// The damage one subsequence's write-out shows (EntropyDamage bits): its bad codes and runs
// past 63, and, for the subsequence that completes the segment's last block, whether that
// block's last codeword needed bits past the data or whole bytes follow it. A segment's damage
// is the OR over its subsequences plus slot_sum_damage.
PIXPATH_HD uint32_t subsequence_damage(const WriteResult& w, uint32_t segment_end_bit) {
  uint32_t d = 0;
  if (w.first_invalid_slot != kNoSlot) d |= kDamageBadCode;
  if (w.first_past_63_slot != kNoSlot) d |= kDamagePast63;
  if (w.last_block_end_bit != kNoSlot) {
    if (w.last_block_end_bit > segment_end_bit) {
      d |= kDamageEndsEarly;
    } else if (extraneous_bytes(w.last_block_end_bit, segment_end_bit) > 0) {
      d |= kDamageExtraBytes;
    }
  }
  return d;
}

// Fewer coefficient slots decoded in a segment than its blocks x 64: its data ends early (no
// subsequence then completes the last block).
PIXPATH_HD uint32_t slot_sum_damage(uint64_t slot_sum, uint32_t segment_slots) {
  return slot_sum < segment_slots ? uint32_t(kDamageEndsEarly) : 0u;
}

// Step 6, DC prediction (libjpeg's last_dc_val, reset at each restart): the DC differences
// become DC values, a running sum per component in block order within each segment. One
// segmented scan over the scan's blocks in MCU order, in tiles of kDcTileBlocks blocks (one
// thread a block on the GPU):
//  6a each tile's inclusive scan (dc_scan_element, dc_combine), written back in place, and
//     its total;
//  6b an exclusive scan of the tile totals: each tile's carry;
//  6c each block that no segment start precedes within its tile (dc_takes_carry) adds its
//     tile's carry (on the GPU: the IDCT thread of the block, before it reads it).
// Sums wrap as uint32 and the stored values are their low 16 bits (libjpeg-turbo's unsigned
// DC arithmetic), so the tiled sums give the values of one serial pass.
inline constexpr uint32_t kDcTileBlocks = 256;

// A stretch of blocks: the sum of its DC differences per component since its last segment
// start, and whether one lies in it.
struct DcSums {
  uint32_t v[4] = {0, 0, 0, 0};
  uint32_t reset = 0;
};

// The stretch `a` followed by the stretch `b` (associative: a segmented sum).
PIXPATH_HD DcSums dc_combine(const DcSums& a, const DcSums& b) {
  if (b.reset) return b;
  DcSums r;
  for (int c = 0; c < 4; ++c) r.v[c] = a.v[c] + b.v[c];
  r.reset = a.reset;
  return r;
}

// Whether a segment (restart interval of restart_mcus MCUs; 0: none, one segment) starts at
// block `block` of the scan.
PIXPATH_HD bool dc_segment_starts_at(uint32_t block, uint32_t blocks_per_mcu, uint32_t restart_mcus) {
  if (block % blocks_per_mcu != 0) return false;
  return restart_mcus ? (block / blocks_per_mcu) % restart_mcus == 0 : block == 0;
}

// Block `block`'s element of the scan: its DC difference (the first coefficient of its block
// in `out`, as step 5 wrote it) under its component.
PIXPATH_HD DcSums dc_scan_element(const BlockLayout& l, uint32_t restart_mcus, uint32_t block,
                                  const int16_t* out, uint32_t* component, uint64_t* offset) {
  DcSums e;
  const uint32_t k = block % l.blocks_per_mcu;
  *component = l.block_component[k];
  *offset = block_coefficient_offset(l, block);
  e.v[*component] = static_cast<uint32_t>(static_cast<int32_t>(out[*offset]));
  e.reset = dc_segment_starts_at(block, l.blocks_per_mcu, restart_mcus) ? 1u : 0u;
  return e;
}

// Whether block `block` takes its tile's carry (6c): no segment starts between its tile's
// first block and it.
PIXPATH_HD bool dc_takes_carry(uint32_t block, uint32_t blocks_per_mcu, uint32_t restart_mcus) {
  const uint32_t tile_first = block - block % kDcTileBlocks;
  if (!restart_mcus) return tile_first != 0;  // block 0 starts the only segment
  const uint64_t seg_blocks = uint64_t(restart_mcus) * blocks_per_mcu;
  const uint64_t next_start = (tile_first + seg_blocks - 1) / seg_blocks * seg_blocks;
  return next_start > block;
}

// The scan index (MCU order) of component c's stored block (bx, by): the inverse of
// block_coefficient_offset.
PIXPATH_HD uint32_t block_scan_index(const BlockLayout& l, uint32_t c, uint32_t bx, uint32_t by) {
  uint32_t k0 = 0;
  while (k0 < l.blocks_per_mcu && l.block_component[k0] != c) ++k0;
  const uint32_t h = l.comp_h[c], v = l.comp_v[c];
  const uint32_t mx = bx / h, my = by / v;
  const uint32_t k = k0 + (by - my * v) * h + (bx - mx * h);
  return (my * l.mcus_x + mx) * l.blocks_per_mcu + k;
}

}  // namespace pixpath::codecs::jpeg
