#include "own_jpeg_kernels.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <atomic>

namespace pixpath::cuda::own_jpeg {
namespace {

using codecs::jpeg::decode_subsequence;
using codecs::jpeg::kZigzagToNatural;
using codecs::jpeg::SubsequenceResult;
using codecs::jpeg::WriteResult;

constexpr int kThreads = 128;
constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// The block's threads copy the tables into shared memory (about 11 KB).
__device__ const ScanTables& shared_tables(const ScanTables* global) {
  extern __shared__ uint4 smem[];
  const uint4* src = reinterpret_cast<const uint4*>(global);
  constexpr unsigned kWords = (sizeof(ScanTables) + sizeof(uint4) - 1) / sizeof(uint4);
  for (unsigned i = threadIdx.x; i < kWords; i += blockDim.x) smem[i] = src[i];
  __syncthreads();
  return *reinterpret_cast<const ScanTables*>(smem);
}

constexpr size_t kSharedBytes = (sizeof(ScanTables) + 15) / 16 * 16;

unsigned blocks_for(uint64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

__global__ void speculative_kernel(const ScanTables* tables, const uint8_t* bytes,
                                   SubsequenceArrays a, DecodeState* start, DecodeState* end,
                                   uint32_t* slots) {
  const ScanTables& t = shared_tables(tables);
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= a.count) return;
  DecodeState s;
  s.bit = a.begin[j];
  const SubsequenceResult r = decode_subsequence(t, bytes, s, a.end[j], a.seg_end_bit[a.segment[j]]);
  start[j] = s;
  end[j] = r.end;
  slots[j] = r.slots;
}

// One thread per (subsequence, block index): decode_variant; variant 0 is step 2's guess
// (its trace: variant 0 from checkpoint 0).
__global__ void variants_kernel(const ScanTables* tables, const uint8_t* bytes,
                                SubsequenceArrays a, DecodeState* start, DecodeState* end,
                                uint32_t* slots, VariantRecord* variants, uint32_t nvar,
                                uint8_t* trace) {
  const ScanTables& t = shared_tables(tables);
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= uint64_t(a.count) * nvar) return;
  const uint32_t j = uint32_t(i / nvar), v = uint32_t(i % nvar);
  DecodeState s;
  s.bit = a.begin[j];
  s.block = uint8_t(v);
  const VariantRecord r =
      codecs::jpeg::decode_variant(t, bytes, s, a.begin[j], a.end[j], a.seg_end_bit[a.segment[j]]);
  variants[i] = r;
  if (v == 0) {
    start[j] = s;
    end[j] = r.end;
    slots[j] = r.slots;
    trace[j] = codecs::jpeg::make_trace(0, 0);
  }
}

// One subsequence in one synchronisation round: decoded again from its predecessor's end
// state of the previous round when that differs from its start (sync_subsequence); every entry
// of end_out is written, and with the variants the new start's trace. Returns 1 when it changed.
__device__ uint32_t sync_one(const ScanTables& t, const uint8_t* bytes, const SubsequenceArrays& a,
                             uint32_t j, const DecodeState* end_in, DecodeState* end_out,
                             DecodeState* start, uint32_t* slots, const VariantRecord* variants,
                             uint32_t nvar, uint8_t* trace) {
  DecodeState e = end_in[j];
  uint32_t changed = 0;
  if (a.seg_first_sub[a.segment[j]] != j) {
    const DecodeState pred = end_in[j - 1];
    DecodeState st = start[j];
    SubsequenceResult r;
    uint8_t tr = codecs::jpeg::kNoTrace;
    const uint32_t seg_end = a.seg_end_bit[a.segment[j]];
    const bool moved =
        variants ? codecs::jpeg::sync_subsequence_variants(t, bytes, pred, a.begin[j], a.end[j], seg_end,
                                                           variants + uint64_t(j) * nvar, nvar, &st, &r, &tr)
                 : codecs::jpeg::sync_subsequence(t, bytes, pred, a.end[j], seg_end, &st, &r);
    if (moved) {
      start[j] = st;
      slots[j] = r.slots;
      if (trace) trace[j] = tr;
      e = r.end;
      changed = 1;
    }
  }
  end_out[j] = e;
  return changed;
}

// One atomic per warp for the round's change count (every lane of the warp calls this).
__device__ void count_changes(uint32_t changed, uint32_t* counter) {
  const unsigned m = __ballot_sync(kFullWarp, changed != 0);
  if (m && (threadIdx.x & 31) == 0) atomicAdd(counter, uint32_t(__popc(m)));
}

// Grid-wide (every thread of the cooperative kernel calls it): adds `mine` to this step's
// counter, waits for the whole grid and returns the total. Counters rotate over 3 words: the
// one reset at step s was last read after the barrier of step s - 2 and before that of step
// s - 1, which every thread has passed.
__device__ uint32_t grid_count(cooperative_groups::grid_group& grid, uint32_t mine, uint32_t* flags,
                               uint32_t& step) {
  uint32_t* counter = &flags[kFlagCoopChanged + step % 3];
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&flags[kFlagCoopChanged + (step + 1) % 3], 0u);
  count_changes(mine, counter);
  grid.sync();
  ++step;
  return *static_cast<volatile uint32_t*>(counter);
}

