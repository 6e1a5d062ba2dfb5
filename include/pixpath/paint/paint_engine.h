// PaintEngine: takes draw packets and window events from any thread, decodes on worker
// threads, paints into a Backing on the UI thread, and ends every packet in exactly one
// DamageAck.
//
// Threads.
//   - submit(), window_new(), window_resize(), window_lost(): any thread (the network thread).
//   - Worker threads (config.decode_threads): decode only; they never touch the backing
//     except for writing a DirectTarget's pixels they were handed.
//   - The GPU thread (GPU route only, see "GPU decoding"): decodes GPU-routed draws into CUDA
//     memory; like the workers it never touches the backing.
//   - Video threads (config.video_threads, see "Video draws"): each decodes the video draws of
//     the windows given to it, in order; they never touch the backing either.
//   - The UI thread (the thread that called create() and owns the backing): run_ui_once(),
//     wait_for_work(), wait_idle(), shutdown(), the destructor. Every backing call, every
//     delta-bucket operation, every ack and report callback happens there. config.wakeup is
//     called from any thread when the UI thread has work; it must not block (post an event).
//
// Ordering. The events and draws of one window take effect in the order they were given
// (per window; windows are independent), whatever order the workers finish decoding in.
//
// Zero-copy rule. A draw that can be decoded straight into the framebuffer (a decoder that
// can_write() the backing's format; no delta/store; no scaled_size; paint not false) is
// decoded directly into a DirectTarget when, at submit time, its window has no earlier
// unpainted draw (earlier window events are fine: the target is opened after them). The UI
// thread opens the target (backing.begin_direct) and hands it to a worker; the window's later
// items wait behind it (they keep decoding in parallel, into private pictures), so nothing
// else touches those pixels meanwhile. Every other draw decodes into a private picture (in
// the backing's format when the decoder can write it, so its paint is one plain row copy),
// painted by the UI thread in order. Delta/store draws decode in their natural format (what
// the server XORed) and are XORed on the UI thread in packet order (delta_buckets.h).
//
// Acknowledgements: exactly one per draw, delivered to config.on_ack on the UI thread:
// decode_time_us > 0 (received -> painted, microseconds) on success, including void and
// paint=false; -1 on a decode, delta or paint error (the message says which); 0 when
// skipped: the window does not exist when the draw's turn comes (never created, or lost
// before it; draws given before window_lost() are still painted, in order), or the engine
// shut down. Draws still queued at shutdown are acked 0 by shutdown(); draws submitted after
// shutdown are acked 0 at once, on the submitting thread.
//
// GPU decoding (config.decoder; decided once, in create(); stats() says what and why).
//   - cpu: every draw on the CPU decoders.
//   - auto: the GPU route below when the backing has window textures (backing.h) and
//     config.gpu_factory makes a GPU decoder (gpu_draw_decoder.h); else cpu, with the reason
//     in stats().
//   - gpu: the GPU route; create() fails with ErrorCode::Unavailable when no GPU decoder can be
//     had. With a backing without window textures (the CPU backing) jpeg/jpega are decoded by
//     decode_to_host() on the workers and painted from host memory (the pixels then do visit
//     host memory: the documented fallback, for parity tests and `decode --gpu`).
// The GPU route takes jpeg and jpega draws that are painted, unscaled and without delta/store
// (those stay on the CPU); one the routing below sends to the CPU is decoded there instead
// (straight into the framebuffer when it can), and so is one that gpu_exactness_refusal()
// (gpu_draw_decoder.h) keeps off the GPU: tables too coarse for the GPU to match the CPU
// within +-1, arithmetic coding, CMYK, a truncated stream (stats().gpu_routed_to_cpu and
// last_gpu_route_reason count and say why; its report says "cpu"). They wait for the engine's GPU thread, which
// takes every such draw waiting (at most config.gpu_max_batch) and decodes them into CUDA
// memory in one
// decode_batch_to_device call: draws that arrive together, typically several windows updating
// at once, go to the hardware JPEG engines as one batch; a draw alone is decoded alone, without
// waiting for company (the GPU thread may wait for nvJPEG, the UI thread never does). A
// picture the GPU fails goes to a worker and is decoded on the CPU. When the draw's turn comes, the UI
// thread queues a copy into the window's texture (copy_to_textures: a GPU-side wait for the
// decode, CUDA-GL map, copy, unmap, one CUDA event; no host wait); the draws of every window
// ready in one run_ui_once() go in one call (one map of all their textures). A watcher thread
// sleeps on the event and wakes the UI thread; the ack (decode_time = received -> the event
// signalled) is then sent from run_ui_once(). Acks of one window keep their order: a later draw
// of a window with a GPU ack outstanding is painted at once but acked after it.
// Ordering on the GPU: the copy is issued on the UI thread in the window's order, between GL
// commands; cudaGraphicsMapResources orders it after every GL command issued before it and
// cudaGraphicsUnmapResources orders every GL command issued after it (a later CPU-painted draw's
// glTexSubImage2D, a scroll, a snapshot) after the copy. Before a window is resized or
// destroyed its texture is unregistered from CUDA (forget_texture: a device synchronisation
// on the UI thread, the one host wait of this route, only on resize/destroy).
// Failures: any GPU failure for a picture (decode, copy, or the event reporting an error)
// decodes that picture on the CPU (on the worker, or on the UI thread for copy failures) and
// paints it in order; it is counted in stats().gpu_fallbacks and its report says "gpu->cpu".
// Flood protection: at most config.max_queued_draws draws (and config.max_queued_bytes of
// their data) wait between submit() and their acknowledgement. A draw over either limit is
// refused at once: acknowledged -1 ("paint engine queue full: ...") on the submitting thread,
// never decoded, its data dropped; config.log gets one line for the first refusal and then at
// most one a second with the count. The server then refreshes the region later, as after any
// decode error. Stats report the current and highest queue length.
//
// Video draws (h264, vp8, vp9: codecs/video_decoder.h). Each window has one stream decoder,
// made at its first video draw and made again when a draw says `frame` 0 or changes the
// coding, the encoded size (scaled_size, else w x h) or `csc`; a change without `frame` 0 is
// an error. Frames depend on each other, so a window's video draws decode in order, one at a
// time, on one video thread: a window is given to one of config.video_threads threads (the one
// with the fewest windows) at its first video draw and keeps it until its window_lost has been
// processed there; the thread owns the window's decoder and decodes each draw as soon as it is
// submitted, while different windows decode in parallel on their threads. The UI thread, when
// the draw's turn comes, only paints the frame with Backing::paint_yuv() from the decoder's own
// frame memory (no copy before the backing's); the report's decode_us is the video thread's
// time, paint_us the UI thread's. (The frame a picture holds stays valid while the decoder goes
// on: its buffers are refcounted.) A video thread decodes a window's draws at most 3 ahead of
// the UI thread's painting (taking other windows' draws meanwhile), so decoded frames do not
// pile up behind a slow UI thread.
// Acks: the paint time on success; a `delayed` draw that gave no picture yet is acked as
// painted (its picture comes with a later frame); no picture without `delayed`, or any decode
// error, is acked -1 with the reason and drops the window's decoder (the server then sends a
// key frame). The decoder is flushed and dropped when its window is lost (on its video thread,
// in the window's order: draws given after window_lost() and before a window_new() are not
// decoded, acked 0 at their turn), and at shutdown (after the video threads stopped; each
// finishes the draw in hand, later ones are acked 0 as every unpainted draw).
// On the GPU route (GPU decoder into the window textures) a window's video streams whose
// encoded size is the draw's size are made with the GPU decoder's CUDA device
// (VideoStreamParams::gpu_device; PIXPATH_VIDEO_GPU=0 turns this off): NVDEC decodes them where
// it can, and each GPU frame is converted to RGBA in CUDA memory (convert_video_frame, on the
// video thread: it waits for its kernel) and copied into the window texture (copy_to_textures)
// on the UI thread, acked like a GPU JPEG draw (when the copy's fence signals). A stream NVDEC
// does not take is decoded and painted on the CPU as above (counted in video_gpu_streams_on_cpu, the reason in last_video_gpu_note).
// A GPU failure after the decode (convert, copy, fence) acks that draw -1 (the server then
// sends a key frame) and keeps the window's later streams on the CPU; the window's frames its
// video thread had already decoded on that stream are acked -1 too (as a fresh decoder would
// have failed them), and so is a GPU stream it began before it heard of the failure.
//
// Release: storages the backing's release_domain() must release are drained on the UI thread
// at every run_ui_once() and at shutdown().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/result.h"
#include "pixpath/paint/backing.h"
#include "pixpath/paint/delta_buckets.h"
#include "pixpath/paint/gpu_draw_decoder.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::paint {

