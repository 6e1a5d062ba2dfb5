// pixpath's own GPU baseline-JPEG decoder (issue 19): the steps of
// pixpath/codecs/jpeg_entropy_kernels.h (self-synchronising parallel Huffman decoding after
// Weißenberger & Schmidt) as CUDA kernels, one thread per subsequence, then dequantisation +
// islow IDCT (pixpath/codecs/jpeg_idct_kernels.h, libjpeg-turbo's C or SIMD arithmetic) into
// component planes, then jpeg_color_kernels.h (fancy upsampling + jdcolor.c) into RGBA. Every
// step's arithmetic is shared with the CPU tests (codecs_jpeg_parallel_test), which find it
// equal to libjpeg-turbo's coefficients, IDCT samples and tjDecompress2's pixels.
// The module's route decodes with it by default (queue_input_to_planes; the loader makes the
// input; PIXPATH_CUDA_OWN_JPEG=0 keeps nvJPEG); pixpath_own_jpeg (static) holds it all for the
// module, its GPU test and its benchmark.
//
// The decode is a fixed launch sequence on one stream with no host round trip before its end:
// one packed upload from pinned memory, the speculative decode, the transfer maps and the
// synchronisation rounds (one cooperative kernel that loops until a round changes nothing; or, where that launch is
// not possible, a chain of round kernels that exit early once converged), a serial walk that
// runs only if the rounds hit their cap (decided on the device), offsets, write-out, DC
// prediction, one IDCT launch for all components; then one read-back of the damage and sync
// words and the host's wait for that read-back (finish_decode). No allocation per picture once the buffers
// have grown to the largest picture on the device (the host side still allocates the plan's
// vectors and the unstuffed bytes per picture, then packs them into the pinned buffer).
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

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pixpath/codecs/jpeg_baseline_parse.h"
#include "own_jpeg_input.h"
#include "pixpath/codecs/jpeg_idct_kernels.h"
#include "pixpath/core/result.h"

namespace pixpath::cuda::own_jpeg {

// Where the time goes (Options::time_phases): host preparation (parse excluded: tables,
// unstuffing, arrays, the packing of the upload), then stream time from the upload to the
// IDCT's end, one CUDA event between each two steps.
enum Phase { kPhaseHost, kPhaseUpload, kPhaseSpeculative, kPhaseSync, kPhaseOffsets,
             kPhaseWrite, kPhaseDc, kPhaseIdct, kPhaseCount };
inline constexpr const char* kPhaseNames[kPhaseCount] = {
    "host prep", "upload", "speculative", "sync", "offsets", "write", "dc", "idct"};

class DeviceBuffers {
 public:
  enum Slot {
    kUpload, kStart, kEndA, kEndB, kSlots, kScan, kFirstSlot, kCoefficients, kPlanes, kDcTileSums,
    kDcCarry, kSegDamage, kVariants, kTrace, kTransferMap, kTransferSlots, kTransferTrace,
    kTransferExtras, kTransferBlockMaps, kTransferPaths, kPaths, kSlotCount
  };
  DeviceBuffers() = default;
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers();

  // A device buffer of at least `bytes` in `slot` (grown, never shrunk); nullptr on failure.
  void* device(Slot slot, size_t bytes);
  // Pinned host memory of at least `bytes` for the packed upload (grown, never shrunk), once
  // the copy queued from it by the previous decode has run (staging_queued); nullptr on failure.
  uint8_t* staging(size_t bytes);
  // The copy from the staging memory is queued on `stream`: the next staging() waits for it.
  cudaError_t staging_queued(cudaStream_t stream);
  // Pinned host memory for read-backs (kReadbackWords uint32).
  static constexpr int kReadbackWords = 64;
  uint32_t* pinned();
  // The phase timing's events, made on first use (nullptr when that failed).
  cudaEvent_t event(int phase);
  // Recorded after the read-back into pinned() (queue_input_to_planes); made on first use.
  cudaEvent_t readback_event();

