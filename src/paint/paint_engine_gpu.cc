// The paint engine's GPU route: the GPU thread decodes GPU-routed draws in batches into CUDA
// memory; the UI thread copies them into the window textures in one call per run and queues
// their acks behind the copy's fence; the watcher thread waits on the fences and wakes the UI
// thread, which delivers the acks in order (or paints from the CPU when the GPU failed).
#include <algorithm>

#include "internal/paint_engine_impl.h"

namespace pixpath::paint {

using internal::micros;

void PaintEngine::Impl::gpu_loop() {
  std::vector<ItemPtr> batch;
  for (;;) {
    {
      MutexLock lock(mu);
      while (!stopping && gpu_work.empty()) gpu_cv.wait(mu);
      if (stopping) return;
      while (!gpu_work.empty() && int(batch.size()) < config.gpu_max_batch) {
        ItemPtr item = std::move(gpu_work.front());
        gpu_work.pop_front();
        item->state = State::Decoding;
        batch.push_back(std::move(item));
      }
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

void PaintEngine::Impl::decode_gpu_batch(std::vector<ItemPtr>& batch) {
  std::vector<GpuDecodeJob> jobs;
  jobs.reserve(batch.size());
  const auto start = Clock::now();
  for (auto& item : batch) {
    item->decode_start = start;
    item->warnings.clear();
    jobs.push_back({item->packet.data.span(), gpu_params(item->packet), &item->warnings});
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
      count_warnings(item);  // a damaged picture the GPU decoder reported: painted, counted
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

GpuDecodeParams PaintEngine::Impl::gpu_params(const DrawPacket& p) const {
  GpuDecodeParams params;
  params.width = p.w;
  params.height = p.h;
  if (p.coding == "jpega") params.alpha_offset = p.options.alpha_offset;
  params.limits = config.limits;
  return params;
}

bool PaintEngine::Impl::gpu_refuses(const DrawPacket& p) {
  const auto data = p.data.span();
  const bool exact_engines = gpu->hardware_engines() > 0;
  const bool own_decoder = gpu->reports_damage();
  std::optional<std::string> why;
  if (p.coding == "jpega" && p.options.alpha_offset && *p.options.alpha_offset > 0 &&
      uint64_t(*p.options.alpha_offset) < data.size()) {
    const auto split = size_t(*p.options.alpha_offset);
    why = gpu_exactness_refusal(data.first(split), exact_engines, true, own_decoder);
    if (!why) {
      why = gpu_exactness_refusal(data.subspan(split), exact_engines, true, own_decoder);
      if (why) why = "alpha: " + *why;
    }
  } else {
    why = gpu_exactness_refusal(data, exact_engines, true, own_decoder);
  }
  if (!why) return false;
  MutexLock lock(mu);
  stats.gpu_routed_to_cpu++;
  stats.last_gpu_route_reason = std::move(*why);
  return true;
}

void PaintEngine::Impl::gpu_failed(Item& item, const Error& e) {
  item.route = Route::Cpu;
  item.decoder_used = "gpu->cpu";
  item.picture = Picture();
  item.warnings.clear();  // the CPU decode reports its own
  MutexLock lock(mu);
  stats.gpu_fallbacks++;
  stats.last_gpu_error = e.message();
}

bool PaintEngine::Impl::decode_gpu_to_host(Item& item) {
  const DrawPacket& p = item.packet;
  auto r = gpu->decode_to_host(p.data.span(), gpu_params(p));
  if (!r.ok()) return gpu_failed(item, r.error()), false;
  item.picture = std::move(r->picture);
  item.decoder_used = "gpu";
  item.warnings = std::move(r->warnings);
  count_warnings(item);
  MutexLock lock(mu);
  stats.gpu_decodes++;
  return true;
}

void PaintEngine::Impl::prepare_window_texture(int64_t wid) {
  if (gpu_mode != GpuMode::Texture || !gpu) return;
  auto tex = backing.window_texture(wid);
  if (!tex || tex->texture == 0) return;
  registered_textures[wid] = tex->texture;
  (void)gpu->prepare_texture({tex->texture, tex->width, tex->height, 0, 0});
}

void PaintEngine::Impl::forget_window_texture(int64_t wid) {
  auto it = registered_textures.find(wid);
  if (it == registered_textures.end()) return;
  gpu->forget_texture(it->second);
  registered_textures.erase(it);
}

bool PaintEngine::Impl::gpu_copy_ready(const Item& item) {
  if (item.kind != Kind::Draw || item.route != Route::GpuTexture || item.error ||
      item.picture.plane_count() == 0 || item.picture.location().kind != MemoryKind::CudaDevice)
    return false;
  auto tex = backing.window_texture(item.wid);
  const DrawPacket& p = item.packet;
  return tex && tex->texture != 0 && p.x >= 0 && p.y >= 0 && p.x + p.w <= tex->width &&
         p.y + p.h <= tex->height && item.picture.width() == p.w && item.picture.height() == p.h;
}

int PaintEngine::Impl::flush_copies(std::vector<ItemPtr>& batch) {
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

void PaintEngine::Impl::watcher_loop() {
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

int PaintEngine::Impl::deliver_pending() {
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
    if (a->fence_error && item.route == Route::Video) {
      // A video frame's copy failed on the GPU: ack it -1 (the server sends a key frame) and
      // keep the window's later streams on the CPU.
      a->fence.reset();
      video_cpu_windows.insert(item.wid);
      post_video_gpu_failed(item.wid, item.video.stream);
      {
        MutexLock lock(mu);
        stats.video_gpu_failures++;
        stats.video_errors++;
        stats.last_video_error = a->fence_error->message();
      }
      ack(item, -1, a->fence_error->within(item.packet.coding, "gpu texture").message(),
          a->paint_us, a->done_at);
    } else if (a->fence_error) {
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

}  // namespace pixpath::paint
