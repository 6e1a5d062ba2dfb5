#include "own_jpeg_decode.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "own_jpeg_errors.h"
#include "own_jpeg_kernels.h"
#include "own_jpeg_input.h"

namespace pixpath::cuda::own_jpeg {
namespace {

using namespace codecs::jpeg;

// Events between the steps when timing (Options::time_phases); the buffers own them.
class PhaseEvents {
 public:
  PhaseEvents(bool on, DeviceBuffers& buffers) {
    if (!on) return;
    for (int i = 0; i < kPhaseCount; ++i) ev_[i] = buffers.event(i);
  }
  void mark(int i, cudaStream_t stream) {
    if (ev_[i]) cudaEventRecord(ev_[i], stream);
  }
  // After the stream finished: phase i = event i-1 .. event i (i >= kPhaseUpload).
  void read(float* ms) const {
    for (int i = kPhaseUpload; i < kPhaseCount; ++i) {
      if (ev_[i - 1] && ev_[i]) cudaEventElapsedTime(&ms[i], ev_[i - 1], ev_[i]);
    }
  }

 private:
  cudaEvent_t ev_[kPhaseCount] = {};
};

// The host arrays of one picture packed into one pinned buffer for one copy: each piece at a
// 256-byte boundary.
class UploadLayout {
 public:
  // Adds a piece; returns its offset in the packed buffer.
  size_t add(const void* src, size_t bytes) {
    const size_t at = (total_ + 255) / 256 * 256;
    pieces_.push_back({src, bytes, at});
    total_ = at + bytes;
    return at;
  }
  size_t total() const { return total_; }
  void pack(uint8_t* dst) const {
    for (const Piece& p : pieces_) {
      if (p.bytes) std::memcpy(dst + p.offset, p.src, p.bytes);
    }
  }