// transfer_entry's claim of an extra entry (jpeg_entropy_kernels.h) between threads.
struct AtomicCas {
  __device__ uint64_t operator()(uint64_t* w, uint64_t expected, uint64_t desired) const {
    return atomicCAS(reinterpret_cast<unsigned long long*>(w), expected, desired);
  }
};

// Step 3a, entry e of subsequence j (not the first of its segment) in pass `pass`, and the
// chain of walks from it (transfer_chain); true when it left an extra entry to the next pass.
__device__ bool transfer_one(const ScanTables& t, const uint8_t* bytes, const SubsequenceArrays& a,
                             uint32_t j, uint32_t e, uint32_t pass, const VariantRecord* variants,
                             uint32_t nvar, const TransferArrays& x) {
  const uint32_t s = a.segment[j];
  codecs::jpeg::TransferChainArrays c;
  c.begin = a.begin;
  c.end = a.end;
  c.segment_end_bit = a.seg_end_bit[s];
  c.last = a.seg_first_sub[s + 1] - 1;
  c.variants = variants;
  c.variant_count = nvar;
  c.extras = x.extras;
  c.map = x.map;
  c.map_slots = x.map_slots;
  c.map_trace = x.map_trace;
  c.map_path = x.map_path;
  bool added = false;
  codecs::jpeg::transfer_chain(t, bytes, c, j, e, pass, AtomicCas{}, &added);
  return added;
}

// Step 3a's first pass: one thread per (subsequence, variant end of its predecessor).
__global__ void transfer_first_pass_kernel(const ScanTables* tables, const uint8_t* bytes,
                                           SubsequenceArrays a, const VariantRecord* variants,
                                           uint32_t nvar, TransferArrays x, uint32_t* flags) {
  const ScanTables& t = shared_tables(tables);
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool added = false;
  if (i < uint64_t(a.count) * nvar) {
    const uint32_t j = uint32_t(i / nvar), e = uint32_t(i % nvar);
    if (a.seg_first_sub[a.segment[j]] != j) added = transfer_one(t, bytes, a, j, e, 0, variants, nvar, x);
  }
  count_changes(added ? 1u : 0u, &flags[kFlagTransferAdded]);
}

