#include "own_jpeg_kernels.h"

namespace pixpath::cuda::own_jpeg {
namespace {

using codecs::jpeg::decode_subsequence;
using codecs::jpeg::kZigzagToNatural;
using codecs::jpeg::SubsequenceResult;
using codecs::jpeg::WriteResult;

constexpr int kThreads = 128;

__constant__ uint8_t c_natural[64];

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

__global__ void sync_kernel(const ScanTables* tables, const uint8_t* bytes, SubsequenceArrays a,
                            const DecodeState* end_in, DecodeState* end_out, DecodeState* start,
                            uint32_t* slots, uint32_t* flags) {
  const ScanTables& t = shared_tables(tables);
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= a.count) return;
  DecodeState e = end_in[j];
  if (a.seg_first_sub[a.segment[j]] != j) {
    const DecodeState pred = end_in[j - 1];
    DecodeState st = start[j];
    SubsequenceResult r;
    if (codecs::jpeg::sync_subsequence(t, bytes, pred, a.end[j], a.seg_end_bit[a.segment[j]], &st, &r)) {
      start[j] = st;
      slots[j] = r.slots;
      e = r.end;
      atomicAdd(&flags[kFlagChanged], 1u);
    }
  }
  end_out[j] = e;
}

__global__ void serial_sync_kernel(const ScanTables* tables, const uint8_t* bytes,
                                   SubsequenceArrays a, DecodeState* start, DecodeState* end,
                                   uint32_t* slots) {
  const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= a.segments) return;
  const uint32_t first = a.seg_first_sub[s];
  codecs::jpeg::sync_segment_serially(*tables, bytes, first, a.seg_first_sub[s + 1] - first, a.end,
                                      a.seg_end_bit[s], start, end, slots);
}

// One block: chunked exclusive scan of `count` values into excl[0..count].
__global__ void scan_kernel(const uint32_t* slots, uint64_t* excl, uint32_t count) {
  __shared__ uint64_t part[1024];
  const uint32_t t = threadIdx.x, nt = blockDim.x;
  const uint32_t chunk = (count + nt - 1) / nt;
  const uint32_t b = min(count, t * chunk), e = min(count, b + chunk);
  uint64_t sum = 0;
  for (uint32_t i = b; i < e; ++i) sum += slots[i];
  part[t] = sum;
  __syncthreads();
  for (uint32_t off = 1; off < nt; off <<= 1) {  // Hillis-Steele inclusive scan
    const uint64_t v = t >= off ? part[t - off] : 0;
    __syncthreads();
    part[t] += v;
    __syncthreads();
  }
  uint64_t run = part[t] - sum;
  for (uint32_t i = b; i < e; ++i) {
    excl[i] = run;
    run += slots[i];
  }
  if (t == nt - 1) excl[count] = part[t];
}

__global__ void first_slot_kernel(SubsequenceArrays a, const uint64_t* excl, uint32_t* first_slot) {
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= a.count) return;
  const uint64_t v = excl[j] - excl[a.seg_first_sub[a.segment[j]]];
  first_slot[j] = v > 0xFFFFFFFFull ? 0xFFFFFFFFu : uint32_t(v);
}

// Initialises every segment's damage word (no memset needed).
__global__ void check_kernel(SubsequenceArrays a, const uint64_t* excl, uint32_t* seg_damage) {
  const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= a.segments) return;
  const uint64_t total = excl[a.seg_first_sub[s + 1]] - excl[a.seg_first_sub[s]];
  seg_damage[s] = codecs::jpeg::slot_sum_damage(total, a.seg_slots[s]);
}

__global__ void write_kernel(const ScanTables* tables, const uint8_t* bytes, SubsequenceArrays a,
                            const DecodeState* start, const uint32_t* first_slot, int16_t* out,
                            uint32_t* seg_damage, uint32_t* flags) {
  const ScanTables& t = shared_tables(tables);
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= a.count) return;
  const uint32_t s = a.segment[j];
  const uint32_t seg_end = a.seg_end_bit[s];
  const WriteResult w = codecs::jpeg::write_subsequence(
      t, bytes, start[j], a.end[j], seg_end, first_slot[j], a.seg_slots[s],
      a.seg_first_block[s], c_natural, out);
  const uint32_t d = codecs::jpeg::subsequence_damage(w, seg_end);
  if (d) {
    atomicOr(&seg_damage[s], d);
    if (d & codecs::jpeg::kDamageExtraBytes) {
      atomicAdd(&flags[kFlagExtraBytes], codecs::jpeg::extraneous_bytes(w.last_block_end_bit, seg_end));
    }
  }
}

