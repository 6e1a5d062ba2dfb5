// The CUDA kernels of pixpath's own baseline-JPEG decoder (own_jpeg_decode.h drives them):
// thin launchers over the PIXPATH_HD steps of pixpath/codecs/jpeg_entropy_kernels.h and
// jpeg_idct_kernels.h, one thread per subsequence / segment / block. Plain device pointers; no
// allocation; every launcher queues on `stream` and returns the launch error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "pixpath/codecs/jpeg_color_kernels.h"
#include "pixpath/codecs/jpeg_entropy_kernels.h"
#include "pixpath/codecs/jpeg_idct_kernels.h"

namespace pixpath::cuda::own_jpeg {

// Device arrays describing the subsequences (see decode_coefficients_parallel, step 1).
struct SubsequenceArrays {
  const uint32_t* begin = nullptr;          // per subsequence: first bit
  const uint32_t* end = nullptr;            // per subsequence: end bit
  const uint32_t* segment = nullptr;        // per subsequence: its segment
  const uint32_t* seg_end_bit = nullptr;    // per segment
  const uint32_t* seg_first_sub = nullptr;  // per segment (+1 entry: the count)
  const uint32_t* seg_slots = nullptr;      // per segment: blocks * 64
  const uint64_t* seg_first_block = nullptr;
  uint32_t count = 0, segments = 0;
};

// Words the host reads back after the decode (one copy, with the decode's own final
// synchronisation): per kind of damage (EntropyDamage bit k, jpeg_entropy_kernels.h) the first
// segment that has it (kFlagFirstSegment + k, initially kNoSlot) and how many segments do
// (kFlagSegments + k); the extraneous bytes of all segments; and what the synchronisation did
// (rounds that changed a start state; whether the serial walk ran). The rounds' change counts
// live here too: the device decides when to stop, the host never waits for a round.
enum Flag : int {
  kFlagFirstSegment = 0,  // 4 words
  kFlagSegments = 4,      // 4 words
  kFlagExtraBytes = 8,
  kFlagSyncRounds = 9,     // rounds that changed something (written by the sync step)
  kFlagNotConverged = 10,  // 1: the rounds hit their cap; the guarded serial walk ran
  kFlagCoopChanged = 11,   // 3 words: the cooperative kernel's change counters (step % 3)
  kFlagTransferAdded = 14,     // step 3a's first pass added extra entries (non-zero)
  kFlagTransferPasses = 15,    // step 3a's passes (0: not run)
  kFlagTransferResolved = 16,  // subsequences whose start step 3a found
  kFlagRoundChanged = 20,  // kLaunchedSyncRounds words: change count of each launched round
  kFlagCount = 20 + 32
};
// The fallback chain (no cooperative launch): this many round kernels are queued back to back;
// each exits at once when the one before changed nothing. The cooperative kernel's cap is
// kCoopSyncRounds rounds (it leaves the loop as soon as a round changes nothing).
inline constexpr int kLaunchedSyncRounds = 32;
inline constexpr int kCoopSyncRounds = 4096;

using codecs::jpeg::DecodeState;
using codecs::jpeg::ScanTables;

using codecs::jpeg::VariantRecord;

// Step 2. With `variants` (count * variant_count records; variant_count = the blocks of an MCU):
// every subsequence once per block index (decode_variant, one thread each), variant 0 giving
// start/end/slots and each start's trace (`trace`, one byte a subsequence, required with the
// variants; the write pieces read it, jpeg_entropy_kernels.h); the sync rounds then use them
// (sync_subsequence_variants). Without: one decode a subsequence.
cudaError_t launch_speculative(const ScanTables* tables, const uint8_t* bytes,
                               const SubsequenceArrays& a, DecodeState* start, DecodeState* end,
                               uint32_t* slots, VariantRecord* variants, uint32_t variant_count,
                               uint8_t* trace, cudaStream_t stream);
using codecs::jpeg::PathRecord;

// Step 3a's device scratch (jpeg_entropy_kernels.h, transfer maps): per subsequence its map
// (kTransferStride bytes) and the slot count, trace and path record of each entry, per
// subsequence and one more its extra entries (transfer_extra_entries(variant_count) words
// each), and per block of the cooperative kernel its composed map (kTransferStride bytes).
// launch_sync initialises them. `path`: per subsequence, the path record of the start the
// composition chose, where its trace has kTracePath (the write pieces read it).
struct TransferArrays {
  uint8_t* map = nullptr;            // count * kTransferStride
  uint32_t* map_slots = nullptr;     // count * kTransferStride
  uint8_t* map_trace = nullptr;      // count * kTransferStride: each entry's trace
  PathRecord* map_path = nullptr;    // count * kTransferStride, written where needed
  uint64_t* extras = nullptr;        // (count + 1) * transfer_extra_entries(variant_count)
  uint8_t* block_maps = nullptr;     // blocks_for(count) * kTransferStride
  PathRecord* path = nullptr;        // count
};
// Bytes of each for `count` subsequences.
size_t transfer_map_bytes(uint32_t count);
size_t transfer_slots_bytes(uint32_t count);
size_t transfer_path_bytes(uint32_t count);  // map_path (path: count * sizeof(PathRecord))
size_t transfer_extras_bytes(uint32_t count, uint32_t variant_count);
size_t transfer_block_map_bytes(uint32_t count);

// Step 3 without a host round trip: the synchronisation rounds (sync_subsequence per
// subsequence, reading the previous round's end states) until a round changes nothing, then a
// serial walk per segment (sync_segment_serially) that runs only when the rounds hit their cap
// (decided on the device: flags[kFlagNotConverged]). One cooperative kernel with a grid-wide
// barrier between rounds when the grid fits on the device at once (*cooperative set true; the
// serial walk at its end), else kLaunchedSyncRounds round kernels queued back to back, each
// exiting at once after a round that changed nothing, and a serial-walk kernel. end_a holds
// the speculative end states, end_b is scratch; flags[kFlagSyncRounds .. kFlagCount) must be
// zero and flags[kFlagNotConverged] is set here.
// round_cap > 0 lowers the cap on rounds (tests of the serial walk).
// With `transfer` (its arrays set; variants required) and the cooperative launch, step 3a runs
// first: its first pass as a kernel of its own (one thread per subsequence and variant), the
// further passes and the composition in the cooperative kernel before its rounds, which then
// start from the starts it found (flags kFlagTransferPasses, kFlagTransferResolved).
// Every start it changes gets its trace in `trace` (kNoTrace after the serial walk; left alone
// without the variants, when the write-out does not read it).
cudaError_t launch_sync(const ScanTables* tables, const uint8_t* bytes, const SubsequenceArrays& a,
                        DecodeState* end_a, DecodeState* end_b, DecodeState* start,
                        uint32_t* slots, uint8_t* trace, uint32_t* flags,
                        const VariantRecord* variants, uint32_t variant_count,
                        const TransferArrays* transfer, bool allow_cooperative, int round_cap,
                        cudaStream_t stream, bool* cooperative);
// excl[0..count]: exclusive prefix sum of slots (excl[count] = total); per subsequence its
// first slot within its segment; per segment (seg_damage, one word each, written whole) whether
// its slots fall short of its blocks (slot_sum_damage).
cudaError_t launch_offsets(const SubsequenceArrays& a, const uint32_t* slots, uint64_t* excl,
                           uint32_t* first_slot, uint32_t* seg_damage, cudaStream_t stream);
// The write-out; each subsequence (with `trace` and the variants: each write piece,
// jpeg_entropy_kernels.h, kWritePieces threads a subsequence; `path`: TransferArrays::path,
// read where a trace has kTracePath, else may be null) ORs its subsequence_damage into
// seg_damage[its segment] and adds its extraneous bytes to flags[kFlagExtraBytes] (launch_dc
// sums the segments' damage into flags).
// `natural`: kZigzagToNatural in device memory (64 bytes, uploaded with the picture).
cudaError_t launch_write(const ScanTables* tables, const uint8_t* bytes,
                         const SubsequenceArrays& a, const DecodeState* start,
                         const uint32_t* first_slot, const uint32_t* slots,
                         const VariantRecord* variants, uint32_t variant_count,
                         const uint8_t* trace, const PathRecord* path, const uint8_t* natural,
                         int16_t* out, uint32_t* seg_damage, uint32_t* flags, cudaStream_t stream);
// Step 6, DC prediction (jpeg_entropy_kernels.h, kDcTileBlocks): the scan's blocks, the
// restart interval in MCUs (0: none) and each tile's carry (device scratch of dc_carry_bytes).
struct DcScan {
  uint32_t scan_blocks = 0, restart_mcus = 0;
  uint4* carry = nullptr;
};
size_t dc_tile_sums_bytes(uint32_t scan_blocks);
size_t dc_carry_bytes(uint32_t scan_blocks);
// 6a and 6b: each tile's scan in place in `out` and its total (tile_sums: dc_tile_sums_bytes of
// scratch), then the tiles' carries into dc.carry; launch_idct adds them (6c). The first kernel
// also turns the segments' damage words (launch_write) into the summary words of `flags`
// (kFlagFirstSegment, kFlagSegments).
cudaError_t launch_dc(const ScanTables* tables, const DcScan& dc, void* tile_sums, int16_t* out,
                      uint32_t segments, const uint32_t* seg_damage, uint32_t* flags,
                      cudaStream_t stream);
// All components in one launch: component c has blocks_w[c] x blocks_h[c] blocks from
// coefficients + coefficient_offset[c] (natural order) to planes + plane_offset[c] (pitch[c]
// bytes a row), quantisation quant + 64 * c.
struct IdctPlanes {
  int components = 0;
  uint32_t blocks_w[4] = {}, blocks_h[4] = {}, pitch[4] = {};
  uint64_t coefficient_offset[4] = {}, plane_offset[4] = {};
  uint64_t first_block[5] = {};  // running block count: component c's blocks start here
};
// Each block first takes its tile's DC carry in place (step 6c; the coefficients then hold
// the DC values), with `tables`' block layout; dc.carry is required (cudaErrorInvalidValue).
cudaError_t launch_idct(int16_t* coefficients, const IdctPlanes& p, const uint16_t* quant,
                        uint8_t* planes, codecs::jpeg::IdctArithmetic arithmetic,
                        const ScanTables* tables, const DcScan& dc, cudaStream_t stream);

// Planes -> RGBA (jpeg_color_kernels.h): width x height pixels, `pitch` bytes per row. cb/cr
// with null data: gray.
cudaError_t launch_rgba(codecs::jpeg::SamplePlane luma, codecs::jpeg::SamplePlane cb,
                        codecs::jpeg::SamplePlane cr, codecs::jpeg::Upsampling upsampling,
                        int width, int height, uint8_t* out, size_t pitch, cudaStream_t stream);

}  // namespace pixpath::cuda::own_jpeg