// Finds the decoder for a coding (null: unknown). Must be callable from any thread.
using DecoderLookup = std::function<const codecs::Decoder*(std::string_view coding)>;
// The builtin CPU codecs (codecs::CodecRegistry::builtin()).
DecoderLookup builtin_decoders();

// Which decoder runs jpeg / jpega draws (see "GPU decoding" above).
enum class DecoderChoice { Cpu, Gpu, Auto };
std::string_view to_string(DecoderChoice choice);
// "cpu", "gpu", "auto".
[[nodiscard]] Result<DecoderChoice> parse_decoder_choice(std::string_view text);

// Where one packet's time went, for statistics (all in microseconds, 0 when not reached).
struct PaintReport {
  std::string coding;
  size_t bytes_in = 0;
  bool direct = false;     // decoded straight into the framebuffer
  // Who decoded it: "cpu", "gpu", or "gpu->cpu" (the GPU failed; decoded on the CPU).
  std::string_view decoder = "cpu";
  int64_t queue_us = 0;    // received -> decode started
  int64_t decode_us = 0;   // decoding (worker; video: the video thread, GPU conversion included)
  int64_t paint_us = 0;    // delta + paint (UI thread; GPU route: queuing the texture copy)
  int64_t total_us = 0;    // received -> painted (GPU route: the copy's event signalled)
  // The decoder's warnings (damaged data that still decoded and was painted), and the first.
  int warnings = 0;
  std::string warning;
};