// Step 3a after its first pass, at the start of the cooperative kernel (every thread calls
// it): the passes over the extra entries the pass before added; then the composition of the
// maps -- an inclusive scan within each block (shared memory), each block's composed map to
// x.block_maps, and each block's incoming entry from the maps of the blocks before it (block
// 0 starts with the scan's first subsequence, whose map is constant, so the composition of
// those maps gives the entry whatever it is applied to); then the start, end and slot count of
// every subsequence whose entry is known.
__device__ void transfer_in_grid(cooperative_groups::grid_group& grid, const ScanTables& t,
                                 const uint8_t* bytes, const SubsequenceArrays& a,
                                 DecodeState* start, DecodeState* end, uint32_t* slots,
                                 uint8_t* trace, uint32_t* flags, const VariantRecord* variants,
                                 uint32_t nvar, const TransferArrays& x, uint32_t& step) {
  using codecs::jpeg::kTransferStride;
  using codecs::jpeg::kTransferUnknown;
  __shared__ uint8_t maps[2][kThreads][kTransferStride];
  __shared__ uint8_t incoming;
  const uint32_t tid = threadIdx.x;
  const uint32_t j = blockIdx.x * blockDim.x + tid;
  const bool inner = j < a.count && a.seg_first_sub[a.segment[j]] != j;
  const uint32_t nx = codecs::jpeg::transfer_extra_entries(nvar), entries = nvar + nx;
  uint32_t more = *static_cast<volatile uint32_t*>(&flags[kFlagTransferAdded]);
  uint32_t passes = 1;
  for (uint32_t pass = 1; more != 0 && pass < uint32_t(codecs::jpeg::kMaxTransferPasses);
       ++pass, ++passes) {
    bool added = false;
    if (inner) {
      const volatile uint64_t* mine = x.extras + uint64_t(j) * nx;
      for (uint32_t k = 0; k < nx; ++k) {
        const uint64_t w = mine[k];
        if (w != codecs::jpeg::kNoState && codecs::jpeg::extra_pass(w) == pass - 1) {
          added |= transfer_one(t, bytes, a, j, nvar + k, pass, variants, nvar, x);
        }
      }
    }
    more = grid_count(grid, added ? 1u : 0u, flags, step);
  }
  // This thread's map: a segment's first subsequence maps everything to entry 0 (its start is
  // known: its end is variant 0's); past the last subsequence, the identity.
  for (uint32_t v = 0; v < entries; ++v) {
    maps[0][tid][v] = j >= a.count ? uint8_t(v) : !inner ? uint8_t(0) : x.map[uint64_t(j) * kTransferStride + v];
  }
  __syncthreads();
  int cur = 0;
  for (uint32_t d = 1; d < blockDim.x; d <<= 1) {
    if (tid >= d) {
      codecs::jpeg::compose_transfer(maps[cur][tid - d], maps[cur][tid], maps[cur ^ 1][tid], entries);
    } else {
      for (uint32_t v = 0; v < entries; ++v) maps[cur ^ 1][tid][v] = maps[cur][tid][v];
    }
    __syncthreads();
    cur ^= 1;
  }
  if (tid < entries) x.block_maps[uint64_t(blockIdx.x) * kTransferStride + tid] = maps[cur][blockDim.x - 1][tid];
  grid.sync();
  uint8_t in = 0;
  for (uint32_t base = 0; base < blockIdx.x; base += blockDim.x) {
    const uint32_t n = min(blockDim.x, blockIdx.x - base);
    if (tid < n) {
      const volatile uint8_t* src = x.block_maps + uint64_t(base + tid) * kTransferStride;
      for (uint32_t v = 0; v < entries; ++v) maps[cur ^ 1][tid][v] = src[v];
    }
    __syncthreads();
    if (tid == 0) {
      for (uint32_t k = 0; k < n; ++k) in = in == kTransferUnknown ? kTransferUnknown : maps[cur ^ 1][k][in];
    }
    __syncthreads();
  }
  if (tid == 0) incoming = in;
  __syncthreads();
  in = incoming;
  const uint8_t idx = in == kTransferUnknown ? kTransferUnknown : maps[cur][tid][in];
  const uint8_t prev = tid == 0 || in == kTransferUnknown ? in : maps[cur][tid - 1][in];
  bool resolved = false;
  if (inner && prev != kTransferUnknown && idx != kTransferUnknown) {
    start[j] = codecs::jpeg::transfer_entry_state(variants + uint64_t(j - 1) * nvar,
                                                  x.extras + uint64_t(j) * nx, nvar, prev);
    slots[j] = x.map_slots[uint64_t(j) * kTransferStride + prev];
    trace[j] = x.map_trace[uint64_t(j) * kTransferStride + prev];
    if (codecs::jpeg::trace_has_path(trace[j])) x.path[j] = x.map_path[uint64_t(j) * kTransferStride + prev];
    end[j] = codecs::jpeg::transfer_entry_state(variants + uint64_t(j) * nvar,
                                                x.extras + uint64_t(j + 1) * nx, nvar, idx);
    resolved = true;
  }
  count_changes(resolved ? 1u : 0u, &flags[kFlagTransferResolved]);
  if (j == 0) flags[kFlagTransferPasses] = passes;
  grid.sync();  // the rounds read the neighbours' end states
}

// All rounds in one cooperative launch (the grid fits on the device at once): step 3a first
// when x.map is set, then the rounds, a grid-wide barrier between them (grid_count), the loop
// left as soon as a round changed nothing; at the cap, the serial walk.
__global__ void sync_coop_kernel(const ScanTables* tables, const uint8_t* bytes,
                                 SubsequenceArrays a, DecodeState* end_a, DecodeState* end_b,
                                 DecodeState* start, uint32_t* slots, uint8_t* trace,
                                 uint32_t* flags, const VariantRecord* variants, uint32_t nvar,
                                 TransferArrays x, int max_rounds) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const ScanTables& t = shared_tables(tables);
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t step = 0;
  if (x.map) transfer_in_grid(grid, t, bytes, a, start, end_a, slots, trace, flags, variants, nvar, x, step);
  DecodeState* in = end_a;
  DecodeState* out = end_b;
  for (int round = 0; round < max_rounds; ++round) {
    const uint32_t changed =
        j < a.count ? sync_one(t, bytes, a, j, in, out, start, slots, variants, nvar, trace) : 0u;
    const uint32_t n = grid_count(grid, changed, flags, step);
    DecodeState* tmp = in;
    in = out;
    out = tmp;
    if (n == 0) {
      if (j == 0) flags[kFlagSyncRounds] = uint32_t(round);
      return;
    }
  }
  if (j == 0) {
    flags[kFlagSyncRounds] = uint32_t(max_rounds);
    flags[kFlagNotConverged] = 1;
  }
  // The cap was hit (every thread passed the last round's barrier; `in` holds its end
  // states): one thread per segment walks its subsequences in order.
  if (j < a.segments) {
    const uint32_t first = a.seg_first_sub[j];
    codecs::jpeg::sync_segment_serially(t, bytes, first, a.seg_first_sub[j + 1] - first, a.end,
                                        a.seg_end_bit[j], start, in, slots, trace);
  }
}