 private:
  struct Piece {
    const void* src;
    size_t bytes, offset;
  };
  std::vector<Piece> pieces_;
  size_t total_ = 0;
};

}  // namespace

DeviceBuffers::~DeviceBuffers() {
  for (void* p : ptr_) {
    if (p) cudaFree(p);
  }
  if (pinned_) cudaFreeHost(pinned_);
  if (staging_done_) cudaEventSynchronize(staging_done_);
  if (staging_) cudaFreeHost(staging_);
  if (staging_done_) cudaEventDestroy(staging_done_);
  if (readback_done_) cudaEventDestroy(readback_done_);
  for (cudaEvent_t e : events_) {
    if (e) cudaEventDestroy(e);
  }
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

uint8_t* DeviceBuffers::staging(size_t bytes) {
  if (staging_done_ && cudaEventSynchronize(staging_done_) != cudaSuccess) return nullptr;
  if (staging_size_ >= bytes && staging_) return staging_;
  if (staging_) cudaFreeHost(staging_);
  staging_ = nullptr;
  staging_size_ = 0;
  const size_t grown = bytes + bytes / 4 + 4096;
  if (cudaMallocHost(&staging_, grown) != cudaSuccess) {
    staging_ = nullptr;
    return nullptr;
  }
  staging_size_ = grown;
  return staging_;
}

cudaError_t DeviceBuffers::staging_queued(cudaStream_t stream) {
  if (!staging_done_) {
    if (const cudaError_t e = cudaEventCreateWithFlags(&staging_done_, cudaEventDisableTiming);
        e != cudaSuccess) {
      staging_done_ = nullptr;
      return e;
    }
  }
  return cudaEventRecord(staging_done_, stream);
}

uint32_t* DeviceBuffers::pinned() {
  if (!pinned_ && cudaMallocHost(&pinned_, kReadbackWords * sizeof(uint32_t)) != cudaSuccess) {
    pinned_ = nullptr;
  }
  return pinned_;
}

cudaEvent_t DeviceBuffers::event(int phase) {
  if (phase < 0 || phase >= kPhaseCount) return nullptr;
  if (!events_[phase] && cudaEventCreate(&events_[phase]) != cudaSuccess) events_[phase] = nullptr;
  return events_[phase];
}

cudaEvent_t DeviceBuffers::readback_event() {
  if (!readback_done_ && cudaEventCreateWithFlags(&readback_done_, cudaEventDisableTiming) != cudaSuccess) {
    readback_done_ = nullptr;
  }
  return readback_done_;
}

Result<PlanesOut> queue_input_to_planes(const OwnJpegInput& in, const Options& options,
                                        DeviceBuffers& buffers, cudaStream_t stream,
                                        PendingDecode& pending) {
  static_assert(kFlagCount <= DeviceBuffers::kReadbackWords);
  pending = PendingDecode{};
  const ParallelDecodePlan& plan = in.plan;
  if (!in.tables || plan.seg_end_bit.empty() || plan.sub_begin.empty() || in.components < 1 ||
      in.components > 4) {
    return gpu_error(ErrorCode::InvalidArgument, "an input not made by make_own_jpeg_input");
  }
  const auto host_start = std::chrono::steady_clock::now();
  Report rep;
  PhaseEvents events(options.time_phases, buffers);
  const UnstuffedScan& u = plan.scan;
  const uint32_t nseg = uint32_t(plan.seg_end_bit.size());
  const uint32_t nsub = uint32_t(plan.sub_begin.size());
  const uint64_t total = plan.coefficients;
  PlanesOut out;
  IdctPlanes idct;
  idct.components = in.components;
  uint64_t plane_bytes = 0;
  for (int c = 0; c < in.components; ++c) {
    const size_t k = size_t(c);
    out.coefficient_offset[c] = plan.offset[k];
    out.pitch[c] = int(plan.blocks_w[k] * 8);
    idct.blocks_w[c] = plan.blocks_w[k];
    idct.blocks_h[c] = plan.blocks_h[k];
    idct.pitch[c] = plan.blocks_w[k] * 8;
    idct.coefficient_offset[c] = plan.offset[k];
    idct.plane_offset[c] = plane_bytes;
    idct.first_block[c + 1] = idct.first_block[c] + uint64_t(plan.blocks_w[k]) * plan.blocks_h[k];
    plane_bytes += uint64_t(plan.blocks_w[k]) * 8 * uint64_t(plan.blocks_h[k]) * 8;
  }

  // Everything the kernels read from the host, packed into one pinned buffer: one copy.
  uint32_t flags_init[kFlagCount] = {};
  for (int k = 0; k < EntropyDamageSummary::kKinds; ++k) flags_init[kFlagFirstSegment + k] = kNoSlot;
  UploadLayout up;
  const size_t o_tables = up.add(in.tables.get(), sizeof(ScanTables));
  const size_t o_bytes = up.add(u.bytes.data(), u.bytes.size());
  const size_t o_sub_begin = up.add(plan.sub_begin.data(), nsub * 4ull);
  const size_t o_sub_end = up.add(plan.sub_end.data(), nsub * 4ull);
  const size_t o_sub_seg = up.add(plan.sub_seg.data(), nsub * 4ull);
  const size_t o_seg_end = up.add(plan.seg_end_bit.data(), nseg * 4ull);
  const size_t o_seg_first = up.add(plan.seg_first_sub.data(), (nseg + 1) * 4ull);
  const size_t o_seg_block = up.add(plan.seg_first_block.data(), nseg * 8ull);
  const size_t o_seg_slots = up.add(plan.seg_slots.data(), nseg * 4ull);
  const size_t o_quant = up.add(in.quant.data(), in.quant.size() * 2);
  const size_t o_natural = up.add(kZigzagToNatural.data(), 64);
  const size_t o_flags = up.add(flags_init, sizeof(flags_init));
  rep.upload_bytes = up.total();

  // Device buffers (grow-only: no allocation once they fit the largest picture so far).
  using B = DeviceBuffers;
  auto* d_up = static_cast<uint8_t*>(buffers.device(B::kUpload, up.total()));
  auto* d_start = static_cast<DecodeState*>(buffers.device(B::kStart, nsub * sizeof(DecodeState)));
  auto* d_end_a = static_cast<DecodeState*>(buffers.device(B::kEndA, nsub * sizeof(DecodeState)));
  auto* d_end_b = static_cast<DecodeState*>(buffers.device(B::kEndB, nsub * sizeof(DecodeState)));
  auto* d_slots = static_cast<uint32_t*>(buffers.device(B::kSlots, nsub * 4ull));
  auto* d_excl = static_cast<uint64_t*>(buffers.device(B::kScan, (nsub + 1) * 8ull));
  auto* d_first = static_cast<uint32_t*>(buffers.device(B::kFirstSlot, nsub * 4ull));
  auto* d_coef = static_cast<int16_t*>(buffers.device(B::kCoefficients, total * 2));
  auto* d_planes = static_cast<uint8_t*>(buffers.device(B::kPlanes, plane_bytes));
  void* d_dc_tiles = buffers.device(B::kDcTileSums, dc_tile_sums_bytes(plan.scan_blocks));
  auto* d_dc_carry = static_cast<uint4*>(buffers.device(B::kDcCarry, dc_carry_bytes(plan.scan_blocks)));
  auto* d_seg_damage = static_cast<uint32_t*>(buffers.device(B::kSegDamage, nseg * 4ull));
  const uint32_t nvar = options.phase_variants ? uint32_t(in.tables->blocks_per_mcu) : 0u;
  VariantRecord* d_variants = nullptr;
  if (nvar > 0) {
    d_variants = static_cast<VariantRecord*>(
        buffers.device(B::kVariants, uint64_t(nsub) * nvar * sizeof(VariantRecord)));
    if (!d_variants) return gpu_error(ErrorCode::OutOfMemory, "device buffers (variants)");
  }
  rep.variants = nvar > 0;
  uint8_t* d_trace = nullptr;  // each start's trace, for the write pieces
  if (nvar > 0) {
    d_trace = static_cast<uint8_t*>(buffers.device(B::kTrace, nsub));
    if (!d_trace) return gpu_error(ErrorCode::OutOfMemory, "device buffers (traces)");
  }
  TransferArrays transfer;
  if (nvar > 0 && options.transfer_maps) {
    transfer.map = static_cast<uint8_t*>(buffers.device(B::kTransferMap, transfer_map_bytes(nsub)));
    transfer.map_slots =
        static_cast<uint32_t*>(buffers.device(B::kTransferSlots, transfer_slots_bytes(nsub)));
    transfer.map_trace =
        static_cast<uint8_t*>(buffers.device(B::kTransferTrace, transfer_map_bytes(nsub)));
    transfer.extras =
        static_cast<uint64_t*>(buffers.device(B::kTransferExtras, transfer_extras_bytes(nsub, nvar)));
    transfer.block_maps =
        static_cast<uint8_t*>(buffers.device(B::kTransferBlockMaps, transfer_block_map_bytes(nsub)));
    transfer.map_path =
        static_cast<PathRecord*>(buffers.device(B::kTransferPaths, transfer_path_bytes(nsub)));
    transfer.path = static_cast<PathRecord*>(buffers.device(B::kPaths, nsub * sizeof(PathRecord)));
    if (!transfer.map || !transfer.map_slots || !transfer.map_trace || !transfer.extras ||
        !transfer.block_maps || !transfer.map_path || !transfer.path) {
      return gpu_error(ErrorCode::OutOfMemory, "device buffers (transfer maps)");
    }
  }
  uint32_t* pinned = buffers.pinned();
  uint8_t* staging = buffers.staging(up.total());  // waits for the previous upload from it
  if (!d_up || !d_start || !d_end_a || !d_end_b || !d_slots || !d_excl || !d_first || !d_coef ||
      !d_planes || !d_dc_tiles || !d_dc_carry || !d_seg_damage || !pinned || !staging) {
    return gpu_error(ErrorCode::OutOfMemory, "device or pinned buffers");
  }
  up.pack(staging);
  const auto* d_tables = reinterpret_cast<const ScanTables*>(d_up + o_tables);
  const uint8_t* d_bytes = d_up + o_bytes;
  const auto* d_quant = reinterpret_cast<const uint16_t*>(d_up + o_quant);
  const uint8_t* d_natural = d_up + o_natural;
  auto* d_flags = reinterpret_cast<uint32_t*>(d_up + o_flags);
  SubsequenceArrays a;
  a.begin = reinterpret_cast<const uint32_t*>(d_up + o_sub_begin);
  a.end = reinterpret_cast<const uint32_t*>(d_up + o_sub_end);
  a.segment = reinterpret_cast<const uint32_t*>(d_up + o_sub_seg);
  a.seg_end_bit = reinterpret_cast<const uint32_t*>(d_up + o_seg_end);
  a.seg_first_sub = reinterpret_cast<const uint32_t*>(d_up + o_seg_first);
  a.seg_slots = reinterpret_cast<const uint32_t*>(d_up + o_seg_slots);
  a.seg_first_block = reinterpret_cast<const uint64_t*>(d_up + o_seg_block);
  a.count = nsub;
  a.segments = nseg;
  DcScan dc;
  dc.scan_blocks = plan.scan_blocks;
  dc.restart_mcus = plan.restart_mcus;
  dc.carry = d_dc_carry;
  rep.phase_ms[kPhaseHost] =
      std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - host_start).count();

  // The fixed launch sequence; nothing below waits on the host until the read-back.
  events.mark(kPhaseHost, stream);  // the stream's start
  OWN_CUDA_TRY("upload", cudaMemcpyAsync(d_up, staging, up.total(), cudaMemcpyHostToDevice, stream));
  OWN_CUDA_TRY("upload", buffers.staging_queued(stream));
  events.mark(kPhaseUpload, stream);
  // Steps 2-3: speculative decode, synchronisation (rounds decided on the device).
  OWN_CUDA_TRY("speculative decode",
               launch_speculative(d_tables, d_bytes, a, d_start, d_end_a, d_slots, d_variants, nvar,
                                  d_trace, stream));
  events.mark(kPhaseSpeculative, stream);
  rep.subsequences = nsub;
  OWN_CUDA_TRY("sync", launch_sync(d_tables, d_bytes, a, d_end_a, d_end_b, d_start, d_slots, d_trace,
                                   d_flags, d_variants, nvar, &transfer, options.cooperative_sync,
                                   options.sync_round_cap, stream, &rep.cooperative));
  events.mark(kPhaseSync, stream);
  // Steps 4-6: offsets and checks, write-out, DC prediction; then the IDCT of all components.
  OWN_CUDA_TRY("offsets", launch_offsets(a, d_slots, d_excl, d_first, d_seg_damage, stream));
  events.mark(kPhaseOffsets, stream);
  OWN_CUDA_TRY("write", cudaMemsetAsync(d_coef, 0, total * 2, stream));
  OWN_CUDA_TRY("write", launch_write(d_tables, d_bytes, a, d_start, d_first, d_slots, d_variants,
                                     nvar, options.write_pieces ? d_trace : nullptr, transfer.path,
                                     d_natural, d_coef, d_seg_damage, d_flags, stream));
  events.mark(kPhaseWrite, stream);
  OWN_CUDA_TRY("dc", launch_dc(d_tables, dc, d_dc_tiles, d_coef, nseg, d_seg_damage, d_flags, stream));
  events.mark(kPhaseDc, stream);
  OWN_CUDA_TRY("idct", launch_idct(d_coef, idct, d_quant, d_planes, options.arithmetic, d_tables, dc, stream));
  events.mark(kPhaseIdct, stream);
  OWN_CUDA_TRY("flags", cudaMemcpyAsync(pinned, d_flags, kFlagCount * 4, cudaMemcpyDeviceToHost, stream));
  cudaEvent_t readback = buffers.readback_event();
  if (!readback) return gpu_error(ErrorCode::Internal, "no CUDA event for the read-back");
  OWN_CUDA_TRY("flags", cudaEventRecord(readback, stream));
  out.coefficients = d_coef;
  for (int c = 0; c < in.components; ++c) out.plane[c] = d_planes + idct.plane_offset[c];
  pending.buffers = &buffers;
  pending.report = rep;
  pending.timed = options.time_phases;
  pending.host_start = host_start;
  return out;
}

Result<void> finish_decode(PendingDecode& pending, Report* report, DamageWords* damage) {
  if (!pending.buffers) return ok();
  DeviceBuffers& buffers = *pending.buffers;
  Report rep = pending.report;
  pending.buffers = nullptr;
  OWN_CUDA_TRY("finish", cudaEventSynchronize(buffers.readback_event()));
  const uint32_t* pinned = buffers.pinned();
  if (damage) {
    for (int k = 0; k < 4; ++k) {
      damage->first_segment[k] = pinned[kFlagFirstSegment + k];
      damage->segments[k] = pinned[kFlagSegments + k];
    }
    damage->extraneous_bytes = pinned[kFlagExtraBytes];
  }
  rep.sync_rounds = int(pinned[kFlagSyncRounds]);
  rep.serial_sweep = pinned[kFlagNotConverged] != 0;
  rep.transfer_passes = int(pinned[kFlagTransferPasses]);
  rep.transfer_resolved = pinned[kFlagTransferResolved];
  PhaseEvents(pending.timed, buffers).read(rep.phase_ms);
  rep.wall_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() -
                                                         pending.host_start).count();
  if (report) *report = rep;
  return ok();
}

Result<PlanesOut> decode_input_to_planes(const OwnJpegInput& in, const Options& options,
                                         DeviceBuffers& buffers, cudaStream_t stream,
                                         Report* report, DamageWords* damage) {
  PendingDecode pending;
  PIXPATH_TRY(PlanesOut out, queue_input_to_planes(in, options, buffers, stream, pending));
  PIXPATH_CHECK(finish_decode(pending, report, damage));
  return out;
}

}  // namespace pixpath::cuda::own_jpeg
