// The paint engine's inside (include/pixpath/paint/paint_engine.h states the contract): the
// queued items and pending acks, and PaintEngine::Impl, whose parts live one file each:
//   paint_engine.cc          the public calls: submit (routing a draw), window events, waits, stats
//   paint_engine_create.cc   create(): config checks, the GPU route decided once
//   paint_engine_queue.cc    the per-window queues and their order, the UI thread's completion
//                            of items, acks, shutdown
//   paint_engine_workers.cc  the CPU decode workers
//   video_draws.cc           video draws (h264, vp8, vp9): one decoder per window, owned by the
//                            window's video thread (its lane), which decodes; the UI thread paints
//   paint_engine_gpu.cc      the GPU route: the GPU thread's batch decodes, the texture copies,
//                            the fence watcher and the acks pending on it
//   gpu_route_chooser.cc     which GPU-codable draws take that route: by size, and by measured
//                            latency per size class (internal/gpu_route_chooser.h)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "internal/gpu_route_chooser.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::paint::internal {

using Clock = std::chrono::steady_clock;

inline int64_t micros(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

enum class Kind { Draw, WindowNew, WindowResize, WindowLost };

// How a jpeg/jpega draw is decoded (GpuMode::Off: always Cpu).
// Video: decoded by the window's stream decoder on the window's video thread (its lane), in the
// window's order; painted by the UI thread at its turn (video_draws.cc).
enum class Route { Cpu, GpuTexture, GpuHost, Video };
enum class GpuMode { Off, Texture, Host };

enum class State {
  Queued,          // waiting for a worker (private decode), or for its video lane (Route::Video)
  Decoding,        // a worker (or the window's video thread) has it
  DirectPending,   // waiting for the UI thread to open a direct target
  DirectStarting,  // the UI thread is opening the target
  DirectDecoding,  // queued for / in a worker, writing into the target
  Ready,           // the UI thread may complete it
};

// What the window's video thread made of a video draw (Route::Video), for the UI thread to
// paint and ack at the draw's turn.
struct VideoResult {
  uint64_t stream = 0;         // the stream decoder that decoded it (engine-wide number; 0: none)
  std::optional<Error> error;  // acked -1; the lane dropped the window's decoder already
  bool gpu_error = false;      // `error` is a GPU failure after the decode (the conversion):
                               // the lane keeps the window's later streams on the CPU
  bool delayed = false;        // no picture yet and the draw says `delayed`: acked as painted
  bool lost = false;           // not decoded: its window was lost before it (acked 0)
  bool gpu = false;            // an NVDEC frame: Item::picture holds its RGBA conversion
                               // (nothing when the draw does not paint)
  std::optional<codecs::VideoFrame> frame;  // a CPU frame (YUV), painted with paint_yuv
};

// One queued event or draw. Fields below `state` are written by whoever owns the item in its
// current state (worker or video thread while Decoding/DirectDecoding, UI thread otherwise);
// ownership passes with `state`, which is only read and written under the engine mutex.
struct Item {
  Kind kind = Kind::Draw;
  int64_t wid = 0;
  int w = 0, h = 0;
  DrawPacket packet;
  Clock::time_point received;
  const codecs::Decoder* decoder = nullptr;
  bool direct = false;
  State state = State::Ready;
  bool counted = false;  // in Impl::stats.queued_* (guarded by the engine mutex)
  uint64_t counted_bytes = 0;
  Picture picture;
  std::optional<Error> error;
  DirectTarget target;
  Clock::time_point decode_start{}, decode_end{};
  Route route = Route::Cpu;
  GpuRouteChooser::Choice routing;  // the GPU route's choice for it (measured: acked into it)
  std::string_view decoder_used = "cpu";
  std::vector<Error> warnings;  // the CPU decoder's (damaged data that still decoded)
  VideoResult video;            // Route::Video
  bool video_ahead = false;     // in Impl::video_ahead (guarded by the engine mutex)
};
using ItemPtr = std::shared_ptr<Item>;

// One window's video state in its lane.
struct VideoWindow {
  std::unique_ptr<codecs::VideoDecoder> decoder;  // the current stream's (null: none)
  uint64_t stream = 0;        // its number (VideoResult::stream)
  bool stream_noted = false;  // the current stream's GPU note was counted (note_video_stream)
  bool cpu_only = false;      // the window's GPU video failed: CPU streams only
  bool lost = false;          // window_lost passed, no window_new since: draws are not decoded
};

// What a video lane does next, in the order given (per window: the window's order).
struct VideoTask {
  enum class Kind { Decode, WindowNew, WindowLost, GpuFailed };
  Kind kind = Kind::Decode;
  int64_t wid = 0;
  ItemPtr item;         // Decode
  uint64_t stream = 0;  // GpuFailed: the stream whose frame failed on the GPU after its turn
};

// A video thread and the windows it decodes. A window is given to one lane at its first video
// draw (the lane with the fewest windows) and stays there until the lane has processed its
// window_lost and has nothing else of it queued: its frames decode one at a time, in order, on
// that lane's thread, and different windows' lanes decode in parallel.
// Ownership rule: `windows` (the decoders, their streams' notes, the CPU-only marks) is touched
// only by the lane's thread, which holds `role` all its life; shutdown() takes the role after
// joining the thread, to flush and drop what is left. The lane's queue is Impl::video_tasks.
struct VideoLane {
  ThreadRole role;
  std::map<int64_t, VideoWindow> windows PIXPATH_GUARDED_BY(role);
  std::condition_variable_any cv;  // waits on Impl::mu for video_tasks[index] or stopping
  // Started at the lane's first task (push_video_task, under the engine mutex, never once
  // stopping is set), so an engine without video draws runs no video thread; joined by shutdown.
  std::thread thread;
  bool started = false;  // guarded by the engine mutex
  int index = 0;
};

// Which lane a window's video goes to, and how many of its tasks that lane has queued or in hand.
struct VideoLaneOf {
  int lane = 0;
  int tasks = 0;
};

// An acknowledgement waiting for the GPU (fence set), or queued behind one of its window.
struct PendingAck {
  ItemPtr item;
  std::shared_ptr<const GpuFence> fence;  // null: painted already, only ordered behind
  int64_t decode_code = 1;
  std::string message;
  int64_t paint_us = 0;
  bool signalled = false;  // guarded by the engine mutex
  Clock::time_point done_at{};
  std::optional<Error> fence_error;
};
using PendingPtr = std::shared_ptr<PendingAck>;

// Whether the GPU decoder can take this draw (jpeg, or jpega with its alpha offset; painted
// as is: no delta/store, no scaling).
bool gpu_codable(const DrawPacket& p);

}  // namespace pixpath::paint::internal