// One round of the fallback chain; exits at once (the whole grid alike) when the round before
// changed nothing, so a converged picture costs the rest of the chain only empty launches.
__global__ void sync_round_kernel(const ScanTables* tables, const uint8_t* bytes,
                                  SubsequenceArrays a, const DecodeState* end_in,
                                  DecodeState* end_out, DecodeState* start, uint32_t* slots,
                                  uint8_t* trace, uint32_t* flags, const VariantRecord* variants,
                                  uint32_t nvar, int round) {
  if (round > 0 && flags[kFlagRoundChanged + round - 1] == 0) return;
  const ScanTables& t = shared_tables(tables);
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t changed =
      j < a.count ? sync_one(t, bytes, a, j, end_in, end_out, start, slots, variants, nvar, trace) : 0u;
  count_changes(changed, &flags[kFlagRoundChanged + round]);
}

// After the chain: the rounds that changed something, and whether the chain hit its cap.
__global__ void sync_summary_kernel(uint32_t* flags, int launched) {
  if (threadIdx.x != 0) return;
  int rounds = 0;
  while (rounds < launched && flags[kFlagRoundChanged + rounds] != 0) ++rounds;
  flags[kFlagSyncRounds] = uint32_t(rounds);
  flags[kFlagNotConverged] = rounds == launched ? 1u : 0u;
}

// After the fallback chain, only when its rounds hit their cap (flags[kFlagNotConverged]):
// one thread per segment walks its subsequences in order. `end` holds the last round's end
// states.
__global__ void serial_sync_kernel(const ScanTables* tables, const uint8_t* bytes,
                                   SubsequenceArrays a, DecodeState* start, DecodeState* end,
                                   uint32_t* slots, uint8_t* trace, const uint32_t* flags) {
  if (flags[kFlagNotConverged] == 0) return;
  const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= a.segments) return;
  const uint32_t first = a.seg_first_sub[s];
  codecs::jpeg::sync_segment_serially(*tables, bytes, first, a.seg_first_sub[s + 1] - first, a.end,
                                      a.seg_end_bit[s], start, end, slots, trace);
}

// One thread block's exclusive scan of items 0..n-1 under the associative `op` (identity
// T{}): each thread folds a stretch of items, a Hillis-Steele scan over the stretches' totals
// in `part` (blockDim.x entries of shared memory), then each thread walks its stretch again
// and hands write(i, op of the items before i). Returns the total (every thread). `item(i)` is
// read twice.
template <class T, class Op, class Item, class Write>
__device__ T block_exclusive_scan(uint32_t n, T* part, Op op, Item item, Write write) {
  const uint32_t t = threadIdx.x, nt = blockDim.x;
  const uint32_t chunk = (n + nt - 1) / nt;
  const uint32_t b = min(n, t * chunk), e = min(n, b + chunk);
  T run{};
  for (uint32_t i = b; i < e; ++i) run = op(run, item(i));
  part[t] = run;
  __syncthreads();
  for (uint32_t off = 1; off < nt; off <<= 1) {  // Hillis-Steele inclusive scan
    const T y = t >= off ? part[t - off] : T{};
    __syncthreads();
    if (t >= off) part[t] = op(y, part[t]);
    __syncthreads();
  }
  T pre = t > 0 ? part[t - 1] : T{};
  const T total = part[nt - 1];
  for (uint32_t i = b; i < e; ++i) {
    write(i, pre);
    pre = op(pre, item(i));
  }
  return total;
}