// Per segment: its damage into the summary words (first segment and count per kind).
__global__ void damage_kernel(uint32_t segments, const uint32_t* seg_damage, uint32_t* flags) {
  const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= segments) return;
  const uint32_t d = seg_damage[s];
  if (!d) return;
  for (int k = 0; k < 4; ++k) {
    if (d & (1u << k)) {
      atomicMin(&flags[kFlagFirstSegment + k], s);
      atomicAdd(&flags[kFlagSegments + k], 1u);
    }
  }
}

__global__ void dc_sums_kernel(const ScanTables* tables, DcChunks ch, const int16_t* out,
                               uint32_t* sums) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= ch.count) return;
  codecs::jpeg::dc_chunk_sums(tables->layout, ch.first_block[k], ch.blocks[k], out, sums + 4 * k);
}

// One block: exclusive scan of the chunks' 4-component sums, restarting at each reset.
__global__ void dc_scan_kernel(DcChunks ch, const uint32_t* sums, uint32_t* prefix) {
  __shared__ uint32_t sv[1024][4];
  __shared__ uint8_t sf[1024];
  const uint32_t t = threadIdx.x, nt = blockDim.x, n = ch.count;
  const uint32_t chunk = (n + nt - 1) / nt;
  const uint32_t b = min(n, t * chunk), e = min(n, b + chunk);
  // This thread's range: sum since its last reset (or all of it), and whether it has one.
  uint32_t v[4] = {0, 0, 0, 0};
  bool f = false;
  for (uint32_t k = b; k < e; ++k) {
    if (ch.resets[k]) {
      f = true;
      v[0] = v[1] = v[2] = v[3] = 0;
    }
    for (int c = 0; c < 4; ++c) v[c] += sums[4 * k + c];
  }
  for (int c = 0; c < 4; ++c) sv[t][c] = v[c];
  sf[t] = f;
  __syncthreads();
  for (uint32_t off = 1; off < nt; off <<= 1) {  // inclusive scan: a reset drops what is left of it
    uint32_t lv[4] = {0, 0, 0, 0};
    bool lf = false;
    if (t >= off) {
      lf = sf[t - off];
      for (int c = 0; c < 4; ++c) lv[c] = sv[t - off][c];
    }
    __syncthreads();
    if (t >= off) {
      if (!sf[t]) {
        for (int c = 0; c < 4; ++c) sv[t][c] += lv[c];
      }
      sf[t] = sf[t] | lf;
    }
    __syncthreads();
  }
  uint32_t run[4] = {0, 0, 0, 0};
  if (t > 0) {
    for (int c = 0; c < 4; ++c) run[c] = sv[t - 1][c];
  }
  for (uint32_t k = b; k < e; ++k) {
    if (ch.resets[k]) run[0] = run[1] = run[2] = run[3] = 0;
    for (int c = 0; c < 4; ++c) {
      prefix[4 * k + c] = run[c];
      run[c] += sums[4 * k + c];
    }
  }
}

__global__ void dc_apply_kernel(const ScanTables* tables, DcChunks ch, const uint32_t* prefix,
                                int16_t* out) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= ch.count) return;
  codecs::jpeg::dc_chunk_apply(tables->layout, ch.first_block[k], ch.blocks[k], prefix + 4 * k, out);
}

__global__ void idct_kernel(const int16_t* coefficients, uint32_t blocks_w, uint32_t blocks_h,
                            const uint16_t* quant, uint8_t* plane, uint32_t pitch,
                            codecs::jpeg::IdctArithmetic arithmetic) {
  __shared__ uint16_t q[64];
  if (threadIdx.x < 64) q[threadIdx.x] = quant[threadIdx.x];
  __syncthreads();
  const uint64_t b = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= uint64_t(blocks_w) * blocks_h) return;
  const uint32_t by = uint32_t(b / blocks_w), bx = uint32_t(b % blocks_w);
  codecs::jpeg::idct_islow_block(coefficients + b * 64, q,
                                 plane + uint64_t(by) * 8 * pitch + uint64_t(bx) * 8, pitch,
                                 arithmetic);
}

__global__ void rgba_kernel(codecs::jpeg::SamplePlane luma, codecs::jpeg::SamplePlane cb,
                            codecs::jpeg::SamplePlane cr, codecs::jpeg::Upsampling upsampling,
                            int width, int height, uint8_t* out, size_t pitch) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= width || y >= height) return;
  const bool gray = cb.data == nullptr;
  uint8_t px[4];
  codecs::jpeg::jpeg_pixel_rgba(luma, gray ? nullptr : &cb, gray ? nullptr : &cr, upsampling, x,
                                y, px);
  *reinterpret_cast<uchar4*>(out + uint64_t(y) * pitch + uint64_t(x) * 4) =
      make_uchar4(px[0], px[1], px[2], px[3]);
}

