// pixpath's own GPU baseline-JPEG decoder (issue 19), first cut: the steps of
// pixpath/codecs/jpeg_entropy_kernels.h (self-synchronising parallel Huffman decoding after
// Weißenberger & Schmidt) as CUDA kernels, one thread per subsequence, then dequantisation +
// islow IDCT (pixpath/codecs/jpeg_idct_kernels.h, libjpeg-turbo's C or SIMD arithmetic) into
// component planes, then jpeg_color_kernels.h (fancy upsampling + jdcolor.c) into RGBA. Every
// step's arithmetic is shared with the CPU tests (codecs_jpeg_parallel_test), which find it
// equal to libjpeg-turbo's coefficients, IDCT samples and tjDecompress2's pixels.
// NOT wired into the module's routing yet: built as pixpath_own_jpeg (static) for its GPU test.
//
// What still waits on the host (to be removed before it is routed): each synchronisation
// round reads a changed-count back (one stream synchronisation per round, 1-2 rounds
// usually, at most kMaxSyncRounds + 1 before a serial walk), and the end reads the damage
// words back (in the same copy and synchronisation that ends the decode).
//
// Damaged entropy data (a bit flip, a cut: jpeg_entropy_kernels.h, subsequence_damage) is not
// an error: the kernels flag it per segment while they write the coefficients, and the decode
// returns its planes with PlanesOut::warnings, the same warnings the CPU reference gives
// (entropy_damage_warnings; stage "own gpu decode").
//
// Threading: a DeviceBuffers and its stream belong to one thread at a time.
// Ownership: DeviceBuffers owns its device and pinned memory (grow-only); PlanesOut points
// into it and is valid until the next decode with the same buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pixpath/codecs/jpeg_baseline_parse.h"
#include "own_jpeg_input.h"
#include "pixpath/codecs/jpeg_idct_kernels.h"
#include "pixpath/core/result.h"

namespace pixpath::cuda::own_jpeg {

class DeviceBuffers {
 public:
  enum Slot {
    kTables, kBytes, kSubBegin, kSubEnd, kSubSeg, kSegEndBit, kSegFirstSub, kSegFirstBlock,
    kSegSlots, kStart, kEndA, kEndB, kSlots, kScan, kFirstSlot, kCoefficients, kPlanes,
    kFlags, kQuant, kChunkFirstBlock, kChunkBlocks, kChunkResets, kDcSums, kDcPrefix,
    kSegDamage, kSlotCount
  };
  DeviceBuffers() = default;
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers();

  // A device buffer of at least `bytes` in `slot` (grown, never shrunk); nullptr on failure.
  void* device(Slot slot, size_t bytes);
  // Pinned host memory for read-backs (16 uint32).
  uint32_t* pinned();

 private:
  void* ptr_[kSlotCount] = {};
  size_t size_[kSlotCount] = {};
  uint32_t* pinned_ = nullptr;
};

struct Options {
  uint32_t subsequence_bits = 1024;
  codecs::jpeg::IdctArithmetic arithmetic = codecs::jpeg::IdctArithmetic::Simd;
  bool time_phases = false;  // fill Report::phase_ms (CUDA events between the steps)
};

// Where the time goes (Options::time_phases): host preparation (parse excluded: tables,
// unstuffing, arrays), then stream time from upload to the IDCT's end.
enum Phase { kPhaseHost, kPhaseUpload, kPhaseSpeculative, kPhaseSync, kPhaseOffsets,
             kPhaseWrite, kPhaseDc, kPhaseIdct, kPhaseCount };
inline constexpr const char* kPhaseNames[kPhaseCount] = {
    "host prep", "upload", "speculative", "sync", "offsets", "write", "dc", "idct"};

struct Report {
  float phase_ms[kPhaseCount] = {};
  size_t subsequences = 0;
  int sync_rounds = 0;        // rounds that changed a start state
  bool serial_sweep = false;  // the rounds did not converge: one serial walk per segment
};

// Device results: coefficients in the planar layout of codecs::jpeg::CoefficientImage, and
// one plane of 8-bit samples per component (stored_blocks * 8 wide and high, `pitch` bytes per
// row; the component's real samples are its top-left sample_width x sample_height).
struct PlanesOut {
  const int16_t* coefficients = nullptr;
  uint64_t coefficient_offset[4] = {};
  const uint8_t* plane[4] = {};
  int pitch[4] = {};
  // Damaged entropy data (Severity::Warning; Truncated or CorruptData); empty when intact.
  std::vector<Error> warnings;
};

// Decodes the scan of `jpeg` (parsed from `data`) into planes on `stream`; returns after the
// stream has finished (the host reads the damage words). Errors (CUDA failures, sizes): subject
// "jpeg", stage "own gpu decode"; damaged data: PlanesOut::warnings.
Result<PlanesOut> decode_to_planes(std::span<const uint8_t> data,
                                   const codecs::jpeg::BaselineJpeg& jpeg, const Options& options,
                                   DeviceBuffers& buffers, cudaStream_t stream,
                                   Report* report = nullptr);

// The same decode from plain data (own_jpeg_input.h; what the GPU module, which links no pixpath
// library, would take across its ABI): uses no pixpath_codecs function (own_jpeg_run.cc), and
// returns the damage as words (DamageWords; damage_warnings() makes the warnings), PlanesOut's
// warnings left empty. decode_to_planes is make-the-input + this + the warnings.
Result<PlanesOut> decode_input_to_planes(const OwnJpegInput& input, const Options& options,
                                         DeviceBuffers& buffers, cudaStream_t stream,
                                         Report* report = nullptr, DamageWords* damage = nullptr);

// Queues planes -> RGBA (width x height, rgba_pitch bytes per row) on `stream`. Gray and
// YCbCr pictures with 4:4:4, 4:2:2, 4:4:0 and 4:2:0 sampling (chroma_upsampling's refusals).
Result<void> planes_to_rgba(const codecs::jpeg::BaselineJpeg& jpeg, const PlanesOut& planes,
                            uint8_t* rgba, size_t rgba_pitch, cudaStream_t stream);

}  // namespace pixpath::cuda::own_jpeg
