#include "pixpath/paint/paint_engine.h"

#include <algorithm>
#include <cstdio>
#include <condition_variable>
#include <deque>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "internal/draw_decoding.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/log.h"
#include "pixpath/core/thread_annotations.h"

namespace pixpath::paint {

std::string_view to_string(DecoderChoice choice) {
  switch (choice) {
    case DecoderChoice::Cpu: return "cpu";
    case DecoderChoice::Gpu: return "gpu";
    case DecoderChoice::Auto: return "auto";
  }
  return "?";
}

Result<DecoderChoice> parse_decoder_choice(std::string_view text) {
  if (text == "cpu") return DecoderChoice::Cpu;
  if (text == "gpu") return DecoderChoice::Gpu;
  if (text == "auto") return DecoderChoice::Auto;
  return Error(ErrorCode::InvalidArgument, "decoder", "parse",
               "'" + std::string(text) + "' is not cpu, gpu or auto");
}

DecoderLookup builtin_decoders() {
  return [](std::string_view coding) { return codecs::CodecRegistry::builtin().decoder(coding); };
}

namespace {

using Clock = std::chrono::steady_clock;

int64_t micros(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

enum class Kind { Draw, WindowNew, WindowResize, WindowLost };

// How a jpeg/jpega draw is decoded (GpuMode::Off: always Cpu).
enum class Route { Cpu, GpuTexture, GpuHost };
enum class GpuMode { Off, Texture, Host };

enum class State {
  Queued,          // waiting for a worker (private decode)
  Decoding,        // a worker has it
  DirectPending,   // waiting for the UI thread to open a direct target
  DirectStarting,  // the UI thread is opening the target
  DirectDecoding,  // queued for / in a worker, writing into the target
  Ready,           // the UI thread may complete it
};

// One queued event or draw. Fields below `state` are written by whoever owns the item in its
// current state (worker while Decoding/DirectDecoding, UI thread otherwise); ownership passes
// with `state`, which is only read and written under the engine mutex.
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
  std::optional<std::string> skip;  // ack 0 with this reason (guarded by the engine mutex)
  Picture picture;
  std::optional<Error> error;
  DirectTarget target;
  Clock::time_point decode_start{}, decode_end{};
  Route route = Route::Cpu;
  std::string_view decoder_used = "cpu";
};
using ItemPtr = std::shared_ptr<Item>;

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

bool gpu_codable(const DrawPacket& p) {
  if (p.coding != "jpeg" && p.coding != "jpega") return false;
  if (p.coding == "jpega" && !p.options.alpha_offset) return false;
  return !p.options.delta && !p.options.store && p.options.paint && !internal::is_scaled(p) &&
         p.w > 0 && p.h > 0;
}

}  // namespace

struct PaintEngine::Impl {
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

  // Queue-full log rate limiting (guarded by mu).
  Clock::time_point last_full_log PIXPATH_GUARDED_BY(mu){};
  int64_t full_since_log PIXPATH_GUARDED_BY(mu) = 0;

  Impl(Backing& b, PaintEngineConfig c) : backing(b), config(std::move(c)), format(b.format()) {}

  void notify_ui() PIXPATH_REQUIRES(mu) { ui_work = true; }
  void wake_ui() {
    ui_cv.notify_all();
    if (config.wakeup) config.wakeup();
  }

  // Every line here is a refused draw: a warning in the pixpath log (core/log.h).
  void log(std::string_view line) {
    if (config.log)
      config.log(line);
    else
      log_line(LogLevel::Warning, "paint: " + std::string(line));
  }

  // Under mu: the reason a draw of `bytes` cannot be queued now, if it cannot.
  std::optional<std::string> queue_full(uint64_t bytes) PIXPATH_REQUIRES(mu) {
    const int max_n = config.max_queued_draws;
    const uint64_t max_b = config.max_queued_bytes;
    if (max_n > 0 && stats.queued_draws >= max_n)
      return "paint engine queue full: " + std::to_string(stats.queued_draws) +
             " draws waiting (limit " + std::to_string(max_n) + "); draw refused";
    if (max_b > 0 && stats.queued_bytes + bytes > max_b)
      return "paint engine queue full: " + std::to_string(stats.queued_bytes) + " + " +
             std::to_string(bytes) + " bytes of draw data waiting (limit " +
             std::to_string(max_b) + "); draw refused";
    return std::nullopt;
  }