namespace pixpath::paint {

struct PaintEngine::Impl {
  using Clock = internal::Clock;
  using Kind = internal::Kind;
  using Route = internal::Route;
  using GpuMode = internal::GpuMode;
  using State = internal::State;
  using Item = internal::Item;
  using ItemPtr = internal::ItemPtr;
  using PendingAck = internal::PendingAck;
  using PendingPtr = internal::PendingPtr;

  Backing& backing;
  PaintEngineConfig config;
  const PixelFormat format;

  mutable Mutex mu;
  std::condition_variable_any work_cv;  // workers wait here
  std::condition_variable_any ui_cv;    // wait_for_work waits here
  bool stopping PIXPATH_GUARDED_BY(mu) = false;
  bool shut_down PIXPATH_GUARDED_BY(mu) = false;
  bool ui_work PIXPATH_GUARDED_BY(mu) = false;  // something for the UI thread arrived
  int busy_workers PIXPATH_GUARDED_BY(mu) = 0;
  std::map<int64_t, std::deque<ItemPtr>> queues PIXPATH_GUARDED_BY(mu);
  std::deque<ItemPtr> work PIXPATH_GUARDED_BY(mu);
  PaintEngineStats stats PIXPATH_GUARDED_BY(mu);
  std::vector<std::thread> workers;

  // GPU route (fixed after create()).
  GpuMode gpu_mode = GpuMode::Off;
  // Which GPU-codable draws take it, by size and measured latency (texture route; any thread).
  internal::GpuRouteChooser gpu_route;
  std::shared_ptr<const GpuDrawDecoder> gpu;
  // Acks in delivery order (FIFO: all copies go through one stream, so fences signal in order).
  std::deque<PendingPtr> pending PIXPATH_GUARDED_BY(mu);
  std::deque<PendingPtr> to_watch PIXPATH_GUARDED_BY(mu);  // fences for the watcher thread
  bool watcher_stop PIXPATH_GUARDED_BY(mu) = false;
  std::condition_variable_any watcher_cv;
  std::thread watcher;
  // The GPU thread (GpuMode::Texture): GPU-routed draws wait here, not in `work`.
  std::deque<ItemPtr> gpu_work PIXPATH_GUARDED_BY(mu);
  std::condition_variable_any gpu_cv;
  std::thread gpu_thread;