// Step 4 in one thread block: the exclusive scan of the slot counts into excl[0..count], then
// each subsequence's first slot within its segment and each segment's damage word
// (slot_sum_damage; every word written, no memset needed).
__global__ void offsets_kernel(SubsequenceArrays a, const uint32_t* slots, uint64_t* excl,
                               uint32_t* first_slot, uint32_t* seg_damage) {
  __shared__ uint64_t part[1024];
  const uint32_t t = threadIdx.x, nt = blockDim.x, count = a.count;
  const uint64_t total = block_exclusive_scan(
      count, part, [](uint64_t x, uint64_t y) { return x + y; },
      [&](uint32_t i) { return uint64_t(slots[i]); }, [&](uint32_t i, uint64_t pre) { excl[i] = pre; });
  if (t == nt - 1) excl[count] = total;
  __syncthreads();  // the block's writes to excl are visible to the block from here
  for (uint32_t j = t; j < count; j += nt) {
    const uint64_t v = excl[j] - excl[a.seg_first_sub[a.segment[j]]];
    first_slot[j] = v > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(v);
  }
  for (uint32_t s = t; s < a.segments; s += nt) {
    const uint64_t in_segment = excl[a.seg_first_sub[s + 1]] - excl[a.seg_first_sub[s]];
    seg_damage[s] = codecs::jpeg::slot_sum_damage(in_segment, a.seg_slots[s]);
  }
}

// One thread per subsequence, or with the traces one per write piece (write_piece: the pieces
// of a subsequence on neighbouring threads).
__global__ void write_kernel(const ScanTables* tables, const uint8_t* bytes, SubsequenceArrays a,
                            const DecodeState* start, const uint32_t* first_slot,
                            const uint32_t* slots, const VariantRecord* variants, uint32_t nvar,
                            const uint8_t* trace, const PathRecord* path, const uint8_t* natural,
                            int16_t* out, uint32_t* seg_damage, uint32_t* flags) {
  __shared__ uint8_t nat[64];
  if (threadIdx.x < 64) nat[threadIdx.x] = natural[threadIdx.x];
  const ScanTables& t = shared_tables(tables);  // its barrier also publishes nat
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint32_t pieces = trace ? uint32_t(codecs::jpeg::kWritePieces) : 1u;
  if (i >= uint64_t(a.count) * pieces) return;
  const uint32_t j = uint32_t(i / pieces);
  codecs::jpeg::WritePiece piece{start[j], a.end[j], first_slot[j]};
  if (trace && !codecs::jpeg::write_piece(variants + uint64_t(j) * nvar, trace[j], path + j, start[j],
                                          a.begin[j], a.end[j], first_slot[j], slots[j], int(i % pieces),
                                          &piece)) {
    return;
  }
  const uint32_t s = a.segment[j];
  const uint32_t seg_end = a.seg_end_bit[s];
  const WriteResult w = codecs::jpeg::write_subsequence(
      t, bytes, piece.start, piece.end_bit, seg_end, piece.first_slot, a.seg_slots[s],
      a.seg_first_block[s], nat, out);
  const uint32_t d = codecs::jpeg::subsequence_damage(w, seg_end);
  if (d) {
    atomicOr(&seg_damage[s], d);
    if (d & codecs::jpeg::kDamageExtraBytes) {
      atomicAdd(&flags[kFlagExtraBytes], codecs::jpeg::extraneous_bytes(w.last_block_end_bit, seg_end));
    }
  }
}

using codecs::jpeg::DcSums;
using codecs::jpeg::kDcTileBlocks;

__device__ DcSums shfl_up(const DcSums& x, unsigned d) {
  DcSums r;
  for (int c = 0; c < 4; ++c) r.v[c] = __shfl_up_sync(kFullWarp, x.v[c], d);
  r.reset = __shfl_up_sync(kFullWarp, x.reset, d);
  return r;
}

// Step 6a, one tile of kDcTileBlocks blocks a thread block: the tile's inclusive segmented
// scan (warp shuffles, then the warps' totals), written back in place, and its total. Being
// the first kernel after the write-out, it also turns the segments' damage words into the
// summary words (first segment and count per kind).
__global__ void dc_tile_kernel(const ScanTables* tables, DcScan dc, int16_t* out, DcSums* tile_sums,
                               uint32_t segments, const uint32_t* seg_damage, uint32_t* flags) {
  __shared__ DcSums warp_sum[kDcTileBlocks / 32];
  const uint32_t b = blockIdx.x * kDcTileBlocks + threadIdx.x;
  DcSums x;
  uint32_t c = 0;
  uint64_t at = 0;
  if (b < dc.scan_blocks) x = codecs::jpeg::dc_scan_element(tables->layout, dc.restart_mcus, b, out, &c, &at);
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (unsigned d = 1; d < 32; d <<= 1) {
    const DcSums y = shfl_up(x, d);
    if (lane >= d) x = codecs::jpeg::dc_combine(y, x);
  }
  if (lane == 31) warp_sum[warp] = x;
  __syncthreads();
  if (warp > 0) {
    DcSums p = warp_sum[0];
    for (unsigned w = 1; w < warp; ++w) p = codecs::jpeg::dc_combine(p, warp_sum[w]);
    x = codecs::jpeg::dc_combine(p, x);
  }
  if (b < dc.scan_blocks) out[at] = int16_t(int32_t(x.v[c]));
  if (threadIdx.x == kDcTileBlocks - 1) tile_sums[blockIdx.x] = x;
  for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < segments; s += gridDim.x * blockDim.x) {
    const uint32_t d = seg_damage[s];
    for (int k = 0; d && k < 4; ++k) {
      if (d & (1u << k)) {
        atomicMin(&flags[kFlagFirstSegment + k], s);
        atomicAdd(&flags[kFlagSegments + k], 1u);
      }
    }
  }
}