  void enqueue(ItemPtr item) {
    bool need_worker = false, need_gpu = false;
    bool stopped = false;
    std::optional<std::string> refused;
    std::optional<std::string> log_line;
    {
      MutexLock lock(mu);
      if (shut_down) {
        stopped = true;
      } else if (item->kind == Kind::Draw &&
                 (refused = queue_full(item->packet.data.size()))) {
        stats.submitted++;
        stats.refused_queue_full++;
        full_since_log++;
        const auto now = Clock::now();
        if (last_full_log == Clock::time_point{} || now - last_full_log >= std::chrono::seconds(1)) {
          log_line = *refused + " (" + std::to_string(full_since_log) +
                     " refused since the last report, " +
                     std::to_string(stats.refused_queue_full) + " in all)";
          full_since_log = 0;
          last_full_log = now;
        }
      } else {
        auto& q = queues[item->wid];
        if (item->kind == Kind::Draw) {
          stats.submitted++;
          item->counted = true;
          item->counted_bytes = item->packet.data.size();
          stats.queued_draws++;
          stats.queued_bytes += item->counted_bytes;
          stats.max_queued_draws_seen = std::max(stats.max_queued_draws_seen, stats.queued_draws);
          stats.max_queued_bytes_seen = std::max(stats.max_queued_bytes_seen, stats.queued_bytes);
          if (item->state == State::Queued) {
            const bool earlier_draw = std::any_of(q.begin(), q.end(), [](const ItemPtr& i) {
              return i->kind == Kind::Draw;
            });
            if (!earlier_draw && item->direct) {
              item->state = State::DirectPending;
            } else {
              item->direct = false;
              if (item->route == Route::GpuTexture) {
                gpu_work.push_back(item);
                need_gpu = true;
              } else {
                work.push_back(item);
                need_worker = true;
              }
            }
          }
        }
        q.push_back(item);
        notify_ui();
      }
    }
    if (refused) {
      if (log_line) log(*log_line);
      item->packet.data = SharedBytes();  // drop the bytes now
      ack(*item, -1, *refused, 0);
      return;
    }
    if (stopped) {
      if (item->kind == Kind::Draw) {
        {
          MutexLock lock(mu);
          stats.submitted++;
        }
        ack(*item, 0, "shutdown: engine stopped", 0);
      }
      return;
    }
    if (need_worker) work_cv.notify_one();
    if (need_gpu) gpu_cv.notify_one();
    wake_ui();
  }

  void worker_loop() {
    for (;;) {
      ItemPtr item;
      {
        MutexLock lock(mu);
        while (!stopping && work.empty()) work_cv.wait(mu);
        if (stopping) return;
        item = std::move(work.front());
        work.pop_front();
        if (item->skip) {  // its window was lost: do not bother decoding
          item->state = State::Ready;
          notify_ui();
          item.reset();
        } else {
          item->state = item->direct ? State::DirectDecoding : State::Decoding;
          busy_workers++;
          if (item->direct)
            stats.direct_decodes++;
          else
            stats.private_decodes++;
        }
      }
      if (!item) {
        wake_ui();
        continue;
      }
      decode(*item);
      {
        MutexLock lock(mu);
        item->state = State::Ready;
        busy_workers--;
        notify_ui();
      }
      wake_ui();
    }
  }

