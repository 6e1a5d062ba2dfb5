#include "own_jpeg_decode.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "own_jpeg_kernels.h"
#include "own_jpeg_input.h"

namespace pixpath::cuda::own_jpeg {
namespace {

using namespace codecs::jpeg;

Error gpu_error(ErrorCode code, std::string reason) {
  return Error(code, "jpeg", "own gpu decode", std::move(reason));
}
Error cuda_error(const char* what, cudaError_t e) {
  return gpu_error(ErrorCode::Internal, std::string(what) + ": " + cudaGetErrorString(e));
}

// Events between the steps when timing (Options::time_phases); released at scope end.
class PhaseEvents {
 public:
  explicit PhaseEvents(bool on) {
    if (!on) return;
    for (auto& e : ev_) {
      if (cudaEventCreate(&e) != cudaSuccess) e = nullptr;
    }
  }
  ~PhaseEvents() {
    for (auto e : ev_) {
      if (e) cudaEventDestroy(e);
    }
  }
  void mark(int i, cudaStream_t stream) {
    if (ev_[i]) cudaEventRecord(ev_[i], stream);
  }
  // After the stream finished: phase i = event i-1 .. event i (i >= kPhaseUpload + 1).
  void read(float* ms) const {
    for (int i = kPhaseUpload; i < kPhaseCount; ++i) {
      if (ev_[i - 1] && ev_[i]) cudaEventElapsedTime(&ms[i], ev_[i - 1], ev_[i]);
    }
  }