using AckSink = std::function<void(const DamageAck& ack, const PaintReport& report)>;

struct PaintEngineConfig {
  int decode_threads = 2;
  int delta_buckets = DeltaBuckets::kDefaultCount;
  bool direct_decode = true;  // false: always decode privately (for measuring)
  std::function<void()> wakeup;
  AckSink on_ack;
  // UI thread, just before a lost window's framebuffer is destroyed (e.g. to snapshot it).
  std::function<void(int64_t wid)> before_window_destroy;
  DecoderLookup decoders;  // null: builtin_decoders()
  codecs::DecodeLimits limits;
  // GPU decoding of jpeg / jpega (see "GPU decoding" above).
  DecoderChoice decoder = DecoderChoice::Cpu;
  // The most draws one GPU decode call takes (1..64; 1: one picture per call; 0: auto,
  // auto_gpu_batch() below). A batch spreads over the hardware JPEG engines, each picture on one
  // (on the own decoder's route, the share it hands to the engines); on the H200 (7 engines) 8
  // windows of 4K frames went from ~480 draws/s one by one to ~1,200 batched (docs/performance.md,
  // "Many windows").
  int gpu_max_batch = 0;
  // On the GPU route, a jpeg / jpega draw of fewer pixels than this is decoded on the CPU,
  // straight into the framebuffer when it can be (0: every such draw takes the GPU). Measured on
  // the H200 through the engine, two decode threads (docs/performance.md, "GPU decode", small
  // pictures again): one draw in flight, received -> painted p50, CPU vs GPU: 128x128 0.17 /
  // 0.19 ms (both direct on the CPU then), 256x256 0.47 / 0.72, 384x384 0.97 / 0.77; 8 in
  // flight, draws/s and latency p50: 128x128 10.9k, 0.47 ms / 8.6k, 0.81 ms; 192x192 7.3k,
  // 0.74 ms / 8.9k, 0.85 ms; 256x256 5.7k, 1.32 ms / 7.7k, 0.89 ms.
  int64_t gpu_min_pixels = 256 * 256;
  // Routing by measurement (the texture route; src/paint/internal/gpu_route_chooser.h): draws
  // from 64x64 to under 1024x1024 pixels take, per size class (powers of two), whichever route
  // painted that class sooner lately (received -> pixels in the window, queue waits included, so
  // the current load counts); gpu_min_pixels is the choice until both routes have been measured
  // (one draw in 8 of a class takes the other route meanwhile), then one draw in 32 times the
  // ratio of the two figures (at most 1 in 256) keeps the slower one's current. Smaller and
  // larger draws follow gpu_min_pixels alone. false, or gpu_min_pixels 0: gpu_min_pixels alone.
  // stats().gpu_route_table shows the figures.
  bool gpu_route_by_measurement = true;
  // Makes the GPU decoder when the choice above needs one (cuda::gpu_draw_decoder_factory() in a
  // program with the GPU module); empty: no GPU route in this program (auto -> cpu, gpu fails).
  GpuDrawDecoderFactory gpu_factory;
  // Use this decoder instead of making one (sharing one between engines; tests).
  std::shared_ptr<const GpuDrawDecoder> gpu_decoder;
  // Flood protection (see the header comment); 0 = no limit.
  int max_queued_draws = 1024;
  uint64_t max_queued_bytes = uint64_t{512} << 20;
  // One log line (no trailing newline), from any thread; null: the pixpath log
  // (core/log.h), as warnings.
  std::function<void(std::string_view)> log;
  // Video threads (see "Video draws"): 0..64; 0: min(4, the hardware's threads). Each window's
  // video decodes on one of them; 1: every window's video on one thread (still off the UI thread).
  int video_threads = 0;
};