  // The GPU thread: takes every GPU-routed draw waiting (at most config.gpu_max_batch) and
  // decodes them in one decode_batch_to_device call, so draws arriving together (several
  // windows updating at once, or a burst of one) share the hardware JPEG engines as one batch;
  // one draw alone is decoded alone, with no waiting for company. Pictures the GPU failed go to
  // the workers, for the CPU.
  void gpu_loop() {
    std::vector<ItemPtr> batch;
    for (;;) {
      bool skipped = false;
      {
        MutexLock lock(mu);
        while (!stopping && gpu_work.empty()) gpu_cv.wait(mu);
        if (stopping) return;
        while (!gpu_work.empty() && int(batch.size()) < config.gpu_max_batch) {
          ItemPtr item = std::move(gpu_work.front());
          gpu_work.pop_front();
          if (item->skip) {  // its window was lost: do not bother decoding
            item->state = State::Ready;
            skipped = true;
            continue;
          }
          item->state = State::Decoding;
          batch.push_back(std::move(item));
        }
        if (skipped) notify_ui();
        if (!batch.empty()) busy_workers++;
      }
      if (batch.empty()) {
        wake_ui();
        continue;
      }
      decode_gpu_batch(batch);
      bool to_cpu = false;
      {
        MutexLock lock(mu);
        for (auto& item : batch) {
          if (item->route == Route::Cpu) {  // the GPU failed it: a worker decodes it
            item->state = State::Queued;
            work.push_back(item);
            to_cpu = true;
          } else {
            item->state = State::Ready;
          }
        }
        busy_workers--;
        notify_ui();
      }
      batch.clear();
      if (to_cpu) work_cv.notify_all();
      wake_ui();
    }
  }

  void decode_gpu_batch(std::vector<ItemPtr>& batch) {
    std::vector<GpuDecodeJob> jobs;
    jobs.reserve(batch.size());
    const auto start = Clock::now();
    for (auto& item : batch) {
      item->decode_start = start;
      jobs.push_back({item->packet.data.span(), gpu_params(item->packet)});
    }
    auto results = gpu->decode_batch_to_device(jobs);
    const auto end = Clock::now();
    int64_t decoded = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      Item& item = *batch[i];
      item.decode_end = end;
      if (i < results.size() && results[i].ok()) {
        item.picture = std::move(results[i]).value();
        item.decoder_used = "gpu";
        ++decoded;
      } else {
        gpu_failed(item, i < results.size() ? results[i].error()
                                            : Error(ErrorCode::Internal, item.packet.coding, "gpu decode",
                                                    "the GPU decoder returned no result"));
      }
    }
    MutexLock lock(mu);
    stats.gpu_decodes += decoded;
    stats.gpu_decode_calls++;
    stats.gpu_batched_max = std::max<int64_t>(stats.gpu_batched_max, int64_t(batch.size()));
  }

  GpuDecodeParams gpu_params(const DrawPacket& p) const {
    GpuDecodeParams params;
    params.width = p.w;
    params.height = p.h;
    if (p.coding == "jpega") params.alpha_offset = p.options.alpha_offset;
    params.limits = config.limits;
    return params;
  }

  void gpu_failed(Item& item, const Error& e) {
    item.route = Route::Cpu;
    item.decoder_used = "gpu->cpu";
    item.picture = Picture();
    MutexLock lock(mu);
    stats.gpu_fallbacks++;
    stats.last_gpu_error = e.message();
  }

  // Worker: the GPU part of a GpuHost draw (GpuTexture draws go to the GPU thread); false when
  // it must be decoded on the CPU.
  bool decode_gpu_to_host(Item& item) {
    const DrawPacket& p = item.packet;
    auto r = gpu->decode_to_host(p.data.span(), gpu_params(p));
    if (!r.ok()) return gpu_failed(item, r.error()), false;
    item.picture = std::move(r->picture);
    item.decoder_used = "gpu";
    MutexLock lock(mu);
    stats.gpu_decodes++;
    return true;
  }

  // A CPU decode of a draw the GPU failed after its worker was done (UI thread; rare).
  void redo_on_cpu(Item& item, const Error& e) {
    gpu_failed(item, e);
    auto r = internal::decode_private(item.packet, *item.decoder, format, config.limits);
    if (r.ok())
      item.picture = std::move(r).value();
    else
      item.error = r.error();
  }

  void decode(Item& item) {
    item.decode_start = Clock::now();
    const DrawPacket& p = item.packet;
    if (item.route == Route::GpuHost && decode_gpu_to_host(item)) {
      item.decode_end = Clock::now();
      return;
    }
    if (item.direct) {
      auto r = internal::decode_direct(p, *item.decoder, item.target.view, config.limits);
      if (!r.ok()) item.error = r.error();
    } else {
      auto r = internal::decode_private(p, *item.decoder, format, config.limits);
      if (r.ok())
        item.picture = std::move(r).value();
      else
        item.error = r.error();
    }
    item.decode_end = Clock::now();
  }

