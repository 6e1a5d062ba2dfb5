// The paint engine's CPU decode workers: each takes the next draw from the shared work queue
// and decodes it into a private picture or straight into its direct target (a GpuHost draw
// tries the GPU first).
#include "internal/draw_decoding.h"
#include "internal/paint_engine_impl.h"

namespace pixpath::paint {

void PaintEngine::Impl::worker_loop() {
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

void PaintEngine::Impl::decode(Item& item) {
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

void PaintEngine::Impl::redo_on_cpu(Item& item, const Error& e) {
  gpu_failed(item, e);
  auto r = internal::decode_private(item.packet, *item.decoder, format, config.limits);
  if (r.ok())
    item.picture = std::move(r).value();
  else
    item.error = r.error();
}

}  // namespace pixpath::paint
