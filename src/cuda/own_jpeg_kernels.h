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
// (kFlagSegments + k); the extraneous bytes of all segments; and the sync rounds' change count.
enum Flag : int {
  kFlagFirstSegment = 0,  // 4 words
  kFlagSegments = 4,      // 4 words
  kFlagExtraBytes = 8,
  kFlagChanged = 9,
  kFlagCount = 10
};

using codecs::jpeg::DecodeState;
using codecs::jpeg::ScanTables;

cudaError_t launch_speculative(const ScanTables* tables, const uint8_t* bytes,
                               const SubsequenceArrays& a, DecodeState* start, DecodeState* end,
                               uint32_t* slots, cudaStream_t stream);
// One round: reads end_in, writes end_out (every entry), updates start/slots of the changed
// ones and adds their number to flags[kFlagChanged].
cudaError_t launch_sync_round(const ScanTables* tables, const uint8_t* bytes,
                              const SubsequenceArrays& a, const DecodeState* end_in,
                              DecodeState* end_out, DecodeState* start, uint32_t* slots,
                              uint32_t* flags, cudaStream_t stream);
// After kMaxSyncRounds rounds that still changed something: one thread per segment walks
// its subsequences in order (sync_segment_serially) over start/end/slots.
cudaError_t launch_serial_sync(const ScanTables* tables, const uint8_t* bytes,
                               const SubsequenceArrays& a, DecodeState* start, DecodeState* end,
                               uint32_t* slots, cudaStream_t stream);
// excl[0..count]: exclusive prefix sum of slots (excl[count] = total); per subsequence its
// first slot within its segment; per segment (seg_damage, one word each, written whole) whether
// its slots fall short of its blocks (slot_sum_damage).
cudaError_t launch_offsets(const SubsequenceArrays& a, const uint32_t* slots, uint64_t* excl,
                           uint32_t* first_slot, uint32_t* seg_damage, cudaStream_t stream);
// The write-out; each subsequence ORs its subsequence_damage into seg_damage[its segment] and
// adds its extraneous bytes to flags[kFlagExtraBytes]. Then one thread per segment sums the
// segments' damage into flags (kFlagFirstSegment, kFlagSegments).
cudaError_t launch_write(const ScanTables* tables, const uint8_t* bytes,
                         const SubsequenceArrays& a, const DecodeState* start,
                         const uint32_t* first_slot, int16_t* out, uint32_t* seg_damage,
                         uint32_t* flags, cudaStream_t stream);
// DC prediction over `chunks` chunks of blocks (see dc_chunk_sums in
// jpeg_entropy_kernels.h): sums and prefix are scratch of 4 * chunks uint32 each.
struct DcChunks {
  const uint64_t* first_block = nullptr;
  const uint32_t* blocks = nullptr;
  const uint8_t* resets = nullptr;  // 1: the first chunk of a segment
  uint32_t count = 0;
};
cudaError_t launch_dc(const ScanTables* tables, const DcChunks& chunks, uint32_t* sums,
                      uint32_t* prefix, int16_t* out, cudaStream_t stream);
// One component: blocks_w x blocks_h blocks from coefficients (natural order) to samples.
cudaError_t launch_idct(const int16_t* coefficients, uint32_t blocks_w, uint32_t blocks_h,
                        const uint16_t* quant, uint8_t* plane, uint32_t pitch,
                        codecs::jpeg::IdctArithmetic arithmetic, cudaStream_t stream);

// Planes -> RGBA (jpeg_color_kernels.h): width x height pixels, `pitch` bytes per row. cb/cr
// with null data: gray.
cudaError_t launch_rgba(codecs::jpeg::SamplePlane luma, codecs::jpeg::SamplePlane cb,
                        codecs::jpeg::SamplePlane cr, codecs::jpeg::Upsampling upsampling,
                        int width, int height, uint8_t* out, size_t pitch, cudaStream_t stream);

}  // namespace pixpath::cuda::own_jpeg