  void ack(const Item& item, int64_t decode_time_us, std::string message, int64_t paint_us,
           Clock::time_point now = Clock::now()) {
    DamageAck ack;
    ack.sequence = item.packet.sequence;
    ack.wid = item.wid;
    ack.w = item.packet.w;
    ack.h = item.packet.h;
    ack.message = std::move(message);
    PaintReport report;
    report.coding = item.packet.coding;
    report.bytes_in = item.packet.data.size();
    report.direct = item.direct;
    report.decoder = item.decoder_used;
    if (item.decode_start != Clock::time_point{}) {
      report.queue_us = micros(item.decode_start - item.received);
      report.decode_us = micros(item.decode_end - item.decode_start);
    }
    report.paint_us = paint_us;
    report.total_us = std::max<int64_t>(1, micros(now - item.received));
    ack.decode_time_us = decode_time_us > 0 ? report.total_us : decode_time_us;
    {
      MutexLock lock(mu);
      stats.acked++;
      if (item.counted) {
        stats.queued_draws--;
        stats.queued_bytes -= item.counted_bytes;
      }
    }
    if (config.on_ack) config.on_ack(ack, report);
  }

  void window_event_error(const Error& e) {
    MutexLock lock(mu);
    stats.window_event_errors++;
    stats.last_window_event_error = e.message();
  }

  // UI thread: the item is at the head of its window's queue and ready.
  void complete(Item& item) {
    switch (item.kind) {
      case Kind::WindowNew: {
        auto r = backing.create_window(item.wid, item.w, item.h);
        if (!r.ok()) window_event_error(r.error());
        else prepare_window_texture(item.wid);
        buckets.insert_or_assign(item.wid, DeltaBuckets(config.delta_buckets));
        return;
      }
      case Kind::WindowResize: {
        forget_window_texture(item.wid);
        auto r = backing.resize_window(item.wid, item.w, item.h);
        if (!r.ok()) window_event_error(r.error());
        else prepare_window_texture(item.wid);
        return;
      }
      case Kind::WindowLost: {
        if (backing.window_size(item.wid)) {
          if (config.before_window_destroy) config.before_window_destroy(item.wid);
          forget_window_texture(item.wid);
          auto r = backing.destroy_window(item.wid);
          if (!r.ok()) window_event_error(r.error());
        }
        buckets.erase(item.wid);
        return;
      }
      case Kind::Draw:
        complete_draw(item);
        return;
    }
  }

  void complete_draw(Item& item) {
    std::optional<std::string> skip;
    {
      MutexLock lock(mu);
      skip = item.skip;
    }
    if (item.direct && item.state == State::Ready && item.target.view.plane_count > 0) {
      auto r = backing.end_direct(item.target, !item.error && !skip);
      item.target = {};
      if (!r.ok() && !item.error) item.error = r.error();
    }
    if (skip) return finish(item, 0, *skip, 0);
    const DrawPacket& p = item.packet;
    if (!backing.window_size(item.wid))
      return finish(item, 0, "window " + std::to_string(item.wid) + " does not exist", 0);
    if (item.error) return finish(item, -1, item.error->message(), 0);
    const auto paint_start = Clock::now();
    auto paint_us = [&] { return std::max<int64_t>(1, micros(Clock::now() - paint_start)); };
    if (item.direct) return finish(item, 1, "", paint_us());
    if (p.coding == "void") return finish(item, 1, "", paint_us());
    if (p.coding == "scroll") {
      auto r = backing.scroll(item.wid, p.options.scroll);
      if (!r.ok()) return finish(item, -1, r.error().message(), paint_us());
      return finish(item, 1, "", paint_us());
    }
    if (item.route == Route::GpuTexture)  // not copied by the batch: e.g. partly outside
      redo_on_cpu(item, Error(ErrorCode::OutOfRange, p.coding, "gpu texture",
                              "the draw is not inside the window texture"));
    if (item.error) return finish(item, -1, item.error->message(), paint_us());
    Picture pic = std::move(item.picture);
    if (p.options.delta || p.options.store) {
      auto b = buckets.find(item.wid);
      if (b == buckets.end())
        b = buckets.emplace(item.wid, DeltaBuckets(config.delta_buckets)).first;
      auto r = b->second.apply(std::move(pic), p.options, p.coding);
      if (!r.ok()) return finish(item, -1, r.error().message(), paint_us());
      pic = std::move(r).value();
    }
    if (p.options.paint) {
      auto r = backing.paint(item.wid, p.x, p.y, pic, p.w, p.h);
      if (!r.ok()) return finish(item, -1, r.error().within(p.coding, "paint").message(), paint_us());
    }
    pic = Picture();  // drop it here, on the UI thread
    return finish(item, 1, "", paint_us());
  }