// Step 6b, one thread block: each tile's carry, the exclusive segmented scan of the tiles'
// totals.
__global__ void dc_carry_kernel(const DcSums* tile_sums, uint32_t tiles, uint4* carry) {
  __shared__ DcSums part[1024];
  block_exclusive_scan(
      tiles, part, [](const DcSums& x, const DcSums& y) { return codecs::jpeg::dc_combine(x, y); },
      [&](uint32_t i) { return tile_sums[i]; },
      [&](uint32_t i, const DcSums& pre) { carry[i] = make_uint4(pre.v[0], pre.v[1], pre.v[2], pre.v[3]); });
}

// One thread per 8x8 block, all components in one grid. Step 6c first: the block's DC takes
// its tile's carry (dc_takes_carry), in place.
__global__ void idct_kernel(int16_t* coefficients, IdctPlanes p, const uint16_t* quant,
                            uint8_t* planes, codecs::jpeg::IdctArithmetic arithmetic,
                            const ScanTables* tables, DcScan dc) {
  __shared__ uint16_t q[4 * 64];
  __shared__ codecs::jpeg::BlockLayout layout;
  for (int i = int(threadIdx.x); i < p.components * 64; i += int(blockDim.x)) q[i] = quant[i];
  if (threadIdx.x == 0) layout = tables->layout;
  __syncthreads();
  const uint64_t b = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= p.first_block[p.components]) return;
  int c = 0;
  while (c + 1 < p.components && b >= p.first_block[c + 1]) ++c;
  const uint64_t k = b - p.first_block[c];
  const uint32_t by = uint32_t(k / p.blocks_w[c]), bx = uint32_t(k % p.blocks_w[c]);
  int16_t* coef = coefficients + p.coefficient_offset[c] + k * 64;
  const uint32_t i = codecs::jpeg::block_scan_index(layout, uint32_t(c), bx, by);
  if (i < dc.scan_blocks && codecs::jpeg::dc_takes_carry(i, layout.blocks_per_mcu, dc.restart_mcus)) {
    const uint4 add = dc.carry[i / kDcTileBlocks];
    const uint32_t a = c == 0 ? add.x : c == 1 ? add.y : c == 2 ? add.z : add.w;
    coef[0] = int16_t(int32_t(uint32_t(int32_t(coef[0])) + a));
  }
  codecs::jpeg::idct_islow_block(coef, q + 64 * c,
                                 planes + p.plane_offset[c] + uint64_t(by) * 8 * p.pitch[c] +
                                     uint64_t(bx) * 8,
                                 p.pitch[c], arithmetic);
}

__global__ void rgba_kernel(codecs::jpeg::SamplePlane luma, codecs::jpeg::SamplePlane cb,
                            codecs::jpeg::SamplePlane cr, codecs::jpeg::Upsampling upsampling,
                            int width, int height, uint8_t* out, size_t pitch) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= width || y >= height) return;
  // jpeg_pixel_rgba's steps, spelled out so that no plane's address is taken (that put the
  // three planes on the thread's stack: 48 bytes of local memory a pixel).
  const int l = codecs::jpeg::sample_at(luma, x, y);
  uint8_t px[3] = {uint8_t(l), uint8_t(l), uint8_t(l)};
  if (cb.data != nullptr) {
    codecs::jpeg::ycc_to_rgb(l, codecs::jpeg::upsampled(cb, upsampling, x, y),
                             codecs::jpeg::upsampled(cr, upsampling, x, y), px);
  }
  *reinterpret_cast<uchar4*>(out + uint64_t(y) * pitch + uint64_t(x) * 4) =
      make_uchar4(px[0], px[1], px[2], 255);
}