// gpu_max_batch = 0: on nvJPEG's route, this many pictures per hardware JPEG engine in one GPU
// decode call.
inline constexpr int kGpuBatchPerEngine = 2;

// The batch limit gpu_max_batch = 0 stands for. nvJPEG's route (every picture on the engines):
// kGpuBatchPerEngine per engine. The own decoder's route (GpuDrawDecoder::reports_damage()),
// which hands a share of a batch to the engines (tuned by measured throughput) and decodes the
// rest on the SMs at the same time: one per engine plus one, which measured best on the H200 (8 4K windows: batches of
// 8 ~1,170-1,270 draws/s, of 14 ~890-1,090). No engines: 8.
inline constexpr int auto_gpu_batch(int engines, bool own_decoder) {
  if (engines <= 0) return 8;
  const int n = own_decoder ? engines + 1 : kGpuBatchPerEngine * engines;
  return n < 64 ? n : 64;
}

struct PaintEngineStats {
  int64_t submitted = 0, acked = 0;
  int64_t direct_decodes = 0, private_decodes = 0;
  int64_t window_event_errors = 0;
  std::string last_window_event_error;
  // The decoder chosen at create() for jpeg / jpega: "cpu", "gpu" (into window textures) or
  // "gpu-host" (decode_to_host, painted from host memory), and why.
  std::string decoder = "cpu";
  std::string decoder_reason = "decoder cpu";
  int64_t gpu_decodes = 0;     // pictures decoded on the GPU
  int64_t gpu_fallbacks = 0;   // pictures the GPU failed, decoded on the CPU
  // GPU-codable draws kept on the CPU before decoding by gpu_exactness_refusal()
  // (gpu_draw_decoder.h: low-quality tables, arithmetic coding, CMYK, truncated), and the last
  // reason.
  int64_t gpu_routed_to_cpu = 0;
  std::string last_gpu_route_reason;
  // Routing by measurement (config.gpu_route_by_measurement): "measured" or "size" (the
  // threshold alone; also the GPU route into host memory), "" without a GPU route; the draws
  // that took the other route to measure it, and each size class's figures
  // ("64x64+ cpu 0.21 ms (12) gpu 0.48 ms (5) -> cpu; ...").
  std::string gpu_routing;
  int64_t gpu_route_explored = 0;
  std::string gpu_route_table;
  int64_t gpu_copy_calls = 0;  // copy_to_textures calls (several windows' draws per call)
  int64_t gpu_decode_calls = 0;  // decode_batch_to_device calls (gpu_decodes / this = mean batch)
  int64_t gpu_batched_max = 0;   // the most draws one of those calls took
  int gpu_max_batch = 0;         // the limit in force (config.gpu_max_batch, auto resolved)
  std::string last_gpu_error;
  // Warnings of the CPU decoders per coding (damaged data that still decoded: the draw is
  // painted, its report's `warnings` says how many), and the last one. The first, then at most
  // one a second, also go to config.log.
  std::map<std::string, int64_t> decode_warnings;
  std::string last_decode_warning;
  int64_t refused_queue_full = 0;        // draws acked -1 because the queue was full
  // Video draws (h264, vp8, vp9; decoded on the video threads by one stream decoder per window).
  int64_t video_draws = 0;          // video draws completed
  int64_t video_frames = 0;         // of those, painted with a new frame
  int64_t video_delayed = 0;        // no picture yet, `delayed` said so: acked as painted
  int64_t video_errors = 0;         // acked -1
  int64_t video_streams = 0;        // stream decoders created
  int video_threads = 0;            // video threads (config.video_threads resolved)
  int video_threads_running = 0;    // of which started: a thread starts at its first video draw
  std::string last_video_error;
  // Video streams on the GPU (see "Video draws"): "nvdec" when streams are asked to decode on
  // the GPU, else "cpu"; and why.
  std::string video_decoder = "cpu";
  std::string video_decoder_reason;
  std::map<std::string, int64_t> video_gpu_frames;  // per coding: frames painted from NVDEC
  std::map<std::string, int64_t> video_cpu_frames;  // per coding: frames painted from the CPU
  int64_t video_gpu_streams_on_cpu = 0;  // GPU-requested streams libavcodec decoded on the CPU
  int64_t video_gpu_failures = 0;        // GPU frames acked -1 (convert, copy or fence failed)
  std::string last_video_gpu_note;
  int64_t queued_draws = 0;              // submitted, not yet acknowledged (now)
  uint64_t queued_bytes = 0;             // their data bytes (now)
  int64_t max_queued_draws_seen = 0;     // the highest queued_draws so far
  uint64_t max_queued_bytes_seen = 0;
};