  // UI thread: acks now, or behind the window's outstanding GPU acks.
  void finish(Item& item, int64_t code, std::string message, int64_t paint_us) {
    auto it = pending_per_window.find(item.wid);
    if (ack_in_place || it == pending_per_window.end() || it->second == 0)
      return ack(item, code, std::move(message), paint_us);
    auto a = std::make_shared<PendingAck>();
    a->item = std::make_shared<Item>(std::move(item));
    a->item->picture = Picture();  // painted: drop the pixels here, on the UI thread
    a->decode_code = code;
    a->message = std::move(message);
    a->paint_us = paint_us;
    a->signalled = true;
    a->done_at = Clock::now();
    it->second++;
    MutexLock lock(mu);
    pending.push_back(std::move(a));
  }

  // UI thread, texture route: registers a new or resized window's texture with the GPU decoder
  // now rather than at its first GPU draw. A failure is left to that draw (which registers
  // again, or goes to the CPU). The texture is remembered either way: a failure after the
  // registration (the first map) still leaves one for forget_texture() to drop.
  void prepare_window_texture(int64_t wid) {
    if (gpu_mode != GpuMode::Texture || !gpu) return;
    auto tex = backing.window_texture(wid);
    if (!tex || tex->texture == 0) return;
    registered_textures[wid] = tex->texture;
    (void)gpu->prepare_texture({tex->texture, tex->width, tex->height, 0, 0});
  }

  void forget_window_texture(int64_t wid) {
    auto it = registered_textures.find(wid);
    if (it == registered_textures.end()) return;
    gpu->forget_texture(it->second);
    registered_textures.erase(it);
  }

  // UI thread: whether a ready item goes into this run's texture copy.
  bool gpu_copy_ready(const Item& item) {
    if (item.kind != Kind::Draw || item.route != Route::GpuTexture || item.error ||
        item.picture.plane_count() == 0 || item.picture.location().kind != MemoryKind::CudaDevice)
      return false;
    {
      MutexLock lock(mu);
      if (item.skip) return false;
    }
    auto tex = backing.window_texture(item.wid);
    const DrawPacket& p = item.packet;
    return tex && tex->texture != 0 && p.x >= 0 && p.y >= 0 && p.x + p.w <= tex->width &&
           p.y + p.h <= tex->height && item.picture.width() == p.w && item.picture.height() == p.h;
  }

  // UI thread: one copy_to_textures call for the draws collected in `batch` (any windows).
  // Returns how many were completed here (painted on the CPU after a failed copy).
  int flush_copies(std::vector<ItemPtr>& batch) {
    if (batch.empty()) return 0;
    int completed = 0;
    std::vector<GpuCopyJob> jobs;
    jobs.reserve(batch.size());
    for (const auto& item : batch) {
      const auto tex = backing.window_texture(item->wid);  // checked by gpu_copy_ready()
      const DrawPacket& p = item->packet;
      jobs.push_back({&item->picture, {tex->texture, tex->width, tex->height, p.x, p.y}});
      registered_textures[item->wid] = tex->texture;
    }
    const auto t0 = Clock::now();
    auto fence = gpu->copy_to_textures(jobs);
    const int64_t paint_us = std::max<int64_t>(1, micros(Clock::now() - t0));
    {
      MutexLock lock(mu);
      stats.gpu_copy_calls++;
    }
    for (auto& item : batch) {
      if (!fence.ok()) {  // nothing was written: paint these on the CPU, in order
        redo_on_cpu(*item, fence.error());
        complete_draw(*item);
        ++completed;
        continue;
      }
      const DrawPacket& p = item->packet;
      if (auto r = backing.texture_written(item->wid, Rect{p.x, p.y, p.w, p.h}); !r.ok())
        window_event_error(r.error());
      auto a = std::make_shared<PendingAck>();
      a->item = item;
      a->fence = *fence;
      a->paint_us = paint_us;
      pending_per_window[item->wid]++;
      MutexLock lock(mu);
      pending.push_back(a);
      to_watch.push_back(std::move(a));
    }
    batch.clear();
    watcher_cv.notify_one();
    return completed;
  }