  // UI thread only.
  std::map<int64_t, DeltaBuckets> buckets;
  std::map<int64_t, int> pending_per_window;     // acks of a window in `pending`
  bool ack_in_place = false;                     // finish() acks at once (deliver_pending)
  std::map<int64_t, uint32_t> registered_textures;  // window -> texture given to the GPU decoder
  // Video, the UI thread's side (the decoders live in the lanes, below).
  std::set<int64_t> video_cpu_windows;     // windows whose GPU video failed: CPU streams only
  // A window's stream dropped by the UI thread after a GPU failure at the copy (texture check,
  // copy, fence): its later frames, decoded ahead, are acked -1 as the fresh decoder the old
  // engine made would have failed them (the server's next key frame starts a CPU stream).
  std::map<int64_t, uint64_t> video_dropped_stream;

  // Video lanes (video_draws.cc): fixed after create().
  bool video_gpu = false;
  std::vector<std::unique_ptr<internal::VideoLane>> lanes;
  std::vector<std::deque<internal::VideoTask>> video_tasks PIXPATH_GUARDED_BY(mu);  // per lane
  std::map<int64_t, internal::VideoLaneOf> video_lane_of PIXPATH_GUARDED_BY(mu);
  int busy_video PIXPATH_GUARDED_BY(mu) = 0;
  // Per window: draws its lane decoded that the UI thread has not completed yet. A lane does not
  // decode a window's next draw while kVideoAhead wait (it takes other windows' meanwhile), so
  // decoded frames (a YUV frame, or an RGBA one in CUDA memory) do not pile up behind a slow UI
  // thread.
  static constexpr int kVideoAhead = 3;
  std::map<int64_t, int> video_ahead PIXPATH_GUARDED_BY(mu);
  std::atomic<uint64_t> video_stream_numbers{0};

  // Queue-full log rate limiting (guarded by mu).
  Clock::time_point last_full_log PIXPATH_GUARDED_BY(mu){};
  // Decode warnings: the last log line's time and the warnings since (count_warnings).
  Clock::time_point last_warning_log PIXPATH_GUARDED_BY(mu){};
  int64_t warnings_since_log PIXPATH_GUARDED_BY(mu) = 0;
  int64_t full_since_log PIXPATH_GUARDED_BY(mu) = 0;

  Impl(Backing& b, PaintEngineConfig c)
      : backing(b),
        config(std::move(c)),
        format(b.format()),
        gpu_route({.threshold = config.gpu_min_pixels,
                   .measured = config.gpu_route_by_measurement && config.gpu_min_pixels > 0}) {}

  // ---- paint_engine_queue.cc: the queues, the UI thread's side, acks, shutdown
  void notify_ui() PIXPATH_REQUIRES(mu) { ui_work = true; }
  void wake_ui();
  void log(std::string_view line);
  // Under mu: the reason a draw of `bytes` cannot be queued now, if it cannot.
  std::optional<std::string> queue_full(uint64_t bytes) PIXPATH_REQUIRES(mu);
  void enqueue(ItemPtr item);
  void ack(const Item& item, int64_t decode_time_us, std::string message, int64_t paint_us,
           Clock::time_point now = Clock::now());
  void window_event_error(const Error& e);
  // UI thread: the item is at the head of its window's queue and ready.
  void complete(Item& item);
  void complete_draw(Item& item);
  // UI thread: acks now, or behind the window's outstanding GPU acks.
  void finish(Item& item, int64_t code, std::string message, int64_t paint_us);
  bool is_idle() const PIXPATH_REQUIRES(mu);
  void drain_release_domain();
  int run_ui_once();
  void start_direct(const ItemPtr& item);
  void shutdown();

