// The paint engine's queues and the UI thread's side: per-window order, the refusal of draws
// past the queue limits, the completion of ready items (window events, paints, delta buckets),
// the direct targets, the acks, and shutdown.
#include <algorithm>
#include <string>

#include "internal/paint_engine_impl.h"
#include "pixpath/core/log.h"

namespace pixpath::paint {

using internal::micros;

void PaintEngine::Impl::wake_ui() {
  ui_cv.notify_all();
  if (config.wakeup) config.wakeup();
}

void PaintEngine::Impl::log(std::string_view line) {
  if (config.log)
    config.log(line);
  else
    std::fprintf(stderr, "pixpath paint: %.*s\n", int(line.size()), line.data());
}

std::optional<std::string> PaintEngine::Impl::queue_full(uint64_t bytes) {
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

void PaintEngine::Impl::enqueue(ItemPtr item) {
  bool need_worker = false, need_gpu = false;
  int video_lane = -1;  // a video lane to wake
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
        if (item->state == State::Queued && item->route == Route::Video) {
          internal::VideoTask t;
          t.wid = item->wid;
          t.item = item;
          video_lane = push_video_task(std::move(t), true);
        } else if (item->state == State::Queued) {
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
      if (item->kind == Kind::WindowNew || item->kind == Kind::WindowLost) {
        // The window's lane (if it has one) drops its decoder / decodes again in this order.
        internal::VideoTask t;
        t.kind = item->kind == Kind::WindowNew ? internal::VideoTask::Kind::WindowNew
                                               : internal::VideoTask::Kind::WindowLost;
        t.wid = item->wid;
        video_lane = push_video_task(std::move(t), false);
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
  wake_video_lane(video_lane);
  wake_ui();
}

void PaintEngine::Impl::ack(const Item& item, int64_t decode_time_us, std::string message, int64_t paint_us,
                            Clock::time_point now) {
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
  report.warnings = int(item.warnings.size());
  if (!item.warnings.empty()) report.warning = item.warnings.front().message();
  report.total_us = std::max<int64_t>(1, micros(now - item.received));
  ack.decode_time_us = decode_time_us > 0 ? report.total_us : decode_time_us;
  if (decode_time_us > 0 && item.routing.size_class >= 0) gpu_route.record(item.routing, report.total_us);
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

void PaintEngine::Impl::window_event_error(const Error& e) {
  MutexLock lock(mu);
  stats.window_event_errors++;
  stats.last_window_event_error = e.message();
}

void PaintEngine::Impl::complete(Item& item) {
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
      // The window's decoder is flushed and dropped by its video lane (enqueue() queued that).
      video_cpu_windows.erase(item.wid);
      video_dropped_stream.erase(item.wid);
      return;
    }
    case Kind::Draw:
      if (item.route == Route::Video) video_draw_taken(item);
      complete_draw(item);
      return;
  }
}

void PaintEngine::Impl::complete_draw(Item& item) {
  if (item.direct && item.state == State::Ready && item.target.view.plane_count > 0) {
    auto r = backing.end_direct(item.target, !item.error);
    item.target = {};
    if (!r.ok() && !item.error) item.error = r.error();
  }
  const DrawPacket& p = item.packet;
  if (!backing.window_size(item.wid))
    return finish(item, 0, "window " + std::to_string(item.wid) + " does not exist", 0);
  if (item.error) return finish(item, -1, item.error->message(), 0);
  if (item.route == Route::Video) return complete_video(item);
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

void PaintEngine::Impl::finish(Item& item, int64_t code, std::string message, int64_t paint_us) {
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

bool PaintEngine::Impl::is_idle() const {
  if (!work.empty() || !gpu_work.empty() || busy_workers > 0 || !pending.empty() ||
      busy_video > 0)
    return false;
  for (const auto& q : video_tasks)
    if (!q.empty()) return false;
  for (const auto& [wid, q] : queues)
    if (!q.empty()) return false;
  return true;
}

void PaintEngine::Impl::drain_release_domain() {
  if (auto domain = backing.release_domain()) (void)domain->drain();
}

int PaintEngine::Impl::run_ui_once() {
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
          if (head->state == State::Ready) {
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

void PaintEngine::Impl::start_direct(const ItemPtr& item) {
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

void PaintEngine::Impl::shutdown() {
  {
    MutexLock lock(mu);
    if (shut_down) return;
    stopping = true;
  }
  work_cv.notify_all();
  gpu_cv.notify_all();
  for (auto& lane : lanes) lane->cv.notify_all();
  if (gpu_thread.joinable()) gpu_thread.join();
  for (auto& t : workers) t.join();
  workers.clear();
  // Each video lane finishes the task in hand (a decode is never interrupted) and stops. No
  // lane starts once stopping is set (push_video_task), so `thread` is not written any more.
  for (auto& lane : lanes)
    if (lane->thread.joinable()) lane->thread.join();
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
    for (auto& q : video_tasks) q.clear();
    video_lane_of.clear();
    video_ahead.clear();
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
  drop_video_lanes();  // the lanes are joined: their decoders are flushed and dropped here
  while (!registered_textures.empty()) forget_window_texture(registered_textures.begin()->first);
  drain_release_domain();
}

}  // namespace pixpath::paint