  // Watcher thread: sleeps on each fence in turn, stamps the time, wakes the UI thread.
  void watcher_loop() {
    for (;;) {
      PendingPtr a;
      {
        MutexLock lock(mu);
        while (!watcher_stop && to_watch.empty()) watcher_cv.wait(mu);
        if (to_watch.empty()) return;  // stopping, and every fence seen
        a = std::move(to_watch.front());
        to_watch.pop_front();
      }
      auto r = a->fence->wait();
      const auto t = Clock::now();
      {
        MutexLock lock(mu);
        a->signalled = true;
        a->done_at = t;
        if (!r.ok()) a->fence_error = r.error();
        notify_ui();
      }
      wake_ui();
    }
  }

  // UI thread: delivers the acks whose turn has come. Returns how many.
  int deliver_pending() {
    int n = 0;
    for (;;) {
      PendingPtr a;
      {
        MutexLock lock(mu);
        if (pending.empty() || !pending.front()->signalled) break;
        a = std::move(pending.front());
        pending.pop_front();
      }
      Item& item = *a->item;
      if (--pending_per_window[item.wid] == 0) pending_per_window.erase(item.wid);
      if (a->fence_error) {
        // The copy failed on the GPU (CUDA is then usually in a sticky error state and later
        // GPU work fails over by itself). Paint it from the CPU now and ack it in its place;
        // later draws of the window painted meanwhile may be covered until the next update.
        redo_on_cpu(item, *a->fence_error);
        a->fence.reset();
        ack_in_place = true;
        complete_draw(item);
        ack_in_place = false;
      } else {
        a->fence.reset();
        ack(item, a->decode_code, a->message, a->paint_us, a->done_at);
      }
      item.picture = Picture();
      ++n;
    }
    return n;
  }

  bool is_idle() const PIXPATH_REQUIRES(mu) {
    if (!work.empty() || !gpu_work.empty() || busy_workers > 0 || !pending.empty()) return false;
    for (const auto& [wid, q] : queues)
      if (!q.empty()) return false;
    return true;
  }

  void drain_release_domain() {
    if (auto domain = backing.release_domain()) (void)domain->drain();
  }

  int run_ui_once() {
    drain_release_domain();
    int completed = 0;
    for (;;) {
      std::vector<ItemPtr> todo, to_start;
      {
        MutexLock lock(mu);
        ui_work = false;
        for (auto& [wid, q] : queues) {
          while (!q.empty()) {
            ItemPtr& head = q.front();
            if (head->state == State::Ready ||
                (head->state == State::DirectPending && head->skip)) {
              head->state = State::Ready;
              todo.push_back(std::move(head));
              q.pop_front();
              continue;
            }
            if (head->state == State::DirectPending) {
              head->state = State::DirectStarting;
              to_start.push_back(head);
            }
            break;
          }
        }
      }
      if (todo.empty() && to_start.empty()) break;
      std::vector<ItemPtr> batch;  // GPU texture copies, issued together
      for (auto& item : todo) {
        if (gpu_mode == GpuMode::Texture) {
          if (gpu_copy_ready(*item)) {  // counted when its ack is delivered
            batch.push_back(item);
            continue;
          }
          // Anything else of a window with a copy in the batch goes after the copy.
          if (std::any_of(batch.begin(), batch.end(),
                          [&](const ItemPtr& b) { return b->wid == item->wid; }))
            completed += flush_copies(batch);
        }
        complete(*item);
        completed++;
      }
      completed += flush_copies(batch);
      todo.clear();  // pictures released here, on the UI thread
      for (auto& item : to_start) start_direct(item);
    }
    completed += deliver_pending();  // GPU acks whose fence signalled count as completed
    drain_release_domain();
    return completed;
  }