class PaintEngine {
 public:
  // Call on the UI thread; `backing` must outlive the engine.
  static Result<std::unique_ptr<PaintEngine>> create(Backing& backing, PaintEngineConfig config);
  // Shuts down (see shutdown()). UI thread.
  ~PaintEngine();
  PaintEngine(const PaintEngine&) = delete;
  PaintEngine& operator=(const PaintEngine&) = delete;

  // Any thread.
  void window_new(int64_t wid, int w, int h);
  void window_resize(int64_t wid, int w, int h);
  void window_lost(int64_t wid);
  void submit(DrawPacket packet);

  // UI thread: applies every event and paints every draw that is ready, in order; opens
  // direct targets; delivers GPU acks whose fence has signalled; drains the release domain.
  // Returns the number of items completed (GPU draws count when their ack is delivered).
  int run_ui_once();
  // UI thread: blocks until there may be UI work (or the timeout passes).
  void wait_for_work(std::chrono::microseconds timeout);
  // UI thread: runs the UI loop until nothing is queued or in flight; false on timeout.
  bool wait_idle(std::chrono::milliseconds timeout);
  bool idle() const;

  // UI thread: stops the workers (each finishes the packet in hand), acks every unpainted
  // draw with 0 ("shutdown"), closes direct targets and drains the release domain.
  void shutdown();

  PaintEngineStats stats() const;

  struct Impl;

 private:
  explicit PaintEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pixpath::paint
