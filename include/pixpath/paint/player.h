// The player: decodes and paints a recording (recording.h) through a PaintEngine into a
// backing, at the recorded pace or as fast as it goes, and measures it. play_recording()
// returns the figures as data; `pixpath play` (src/tools) prints them.
//
// Threading: play_recording() runs the engine's UI loop on the calling thread (that thread
// owns the backing while it runs); the progress callback is called there.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pixpath/core/latency_summary.h"
#include "pixpath/core/result.h"
#include "pixpath/paint/backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::paint {

enum class Pace {
  Recorded,  // submit each event at its recorded time
  Max,       // submit as fast as the engine takes them (at most max_in_flight draws queued)
};

struct PlayProgress {
  int64_t events_done = 0, events_total = 0;
  int64_t draws_acked = 0;
  double elapsed_s = 0;
};

struct PlayOptions {
  std::string file;
  Pace pace = Pace::Recorded;
  std::string snapshot_dir;     // empty: no snapshots
  int decode_threads = 2;
  int video_threads = 0;        // PaintEngineConfig::video_threads (0: its choice)
  bool direct_decode = true;
  int max_in_flight = 0;        // Pace::Max: draws queued at once (0: 4 per decode thread)
  // jpeg / jpega decoder (paint_engine.h, "GPU decoding"): cpu, gpu or auto.
  DecoderChoice decoder = DecoderChoice::Cpu;
  int gpu_max_batch = 0;                                     // PaintEngineConfig::gpu_max_batch
  int64_t gpu_min_pixels = 256 * 256;                        // PaintEngineConfig::gpu_min_pixels
  bool gpu_route_by_measurement = true;  // PaintEngineConfig::gpu_route_by_measurement
  GpuDrawDecoderFactory gpu_factory;               // PaintEngineConfig::gpu_factory
  std::shared_ptr<const GpuDrawDecoder> gpu_decoder;  // share this one (benchmarks, tests)
  std::function<void(const PlayProgress&)> progress;  // about every 100 ms and at the end
};

// Microseconds (core/latency_summary.h).
using pixpath::LatencySummary;

struct CodingStats {
  std::string coding;  // "all" for the totals
  int64_t draws = 0;
  int64_t painted = 0;   // ack > 0
  int64_t errors = 0;    // ack -1
  int64_t skipped = 0;   // ack 0
  int64_t direct = 0;    // decoded straight into the framebuffer
  uint64_t bytes_in = 0;
  // Who decoded the painted and failed draws (PaintReport::decoder).
  int64_t gpu = 0, cpu = 0, gpu_fallbacks = 0;
  // Decoder warnings (PaintReport::warnings: damaged data, painted anyway) and the draws that
  // had them.
  int64_t warnings = 0, warned_draws = 0;
  LatencySummary queue, decode, paint, total;
};

struct PlayResult {
  std::string file;
  std::string backing;
  std::string pace;
  int decode_threads = 0;
  int video_threads = 0;  // the engine's video threads (PaintEngineStats::video_threads)
  int64_t events = 0;
  double recorded_s = 0;  // the recording's own duration
  double wall_s = 0;      // first submit -> last ack
  double fps = 0;         // painted draws per wall second
  double mbytes_per_s = 0;
  int64_t copies = 0, copy_bytes = 0;  // counters() over the play
  std::string decoder = "cpu";         // PaintEngineStats::decoder and decoder_reason
  std::string decoder_reason;
  int64_t gpu_copy_calls = 0;          // texture copy calls (several windows' draws per call)
  int64_t gpu_decodes = 0;             // pictures decoded on the GPU
  int64_t gpu_decode_calls = 0;        // GPU decode calls (pictures / calls = mean batch)
  int64_t gpu_batched_max = 0;         // the most pictures one GPU decode call took
  int gpu_max_batch = 0;               // the batch limit in force (PaintEngineStats)
  std::string last_gpu_error;
  // GPU-codable draws the GPU route kept on the CPU before decoding (PaintEngineStats).
  int64_t gpu_routed_to_cpu = 0;
  std::string last_gpu_route_reason;
  // Routing by measurement (PaintEngineStats::gpu_routing, gpu_route_explored, gpu_route_table).
  std::string gpu_routing;
  int64_t gpu_route_explored = 0;
  std::string gpu_route_table;
  std::vector<CodingStats> per_coding;  // sorted by coding
  CodingStats all;
  std::vector<std::string> errors;      // the first error messages (at most 20)
  std::vector<std::string> warnings;    // the first decoder warnings (at most 20)
  std::vector<std::string> snapshots;   // files written
};

// Plays options.file into `backing` (the result names it). Fails when the file cannot be
// read or the engine cannot start; draws that fail to decode are counted (errors), not fatal.
Result<PlayResult> play_recording(const PlayOptions& options, Backing& backing);

}  // namespace pixpath::paint