// The most blocks of sync_coop_kernel the current device holds at once (0: no cooperative
// launch there), asked once per device.
unsigned cooperative_capacity() {
  constexpr int kDevices = 64;
  static std::atomic<int> cached[kDevices];  // 0: not asked yet; else capacity + 1
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kDevices) return 0;
  if (const int c = cached[dev].load(std::memory_order_relaxed); c > 0) return unsigned(c - 1);
  int coop = 0, sms = 0, per_sm = 0;
  unsigned capacity = 0;
  if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) == cudaSuccess && coop &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sync_coop_kernel, kThreads,
                                                    kSharedBytes) == cudaSuccess) {
    capacity = unsigned(sms) * unsigned(per_sm);
  }
  (void)cudaGetLastError();  // a failed query leaves no error behind
  cached[dev].store(int(capacity) + 1, std::memory_order_relaxed);
  return capacity;
}

}  // namespace

cudaError_t launch_speculative(const ScanTables* tables, const uint8_t* bytes,
                               const SubsequenceArrays& a, DecodeState* start, DecodeState* end,
                               uint32_t* slots, VariantRecord* variants, uint32_t variant_count,
                               uint8_t* trace, cudaStream_t stream) {
  if (!a.count) return cudaSuccess;
  if (variants && variant_count > 0) {
    if (!trace) return cudaErrorInvalidValue;
    variants_kernel<<<blocks_for(uint64_t(a.count) * variant_count), kThreads, kSharedBytes, stream>>>(
        tables, bytes, a, start, end, slots, variants, variant_count, trace);
  } else {
    speculative_kernel<<<blocks_for(a.count), kThreads, kSharedBytes, stream>>>(tables, bytes, a, start, end, slots);
  }
  return cudaGetLastError();
}

size_t transfer_map_bytes(uint32_t count) { return size_t(count) * codecs::jpeg::kTransferStride; }
size_t transfer_slots_bytes(uint32_t count) { return transfer_map_bytes(count) * sizeof(uint32_t); }
size_t transfer_path_bytes(uint32_t count) { return transfer_map_bytes(count) * sizeof(PathRecord); }
size_t transfer_extras_bytes(uint32_t count, uint32_t variant_count) {
  return (size_t(count) + 1) * codecs::jpeg::transfer_extra_entries(variant_count) * sizeof(uint64_t);
}
size_t transfer_block_map_bytes(uint32_t count) {
  return size_t(blocks_for(count)) * codecs::jpeg::kTransferStride;
}

cudaError_t launch_sync(const ScanTables* tables, const uint8_t* bytes, const SubsequenceArrays& a,
                        DecodeState* end_a, DecodeState* end_b, DecodeState* start,
                        uint32_t* slots, uint8_t* trace, uint32_t* flags,
                        const VariantRecord* variants, uint32_t variant_count,
                        const TransferArrays* transfer, bool allow_cooperative, int round_cap,
                        cudaStream_t stream, bool* cooperative) {
  *cooperative = false;
  if (!a.count) return cudaSuccess;
  const unsigned blocks = blocks_for(a.count);
  if (allow_cooperative && blocks <= cooperative_capacity()) {
    SubsequenceArrays arr = a;
    TransferArrays x;  // step 3a only with its arrays and the variants
    if (transfer && transfer->map && variants && variant_count > 0) {
      x = *transfer;
      if (const cudaError_t e = cudaMemsetAsync(x.map, 0xFF, transfer_map_bytes(a.count), stream);
          e != cudaSuccess) {
        return e;
      }
      if (const cudaError_t e = cudaMemsetAsync(x.extras, 0xFF, transfer_extras_bytes(a.count, variant_count), stream);
          e != cudaSuccess) {
        return e;
      }
      transfer_first_pass_kernel<<<blocks_for(uint64_t(a.count) * variant_count), kThreads, kSharedBytes, stream>>>(
          tables, bytes, a, variants, variant_count, x, flags);
    }
    int max_rounds = round_cap > 0 ? std::min(round_cap, kCoopSyncRounds) : kCoopSyncRounds;
    void* args[] = {&tables, &bytes, &arr,   &end_a,    &end_b,         &start, &slots,
                    &trace,  &flags, &variants, &variant_count, &x, &max_rounds};
    if (cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&sync_coop_kernel), dim3(blocks),
                                    dim3(kThreads), args, kSharedBytes, stream) == cudaSuccess) {
      *cooperative = true;
    } else {
      (void)cudaGetLastError();  // refused (too large, MPS, ...): the chain below instead
    }
  }
  if (*cooperative) return cudaSuccess;  // the serial walk, if needed, ran in the kernel
  const int launched = round_cap > 0 ? std::min(round_cap, kLaunchedSyncRounds) : kLaunchedSyncRounds;
  for (int round = 0; round < launched; ++round) {
    const DecodeState* in = round % 2 ? end_b : end_a;
    DecodeState* out = round % 2 ? end_a : end_b;
    sync_round_kernel<<<blocks, kThreads, kSharedBytes, stream>>>(
        tables, bytes, a, in, out, start, slots, trace, flags, variants, variant_count, round);
  }
  sync_summary_kernel<<<1, 32, 0, stream>>>(flags, launched);
  DecodeState* last_end = launched % 2 ? end_b : end_a;  // after R rounds: end_b for odd R
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (!a.segments) return cudaSuccess;
  serial_sync_kernel<<<blocks_for(a.segments), kThreads, 0, stream>>>(tables, bytes, a, start,
                                                                      last_end, slots, trace, flags);
  return cudaGetLastError();
}

