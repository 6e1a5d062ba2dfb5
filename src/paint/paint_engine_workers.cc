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
      item->state = item->direct ? State::DirectDecoding : State::Decoding;
      busy_workers++;
      if (item->direct)
        stats.direct_decodes++;
      else
        stats.private_decodes++;
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
    auto r = internal::decode_direct(p, *item.decoder, item.target.view, config.limits, item.warnings);
    if (!r.ok()) item.error = r.error();
  } else {
    auto r = internal::decode_private(p, *item.decoder, format, config.limits, item.warnings);
    if (r.ok())
      item.picture = std::move(r).value();
    else
      item.error = r.error();
  }
  item.decode_end = Clock::now();
  count_warnings(item);
}

void PaintEngine::Impl::redo_on_cpu(Item& item, const Error& e) {
  gpu_failed(item, e);
  auto r = internal::decode_private(item.packet, *item.decoder, format, config.limits, item.warnings);
  if (r.ok())
    item.picture = std::move(r).value();
  else
    item.error = r.error();
  count_warnings(item);
}

void PaintEngine::Impl::count_warnings(const Item& item) {
  if (item.warnings.empty()) return;
  std::string line;
  {
    MutexLock lock(mu);
    stats.decode_warnings[item.packet.coding] += int64_t(item.warnings.size());
    stats.last_decode_warning = item.warnings.back().message();
    // One log line for the first warning, then at most one a second with the count since.
    warnings_since_log += int64_t(item.warnings.size());
    const auto now = Clock::now();
    if (last_warning_log == Clock::time_point{} || now - last_warning_log >= std::chrono::seconds(1)) {
      line = "draw " + std::to_string(item.packet.sequence) + " of window " + std::to_string(item.wid) +
             " decoded with a warning, painted anyway: " + item.warnings.front().message();
      if (warnings_since_log > int64_t(item.warnings.size()))
        line += " (" + std::to_string(warnings_since_log) + " decode warnings since the last line)";
      warnings_since_log = 0;
      last_warning_log = now;
    }
  }
  if (!line.empty()) log(line);
}

}  // namespace pixpath::paint