 private:
  void* ptr_[kSlotCount] = {};
  size_t size_[kSlotCount] = {};
  uint32_t* pinned_ = nullptr;
  uint8_t* staging_ = nullptr;
  size_t staging_size_ = 0;
  cudaEvent_t staging_done_ = nullptr;
  cudaEvent_t readback_done_ = nullptr;
  cudaEvent_t events_[kPhaseCount] = {};
};

struct Options {
  uint32_t subsequence_bits = kDefaultSubsequenceBits;
  // Synchronisation rounds in one cooperative kernel when the grid fits on the device (else,
  // or when false, a chain of round kernels that exit early once converged).
  bool cooperative_sync = true;
  // Tests: at most this many synchronisation rounds before the serial walk (0: the defaults,
  // kCoopSyncRounds or kLaunchedSyncRounds), to run the walk on ordinary pictures.
  int sync_round_cap = 0;
  // Step 2 once per block index of the MCU (jpeg_entropy_kernels.h, decode_variant): the sync
  // rounds' decodes stop where they meet a variant. Same result; more step-2 threads, shorter
  // rounds (measured on the CPU: 4K q50 4:2:0 at 1024 bits, the rounds' longest decodes add up
  // to 10.5k bits instead of 17.4k; little change for 4:4:4 or short subsequences).
  bool phase_variants = true;
  // Step 3a before the rounds (jpeg_entropy_kernels.h, transfer maps; needs the variants and the
  // cooperative launch): most start states found in a few passes and one composition, so the
  // rounds that follow have little or nothing left to do. Same result.
  bool transfer_maps = true;
  // Step 5 in pieces (jpeg_entropy_kernels.h, write_piece; needs the variants): kWritePieces
  // threads a subsequence where the variants give the states inside it. Same result.
  bool write_pieces = true;
  codecs::jpeg::IdctArithmetic arithmetic = codecs::jpeg::IdctArithmetic::Simd;
  bool time_phases = false;  // fill Report::phase_ms (CUDA events between the steps)
};

struct Report {
  float phase_ms[kPhaseCount] = {};
  float wall_ms = 0;          // host wall time of the call, the final stream wait included
  size_t subsequences = 0;
  int sync_rounds = 0;        // rounds that changed a start state (read back with the damage)
  bool serial_sweep = false;  // the rounds hit their cap: one serial walk per segment ran
  bool cooperative = false;   // the rounds ran in one cooperative kernel
  bool variants = false;      // step 2 ran once per block index (Options::phase_variants)
  int transfer_passes = 0;    // step 3a's passes (0: it did not run)
  uint32_t transfer_resolved = 0;  // subsequences whose start step 3a found
  size_t upload_bytes = 0;    // the one host-to-device copy
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

// A decode queued by queue_input_to_planes whose read-back (the damage and sync words, into
// the buffers' pinned memory) has not been read yet. Plain data; `buffers` null: none.
struct PendingDecode {
  DeviceBuffers* buffers = nullptr;
  Report report;
  bool timed = false;
  std::chrono::steady_clock::time_point host_start;
};

// decode_input_to_planes in two halves, so a caller can queue more work (the conversion,
// another picture on another stream) before the host waits: queue_input_to_planes queues the
// whole decode and its read-back on `stream` and returns at once (the planes are valid on the
// stream); finish_decode waits on the host for the read-back only (not for work queued after
// it) and reads the damage words. Between the two, `buffers` must not start another decode.
// decode_input_to_planes = queue + finish.
Result<PlanesOut> queue_input_to_planes(const OwnJpegInput& input, const Options& options,
                                        DeviceBuffers& buffers, cudaStream_t stream,
                                        PendingDecode& pending);
Result<void> finish_decode(PendingDecode& pending, Report* report = nullptr,
                           DamageWords* damage = nullptr);

// Queues planes -> RGBA (width x height, rgba_pitch bytes per row) on `stream`. Gray and
// YCbCr pictures with 4:4:4, 4:2:2, 4:4:0 and 4:2:0 sampling (chroma_upsampling's refusals).
Result<void> planes_to_rgba(const codecs::jpeg::BaselineJpeg& jpeg, const PlanesOut& planes,
                            uint8_t* rgba, size_t rgba_pitch, cudaStream_t stream);

}  // namespace pixpath::cuda::own_jpeg