cudaError_t launch_offsets(const SubsequenceArrays& a, const uint32_t* slots, uint64_t* excl,
                           uint32_t* first_slot, uint32_t* seg_damage, cudaStream_t stream) {
  if (!a.count) return cudaSuccess;
  offsets_kernel<<<1, 1024, 0, stream>>>(a, slots, excl, first_slot, seg_damage);
  return cudaGetLastError();
}

cudaError_t launch_write(const ScanTables* tables, const uint8_t* bytes,
                         const SubsequenceArrays& a, const DecodeState* start,
                         const uint32_t* first_slot, const uint32_t* slots,
                         const VariantRecord* variants, uint32_t variant_count,
                         const uint8_t* trace, const PathRecord* path, const uint8_t* natural,
                         int16_t* out, uint32_t* seg_damage, uint32_t* flags, cudaStream_t stream) {
  if (!a.count) return cudaSuccess;
  if (!variants || variant_count == 0) trace = nullptr;  // pieces need the variants
  const uint64_t threads = uint64_t(a.count) * (trace ? codecs::jpeg::kWritePieces : 1);
  write_kernel<<<blocks_for(threads), kThreads, kSharedBytes, stream>>>(
      tables, bytes, a, start, first_slot, slots, variants, variant_count, trace, path, natural, out,
      seg_damage, flags);
  return cudaGetLastError();
}

size_t dc_tile_sums_bytes(uint32_t scan_blocks) {
  return size_t((scan_blocks + kDcTileBlocks - 1) / kDcTileBlocks) * sizeof(DcSums);
}
size_t dc_carry_bytes(uint32_t scan_blocks) {
  return size_t((scan_blocks + kDcTileBlocks - 1) / kDcTileBlocks) * sizeof(uint4);
}

cudaError_t launch_dc(const ScanTables* tables, const DcScan& dc, void* tile_sums, int16_t* out,
                      uint32_t segments, const uint32_t* seg_damage, uint32_t* flags,
                      cudaStream_t stream) {
  if (!dc.scan_blocks || !dc.carry) return cudaErrorInvalidValue;
  const uint32_t tiles = (dc.scan_blocks + kDcTileBlocks - 1) / kDcTileBlocks;
  auto* sums = static_cast<DcSums*>(tile_sums);
  dc_tile_kernel<<<tiles, kDcTileBlocks, 0, stream>>>(tables, dc, out, sums, segments, seg_damage, flags);
  dc_carry_kernel<<<1, 1024, 0, stream>>>(sums, tiles, dc.carry);
  return cudaGetLastError();
}

cudaError_t launch_idct(int16_t* coefficients, const IdctPlanes& p, const uint16_t* quant,
                        uint8_t* planes, codecs::jpeg::IdctArithmetic arithmetic,
                        const ScanTables* tables, const DcScan& dc, cudaStream_t stream) {
  if (p.components < 1 || p.components > 4 || !dc.carry) return cudaErrorInvalidValue;
  const uint64_t n = p.first_block[p.components];
  if (!n) return cudaSuccess;
  idct_kernel<<<blocks_for(n), kThreads, 0, stream>>>(coefficients, p, quant, planes, arithmetic, tables, dc);
  return cudaGetLastError();
}

}  // namespace pixpath::cuda::own_jpeg

namespace pixpath::cuda::own_jpeg {

cudaError_t launch_rgba(codecs::jpeg::SamplePlane luma, codecs::jpeg::SamplePlane cb,
                        codecs::jpeg::SamplePlane cr, codecs::jpeg::Upsampling upsampling,
                        int width, int height, uint8_t* out, size_t pitch, cudaStream_t stream) {
  if (width <= 0 || height <= 0) return cudaSuccess;
  const dim3 block(32, 8);
  const dim3 grid(unsigned((width + 31) / 32), unsigned((height + 7) / 8));
  rgba_kernel<<<grid, block, 0, stream>>>(luma, cb, cr, upsampling, width, height, out, pitch);
  return cudaGetLastError();
}

}  // namespace pixpath::cuda::own_jpeg