  void start_direct(const ItemPtr& item) {
    const DrawPacket& p = item->packet;
    auto target = backing.begin_direct(item->wid, Rect{p.x, p.y, p.w, p.h});
    const bool window_exists = backing.window_size(item->wid).has_value();
    {
      MutexLock lock(mu);
      if (target.ok()) {
        item->target = std::move(target).value();
        item->state = State::DirectDecoding;  // marked again by the worker
        work.push_front(item);  // the window waits on it: first in line
      } else if (!window_exists) {
        item->state = State::Ready;  // completes as "does not exist"
        item->direct = false;
        notify_ui();
      } else {
        item->direct = false;  // e.g. the rectangle is not inside the window: paint clips
        item->state = State::Queued;
        work.push_back(item);
      }
    }
    work_cv.notify_one();
  }

  void shutdown() {
    {
      MutexLock lock(mu);
      if (shut_down) return;
      stopping = true;
    }
    work_cv.notify_all();
    gpu_cv.notify_all();
    if (gpu_thread.joinable()) gpu_thread.join();
    for (auto& t : workers) t.join();
    workers.clear();
    if (watcher.joinable()) {  // the watcher sees every fence before it stops
      {
        MutexLock lock(mu);
        watcher_stop = true;
      }
      watcher_cv.notify_all();
      watcher.join();
    }
    deliver_pending();
    std::vector<ItemPtr> left;
    {
      MutexLock lock(mu);
      shut_down = true;
      for (auto& [wid, q] : queues)
        for (auto& item : q) left.push_back(std::move(item));
      queues.clear();
      work.clear();
      gpu_work.clear();
    }
    for (auto& item : left) {
      if (item->kind != Kind::Draw) continue;
      if (item->target.view.plane_count > 0) {
        (void)backing.end_direct(item->target, false);
        item->target = {};
      }
      ack(*item, 0, "shutdown: not painted", 0);
    }
    left.clear();
    buckets.clear();
    while (!registered_textures.empty()) forget_window_texture(registered_textures.begin()->first);
    drain_release_domain();
  }
};

Result<std::unique_ptr<PaintEngine>> PaintEngine::create(Backing& backing,
                                                         PaintEngineConfig config) {
  if (config.decode_threads < 1 || config.decode_threads > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "decode_threads must be 1..64, not " + std::to_string(config.decode_threads));
  if (config.gpu_max_batch < 0 || config.gpu_max_batch > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "gpu_max_batch must be 0 (auto) or 1..64, not " + std::to_string(config.gpu_max_batch));
  if (config.gpu_min_pixels < 0)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create", "gpu_min_pixels must be >= 0");
  if (config.delta_buckets < 0 || config.delta_buckets > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "delta_buckets must be 0..64");
  if (!config.decoders) config.decoders = builtin_decoders();
  // The GPU decoder: decided once, here.
  GpuMode mode = GpuMode::Off;
  std::string reason = "decoder cpu";
  std::shared_ptr<const GpuDrawDecoder> gpu = config.gpu_decoder;
  if (config.decoder != DecoderChoice::Cpu) {
    const bool textures = backing.has_window_textures();
    std::optional<Error> gpu_error;
    if (!gpu && (textures || config.decoder == DecoderChoice::Gpu)) {
      if (!config.gpu_factory) {
        gpu_error = Error(ErrorCode::Unavailable, "paint engine", "create",
                          "this program has no GPU route (no GPU decoder factory)");
      } else if (auto r = config.gpu_factory(); r.ok()) {
        gpu = std::move(r).value();
      } else {
        gpu_error = r.error();
      }
    }
    const std::string bname(backing.name());
    if (config.decoder == DecoderChoice::Auto) {
      if (!textures)
        reason = "decoder auto: cpu, backing '" + bname + "' has no window textures";
      else if (!gpu)
        reason = "decoder auto: cpu, no GPU decoder: " + gpu_error->message();
      else
        mode = GpuMode::Texture, reason = "decoder auto: gpu, into the window textures";
    } else {
      if (!gpu)
        return Error(ErrorCode::Unavailable, "paint engine", "create",
                     "decoder gpu: no GPU decoder: " + gpu_error->message());
      mode = textures ? GpuMode::Texture : GpuMode::Host;
      reason = textures ? "decoder gpu: into the window textures"
                        : "decoder gpu: backing '" + bname +
                              "' has no window textures: decode_to_host, painted from host memory";
    }
  }
  if (mode == GpuMode::Off) gpu.reset();
  if (config.gpu_max_batch == 0) {
    const int engines = gpu ? gpu->hardware_engines() : 0;
    config.gpu_max_batch = engines > 0 ? std::min(64, kGpuBatchPerEngine * engines) : 8;
  }
  auto impl = std::make_unique<Impl>(backing, std::move(config));
  Impl* raw = impl.get();
  raw->gpu_mode = mode;
  raw->gpu = std::move(gpu);
  {
    MutexLock lock(raw->mu);
    raw->stats.decoder = mode == GpuMode::Off ? "cpu" : (mode == GpuMode::Texture ? "gpu" : "gpu-host");
    raw->stats.decoder_reason = reason;
    raw->stats.gpu_max_batch = raw->config.gpu_max_batch;
  }
  if (mode == GpuMode::Texture) {
    raw->watcher = std::thread([raw] { raw->watcher_loop(); });
    raw->gpu_thread = std::thread([raw] { raw->gpu_loop(); });
  }
  for (int i = 0; i < raw->config.decode_threads; ++i)
    raw->workers.emplace_back([raw] { raw->worker_loop(); });
  return std::unique_ptr<PaintEngine>(new PaintEngine(std::move(impl)));
}