  // ---- video_draws.cc: video draws, decoded on the window's lane, painted on the UI thread
  // Under mu: queues a task on the window's lane (giving the window one if it has none and
  // `assign`, and starting the lane's thread at its first task); returns the lane, or -1 when
  // the window has none. Wake the lane with wake_video_lane() once mu is let go.
  int push_video_task(internal::VideoTask task, bool assign) PIXPATH_REQUIRES(mu);
  void wake_video_lane(int lane);  // -1: none
  void make_video_lanes();
  void video_loop(internal::VideoLane& lane);
  // Under mu: the lane's next task: the first whose window is not kVideoAhead draws ahead
  // (a window's later tasks wait behind its first); tasks.end() when none.
  std::deque<internal::VideoTask>::iterator next_video_task(std::deque<internal::VideoTask>& tasks)
      PIXPATH_REQUIRES(mu);
  // UI thread, at a video draw's turn: it is no longer ahead.
  void video_draw_taken(Item& item);
  void run_video_task(internal::VideoLane& lane, internal::VideoTask& task)
      PIXPATH_REQUIRES(lane.role);
  void decode_video(internal::VideoLane& lane, Item& item) PIXPATH_REQUIRES(lane.role);
  // Flushes and drops a window's stream decoder (held-back frames are dropped unpainted).
  static void drop_video_decoder(internal::VideoWindow& w);
  // shutdown(), after the lanes were joined: flushes and drops every decoder left.
  void drop_video_lanes();
  // UI thread: paints / acks a video draw at its turn from what its lane made of it.
  void complete_video(Item& item);
  // UI thread: acks a video draw -1 with the error (its lane dropped the decoder already, or
  // is told to by post_video_gpu_failed).
  void fail_video(Item& item, const Error& e);
  // UI thread: a GPU frame failed after its decode (texture check, copy, fence; or the
  // conversion on the lane, `lane_knows`): counted, logged, the window's later streams go to
  // the CPU, acked -1.
  void video_gpu_failed(Item& item, const Error& e, bool lane_knows);
  // UI thread: tells the window's lane to drop `stream` and decode the window on the CPU.
  void post_video_gpu_failed(int64_t wid, uint64_t stream);
  // ---- video_draws_gpu.cc: video frames decoded by NVDEC, into the window texture
  // create(): whether video streams ask for the GPU (video_gpu, stats.video_decoder).
  void decide_video_gpu();
  // The gpu_device for a window's new stream (-1: CPU).
  int video_gpu_device(const internal::VideoWindow& w, const codecs::VideoStreamParams& want,
                       const DrawPacket& p) const;
  // Counts a GPU-requested stream that libavcodec decodes on the CPU, once per stream (lane).
  void note_video_stream(int64_t wid, internal::VideoWindow& w);
  // Lane: a frame in CUDA memory converted to RGBA (into item.picture), or the GPU error.
  void convert_video_gpu(internal::VideoWindow& w, Item& item, codecs::VideoFrame frame);
  // UI thread: a converted frame copied into the window texture, acked at the fence.
  void complete_video_gpu(Item& item);

  // ---- paint_engine_workers.cc: the CPU decode workers
  void worker_loop();
  void decode(Item& item);
  // A CPU decode of a draw the GPU failed after its worker was done (UI thread; rare).
  void redo_on_cpu(Item& item, const Error& e);
  // Counts a decoded item's warnings in stats (per coding) and logs them (rate-limited).
  void count_warnings(const Item& item);

  // ---- paint_engine_gpu.cc: the GPU route
  // The GPU thread: takes every GPU-routed draw waiting (at most config.gpu_max_batch) and
  // decodes them in one decode_batch_to_device call, so draws arriving together (several
  // windows updating at once, or a burst of one) share the hardware JPEG engines as one batch;
  // one draw alone is decoded alone, with no waiting for company. Pictures the GPU failed go to
  // the workers, for the CPU.
  void gpu_loop();
  void decode_gpu_batch(std::vector<ItemPtr>& batch);
  GpuDecodeParams gpu_params(const DrawPacket& p) const;
  // Any thread (submit): true when gpu_exactness_refusal() keeps this draw off the GPU (counted
  // in stats.gpu_routed_to_cpu, the reason in stats.last_gpu_route_reason).
  bool gpu_refuses(const DrawPacket& p);
  void gpu_failed(Item& item, const Error& e);
  // Worker: the GPU part of a GpuHost draw (GpuTexture draws go to the GPU thread); false when
  // it must be decoded on the CPU.
  bool decode_gpu_to_host(Item& item);
  // UI thread, texture route: registers a new or resized window's texture with the GPU decoder
  // now rather than at its first GPU draw. A failure is left to that draw (which registers
  // again, or goes to the CPU). The texture is remembered either way: a failure after the
  // registration (the first map) still leaves one for forget_texture() to drop.
  void prepare_window_texture(int64_t wid);
  void forget_window_texture(int64_t wid);
  // UI thread: whether a ready item goes into this run's texture copy.
  bool gpu_copy_ready(const Item& item);
  // UI thread: one copy_to_textures call for the draws collected in `batch` (any windows).
  // Returns how many were completed here (painted on the CPU after a failed copy).
  int flush_copies(std::vector<ItemPtr>& batch);
  // Watcher thread: sleeps on each fence in turn, stamps the time, wakes the UI thread.
  void watcher_loop();
  // UI thread: delivers the acks whose turn has come. Returns how many.
  int deliver_pending();
};

}  // namespace pixpath::paint