 private:
  cudaEvent_t ev_[kPhaseCount] = {};
};

#define OWN_CUDA_TRY(what, expr)                              \
  do {                                                        \
    const cudaError_t own_e_ = (expr);                        \
    if (own_e_ != cudaSuccess) return cuda_error(what, own_e_); \
  } while (0)

}  // namespace

DeviceBuffers::~DeviceBuffers() {
  for (void* p : ptr_) {
    if (p) cudaFree(p);
  }
  if (pinned_) cudaFreeHost(pinned_);
}

void* DeviceBuffers::device(Slot slot, size_t bytes) {
  if (bytes == 0) bytes = 16;
  if (size_[slot] >= bytes) return ptr_[slot];
  if (ptr_[slot]) cudaFree(ptr_[slot]);
  ptr_[slot] = nullptr;
  size_[slot] = 0;
  const size_t grown = bytes + bytes / 4;
  if (cudaMalloc(&ptr_[slot], grown) != cudaSuccess) return nullptr;
  size_[slot] = grown;
  return ptr_[slot];
}

uint32_t* DeviceBuffers::pinned() {
  if (!pinned_ && cudaMallocHost(&pinned_, 16 * sizeof(uint32_t)) != cudaSuccess) pinned_ = nullptr;
  return pinned_;
}

Result<PlanesOut> decode_input_to_planes(const OwnJpegInput& in, const Options& options,
                                         DeviceBuffers& buffers, cudaStream_t stream,
                                         Report* report, DamageWords* damage) {
  const ParallelDecodePlan& plan = in.plan;
  if (!in.tables || plan.seg_end_bit.empty() || plan.sub_begin.empty() || in.components < 1 ||
      in.components > 4) {
    return gpu_error(ErrorCode::InvalidArgument, "an input not made by make_own_jpeg_input");
  }
  // Host preparation (the input is made; what is left: the quantisation per component).
  const auto host_start = std::chrono::steady_clock::now();
  Report rep;
  PhaseEvents events(options.time_phases);
  const ScanTables* tables = in.tables.get();
  const UnstuffedScan& u = plan.scan;
  const uint32_t nseg = uint32_t(plan.seg_end_bit.size());
  const auto& sub_begin = plan.sub_begin;
  const auto& sub_end = plan.sub_end;
  const auto& sub_seg = plan.sub_seg;
  const auto& seg_end_bit = plan.seg_end_bit;
  const auto& seg_first_sub = plan.seg_first_sub;
  const auto& seg_slots = plan.seg_slots;
  const auto& seg_first_block = plan.seg_first_block;
  const uint32_t nsub = uint32_t(sub_begin.size());
  const uint64_t total = plan.coefficients;
  PlanesOut out;
  uint64_t plane_bytes = 0;
  uint64_t plane_offset[4] = {};
  for (int c = 0; c < in.components; ++c) {
    out.coefficient_offset[c] = plan.offset[size_t(c)];
    out.pitch[c] = int(plan.blocks_w[size_t(c)] * 8);
    plane_offset[c] = plane_bytes;
    plane_bytes += uint64_t(plan.blocks_w[size_t(c)]) * 8 * uint64_t(plan.blocks_h[size_t(c)]) * 8;
  }
  // DC prediction chunks (step 6).
  const auto& chunk_first_block = plan.chunk_first_block;
  const auto& chunk_blocks = plan.chunk_blocks;
  const auto& chunk_resets = plan.chunk_resets;
  const uint32_t nchunks = uint32_t(chunk_blocks.size());
  const auto& quant = in.quant;

  // Device buffers (grow-only) and uploads.
  using B = DeviceBuffers;
  auto* d_tables = static_cast<ScanTables*>(buffers.device(B::kTables, sizeof(ScanTables)));
  auto* d_bytes = static_cast<uint8_t*>(buffers.device(B::kBytes, u.bytes.size()));
  auto* d_sub_begin = static_cast<uint32_t*>(buffers.device(B::kSubBegin, nsub * 4ull));
  auto* d_sub_end = static_cast<uint32_t*>(buffers.device(B::kSubEnd, nsub * 4ull));
  auto* d_sub_seg = static_cast<uint32_t*>(buffers.device(B::kSubSeg, nsub * 4ull));
  auto* d_seg_end = static_cast<uint32_t*>(buffers.device(B::kSegEndBit, nseg * 4ull));
  auto* d_seg_first = static_cast<uint32_t*>(buffers.device(B::kSegFirstSub, (nseg + 1) * 4ull));
  auto* d_seg_block = static_cast<uint64_t*>(buffers.device(B::kSegFirstBlock, nseg * 8ull));
  auto* d_seg_slots = static_cast<uint32_t*>(buffers.device(B::kSegSlots, nseg * 4ull));
  auto* d_start = static_cast<DecodeState*>(buffers.device(B::kStart, nsub * sizeof(DecodeState)));
  auto* d_end_a = static_cast<DecodeState*>(buffers.device(B::kEndA, nsub * sizeof(DecodeState)));
  auto* d_end_b = static_cast<DecodeState*>(buffers.device(B::kEndB, nsub * sizeof(DecodeState)));
  auto* d_slots = static_cast<uint32_t*>(buffers.device(B::kSlots, nsub * 4ull));
  auto* d_excl = static_cast<uint64_t*>(buffers.device(B::kScan, (nsub + 1) * 8ull));
  auto* d_first = static_cast<uint32_t*>(buffers.device(B::kFirstSlot, nsub * 4ull));
  auto* d_coef = static_cast<int16_t*>(buffers.device(B::kCoefficients, total * 2));
  auto* d_planes = static_cast<uint8_t*>(buffers.device(B::kPlanes, plane_bytes));
  auto* d_flags = static_cast<uint32_t*>(buffers.device(B::kFlags, kFlagCount * 4));
  auto* d_quant = static_cast<uint16_t*>(buffers.device(B::kQuant, quant.size() * 2));
  auto* d_chunk_first = static_cast<uint64_t*>(buffers.device(B::kChunkFirstBlock, nchunks * 8ull));
  auto* d_chunk_blocks = static_cast<uint32_t*>(buffers.device(B::kChunkBlocks, nchunks * 4ull));
  auto* d_chunk_resets = static_cast<uint8_t*>(buffers.device(B::kChunkResets, nchunks));
  auto* d_dc_sums = static_cast<uint32_t*>(buffers.device(B::kDcSums, nchunks * 16ull));
  auto* d_dc_prefix = static_cast<uint32_t*>(buffers.device(B::kDcPrefix, nchunks * 16ull));
  auto* d_seg_damage = static_cast<uint32_t*>(buffers.device(B::kSegDamage, nseg * 4ull));
  uint32_t* pinned = buffers.pinned();
  if (!d_tables || !d_bytes || !d_sub_begin || !d_sub_end || !d_sub_seg || !d_seg_end ||
      !d_seg_first || !d_seg_block || !d_seg_slots || !d_start || !d_end_a || !d_end_b ||
      !d_slots || !d_excl || !d_first || !d_coef || !d_planes || !d_flags || !d_quant || !pinned ||
      !d_chunk_first || !d_chunk_blocks || !d_chunk_resets || !d_dc_sums || !d_dc_prefix ||
      !d_seg_damage) {
    return gpu_error(ErrorCode::OutOfMemory, "device buffers");
  }
  rep.phase_ms[kPhaseHost] =
      std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - host_start).count();
  events.mark(kPhaseHost, stream);  // the stream's start
  auto up = [&](void* dst, const void* src, size_t n) {
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream);
  };
  // The host vectors must live until the copies ran: the function synchronises before returning.
  OWN_CUDA_TRY("upload", up(d_tables, tables, sizeof(ScanTables)));
  OWN_CUDA_TRY("upload", up(d_bytes, u.bytes.data(), u.bytes.size()));
  OWN_CUDA_TRY("upload", up(d_sub_begin, sub_begin.data(), nsub * 4ull));
  OWN_CUDA_TRY("upload", up(d_sub_end, sub_end.data(), nsub * 4ull));
  OWN_CUDA_TRY("upload", up(d_sub_seg, sub_seg.data(), nsub * 4ull));
  OWN_CUDA_TRY("upload", up(d_seg_end, seg_end_bit.data(), nseg * 4ull));
  OWN_CUDA_TRY("upload", up(d_seg_first, seg_first_sub.data(), (nseg + 1) * 4ull));
  OWN_CUDA_TRY("upload", up(d_seg_block, seg_first_block.data(), nseg * 8ull));
  OWN_CUDA_TRY("upload", up(d_seg_slots, seg_slots.data(), nseg * 4ull));
  OWN_CUDA_TRY("upload", up(d_quant, quant.data(), quant.size() * 2));
  OWN_CUDA_TRY("upload", up(d_chunk_first, chunk_first_block.data(), nchunks * 8ull));
  OWN_CUDA_TRY("upload", up(d_chunk_blocks, chunk_blocks.data(), nchunks * 4ull));
  OWN_CUDA_TRY("upload", up(d_chunk_resets, chunk_resets.data(), nchunks));
  uint32_t flags_init[kFlagCount] = {};
  for (int k = 0; k < EntropyDamageSummary::kKinds; ++k) flags_init[kFlagFirstSegment + k] = kNoSlot;
  OWN_CUDA_TRY("upload", up(d_flags, flags_init, sizeof(flags_init)));

  SubsequenceArrays a;
  a.begin = d_sub_begin;
  a.end = d_sub_end;
  a.segment = d_sub_seg;
  a.seg_end_bit = d_seg_end;
  a.seg_first_sub = d_seg_first;
  a.seg_slots = d_seg_slots;
  a.seg_first_block = d_seg_block;
  a.count = nsub;
  a.segments = nseg;

  events.mark(kPhaseUpload, stream);
  // Steps 2-3: speculative decode, synchronisation rounds.
  OWN_CUDA_TRY("speculative decode", launch_speculative(d_tables, d_bytes, a, d_start, d_end_a, d_slots, stream));
  events.mark(kPhaseSpeculative, stream);
  rep.subsequences = nsub;
  DecodeState* end_in = d_end_a;
  DecodeState* end_out = d_end_b;
  bool converged = false;
  for (int round = 0; round <= kMaxSyncRounds; ++round) {
    OWN_CUDA_TRY("sync round", cudaMemsetAsync(d_flags + kFlagChanged, 0, 4, stream));
    OWN_CUDA_TRY("sync round", launch_sync_round(d_tables, d_bytes, a, end_in, end_out, d_start, d_slots, d_flags, stream));
    OWN_CUDA_TRY("sync round", cudaMemcpyAsync(pinned, d_flags + kFlagChanged, 4, cudaMemcpyDeviceToHost, stream));
    OWN_CUDA_TRY("sync round", cudaStreamSynchronize(stream));
    std::swap(end_in, end_out);
    if (pinned[0] == 0) {
      converged = true;
      break;
    }
    ++rep.sync_rounds;
  }
  if (!converged) {  // data that does not resynchronise: one bounded serial walk
    rep.serial_sweep = true;
    OWN_CUDA_TRY("serial sync", launch_serial_sync(d_tables, d_bytes, a, d_start, end_in, d_slots, stream));
  }
  events.mark(kPhaseSync, stream);
  // Steps 4-6: offsets and checks, write-out, DC prediction; then the IDCT per component.
  OWN_CUDA_TRY("offsets", launch_offsets(a, d_slots, d_excl, d_first, d_seg_damage, stream));
  events.mark(kPhaseOffsets, stream);
  OWN_CUDA_TRY("write", cudaMemsetAsync(d_coef, 0, total * 2, stream));
  OWN_CUDA_TRY("write", launch_write(d_tables, d_bytes, a, d_start, d_first, d_coef, d_seg_damage, d_flags, stream));
  events.mark(kPhaseWrite, stream);
  DcChunks chunks;
  chunks.first_block = d_chunk_first;
  chunks.blocks = d_chunk_blocks;
  chunks.resets = d_chunk_resets;
  chunks.count = nchunks;
  OWN_CUDA_TRY("dc", launch_dc(d_tables, chunks, d_dc_sums, d_dc_prefix, d_coef, stream));
  events.mark(kPhaseDc, stream);
  for (int c = 0; c < in.components; ++c) {
    OWN_CUDA_TRY("idct", launch_idct(d_coef + out.coefficient_offset[c], plan.blocks_w[size_t(c)],
                                     plan.blocks_h[size_t(c)], d_quant + 64 * c,
                                     d_planes + plane_offset[c], uint32_t(out.pitch[c]),
                                     options.arithmetic, stream));
  }
  events.mark(kPhaseIdct, stream);
  OWN_CUDA_TRY("flags", cudaMemcpyAsync(pinned, d_flags, kFlagCount * 4, cudaMemcpyDeviceToHost, stream));
  OWN_CUDA_TRY("finish", cudaStreamSynchronize(stream));
  if (damage) {
    for (int k = 0; k < 4; ++k) {
      damage->first_segment[k] = pinned[kFlagFirstSegment + k];
      damage->segments[k] = pinned[kFlagSegments + k];
    }
    damage->extraneous_bytes = pinned[kFlagExtraBytes];
  }
  events.read(rep.phase_ms);
  out.coefficients = d_coef;
  for (int c = 0; c < in.components; ++c) out.plane[c] = d_planes + plane_offset[c];
  if (report) *report = rep;
  return out;
}

}  // namespace pixpath::cuda::own_jpeg