PaintEngine::PaintEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PaintEngine::~PaintEngine() { impl_->shutdown(); }

void PaintEngine::window_new(int64_t wid, int w, int h) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::WindowNew;
  item->wid = wid;
  item->w = w;
  item->h = h;
  impl_->enqueue(std::move(item));
}

void PaintEngine::window_resize(int64_t wid, int w, int h) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::WindowResize;
  item->wid = wid;
  item->w = w;
  item->h = h;
  impl_->enqueue(std::move(item));
}

void PaintEngine::window_lost(int64_t wid) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::WindowLost;
  item->wid = wid;
  impl_->enqueue(std::move(item));
}

void PaintEngine::submit(DrawPacket packet) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::Draw;
  item->wid = packet.wid;
  item->received =
      packet.received == Clock::time_point{} ? Clock::now() : packet.received;
  item->packet = std::move(packet);
  const DrawPacket& p = item->packet;
  if (internal::is_builtin_coding(p.coding)) {
    item->state = State::Ready;
  } else if ((item->decoder = impl_->config.decoders(p.coding)) == nullptr) {
    item->state = State::Ready;
    item->error = Error(ErrorCode::Unsupported, p.coding.empty() ? "draw" : p.coding, "decode",
                        "unknown coding '" + p.coding + "'");
  } else {
    item->state = State::Queued;
    const bool direct_capable = impl_->config.direct_decode &&
                                internal::direct_capable(p, *item->decoder, impl_->format);
    if (impl_->gpu_mode != GpuMode::Off && gpu_codable(p) &&
        int64_t(p.w) * p.h >= impl_->config.gpu_min_pixels) {
      item->route = impl_->gpu_mode == GpuMode::Texture ? Route::GpuTexture : Route::GpuHost;
    } else {  // the CPU's, small GPU-codable draws included (gpu_min_pixels)
      item->direct = direct_capable;
    }
  }
  impl_->enqueue(std::move(item));
}

int PaintEngine::run_ui_once() { return impl_->run_ui_once(); }

void PaintEngine::wait_for_work(std::chrono::microseconds timeout) {
  MutexLock lock(impl_->mu);
  impl_->ui_cv.wait_for(impl_->mu, timeout, [&]() PIXPATH_REQUIRES(impl_->mu) {
    return impl_->ui_work || impl_->shut_down;
  });
}

bool PaintEngine::idle() const {
  MutexLock lock(impl_->mu);
  return impl_->is_idle();
}

bool PaintEngine::wait_idle(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    run_ui_once();
    if (idle()) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    wait_for_work(std::min<std::chrono::microseconds>(
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - now),
        std::chrono::milliseconds(50)));
  }
}

void PaintEngine::shutdown() { impl_->shutdown(); }

PaintEngineStats PaintEngine::stats() const {
  MutexLock lock(impl_->mu);
  return impl_->stats;
}

}  // namespace pixpath::paint