// 64 bytes per decode, on the current device (constant memory is per device).
cudaError_t natural_table(cudaStream_t stream) {
  return cudaMemcpyToSymbolAsync(c_natural, kZigzagToNatural.data(), 64, 0,
                                 cudaMemcpyHostToDevice, stream);
}

}  // namespace

cudaError_t launch_speculative(const ScanTables* tables, const uint8_t* bytes,
                               const SubsequenceArrays& a, DecodeState* start, DecodeState* end,
                               uint32_t* slots, cudaStream_t stream) {
  if (!a.count) return cudaSuccess;
  speculative_kernel<<<blocks_for(a.count), kThreads, kSharedBytes, stream>>>(tables, bytes, a, start, end, slots);
  return cudaGetLastError();
}

cudaError_t launch_sync_round(const ScanTables* tables, const uint8_t* bytes,
                              const SubsequenceArrays& a, const DecodeState* end_in,
                              DecodeState* end_out, DecodeState* start, uint32_t* slots,
                              uint32_t* flags, cudaStream_t stream) {
  if (!a.count) return cudaSuccess;
  sync_kernel<<<blocks_for(a.count), kThreads, kSharedBytes, stream>>>(tables, bytes, a, end_in, end_out, start, slots, flags);
  return cudaGetLastError();
}

cudaError_t launch_serial_sync(const ScanTables* tables, const uint8_t* bytes,
                               const SubsequenceArrays& a, DecodeState* start, DecodeState* end,
                               uint32_t* slots, cudaStream_t stream) {
  if (!a.segments) return cudaSuccess;
  serial_sync_kernel<<<blocks_for(a.segments), kThreads, 0, stream>>>(tables, bytes, a, start, end, slots);
  return cudaGetLastError();
}

cudaError_t launch_offsets(const SubsequenceArrays& a, const uint32_t* slots, uint64_t* excl,
                           uint32_t* first_slot, uint32_t* seg_damage, cudaStream_t stream) {
  scan_kernel<<<1, 1024, 0, stream>>>(slots, excl, a.count);
  first_slot_kernel<<<blocks_for(a.count), kThreads, 0, stream>>>(a, excl, first_slot);
  check_kernel<<<blocks_for(a.segments), kThreads, 0, stream>>>(a, excl, seg_damage);
  return cudaGetLastError();
}

cudaError_t launch_write(const ScanTables* tables, const uint8_t* bytes,
                         const SubsequenceArrays& a, const DecodeState* start,
                         const uint32_t* first_slot, int16_t* out, uint32_t* seg_damage,
                         uint32_t* flags, cudaStream_t stream) {
  if (const cudaError_t e = natural_table(stream); e != cudaSuccess) return e;
  if (!a.count) return cudaSuccess;
  write_kernel<<<blocks_for(a.count), kThreads, kSharedBytes, stream>>>(tables, bytes, a, start, first_slot, out, seg_damage, flags);
  damage_kernel<<<blocks_for(a.segments), kThreads, 0, stream>>>(a.segments, seg_damage, flags);
  return cudaGetLastError();
}

cudaError_t launch_dc(const ScanTables* tables, const DcChunks& chunks, uint32_t* sums,
                      uint32_t* prefix, int16_t* out, cudaStream_t stream) {
  if (!chunks.count) return cudaSuccess;
  dc_sums_kernel<<<blocks_for(chunks.count), kThreads, 0, stream>>>(tables, chunks, out, sums);
  dc_scan_kernel<<<1, 1024, 0, stream>>>(chunks, sums, prefix);
  dc_apply_kernel<<<blocks_for(chunks.count), kThreads, 0, stream>>>(tables, chunks, prefix, out);
  return cudaGetLastError();
}

cudaError_t launch_idct(const int16_t* coefficients, uint32_t blocks_w, uint32_t blocks_h,
                        const uint16_t* quant, uint8_t* plane, uint32_t pitch,
                        codecs::jpeg::IdctArithmetic arithmetic, cudaStream_t stream) {
  const uint64_t n = uint64_t(blocks_w) * blocks_h;
  if (!n) return cudaSuccess;
  idct_kernel<<<blocks_for(n), kThreads, 0, stream>>>(coefficients, blocks_w, blocks_h, quant, plane, pitch, arithmetic);
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
