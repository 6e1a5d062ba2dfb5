// Video draws (paint_engine.h, "Video draws"): the window's stream decoder is made, re-made and
// dropped as the draws say, on the window's video thread (its lane), which decodes each draw in
// the window's order as soon as it is submitted; the UI thread paints what the lane made of the
// draw at the draw's turn, and acks it.
#include <algorithm>
#include <string>
#include <thread>

#include "internal/draw_decoding.h"
#include "internal/paint_engine_impl.h"

namespace pixpath::paint {

using internal::micros;
using internal::VideoLane;
using internal::VideoTask;
using internal::VideoWindow;

namespace {

std::string describe(const codecs::VideoStreamParams& p) {
  return p.coding + " " + std::to_string(p.width) + "x" + std::to_string(p.height) + " " +
         (p.csc.empty() ? "(no csc)" : p.csc);
}

}  // namespace

int PaintEngine::Impl::push_video_task(VideoTask task, bool assign) {
  auto it = video_lane_of.find(task.wid);
  if (it == video_lane_of.end()) {
    if (!assign || lanes.empty()) return -1;
    std::vector<int> windows(lanes.size(), 0);
    for (const auto& [wid, of] : video_lane_of) windows[size_t(of.lane)]++;
    const int lane = int(std::min_element(windows.begin(), windows.end()) - windows.begin());
    it = video_lane_of.emplace(task.wid, internal::VideoLaneOf{lane, 0}).first;
  }
  it->second.tasks++;
  const int lane = it->second.lane;
  video_tasks[size_t(lane)].push_back(std::move(task));
  VideoLane* l = lanes[size_t(lane)].get();
  if (!l->started && !stopping) {
    l->started = true;
    stats.video_threads_running++;
    l->thread = std::thread([this, l] { video_loop(*l); });  // it waits for mu, held here
  }
  return lane;
}

void PaintEngine::Impl::wake_video_lane(int lane) {
  if (lane >= 0) lanes[size_t(lane)]->cv.notify_one();
}

// The lanes, without their threads (push_video_task starts each at its first task).
void PaintEngine::Impl::make_video_lanes() {
  int n = config.video_threads;
  if (n == 0) n = std::clamp(int(std::thread::hardware_concurrency()), 1, 4);
  {
    MutexLock lock(mu);
    video_tasks.resize(size_t(n));
    stats.video_threads = n;
  }
  for (int i = 0; i < n; ++i) {
    lanes.push_back(std::make_unique<VideoLane>());
    lanes.back()->index = i;
  }
}

void PaintEngine::Impl::video_loop(VideoLane& lane) {
  ScopedRole role(lane.role);  // this thread owns lane.windows until it returns
  for (;;) {
    VideoTask task;
    {
      MutexLock lock(mu);
      auto& q = video_tasks[size_t(lane.index)];
      auto next = q.end();
      while (!stopping && (next = next_video_task(q)) == q.end()) lane.cv.wait(mu);
      if (stopping) return;
      task = std::move(*next);
      q.erase(next);
      if (task.item) task.item->state = State::Decoding;
      busy_video++;
    }
    run_video_task(lane, task);
    {
      MutexLock lock(mu);
      busy_video--;
      if (task.item) {
        task.item->video_ahead = true;
        video_ahead[task.wid]++;
        task.item->state = State::Ready;
        notify_ui();
        // Let go before the UI thread can take it: the item (its frame) goes on the UI thread.
        task.item.reset();
      }
      // The window leaves the lane once its window_lost is done and nothing of it is queued.
      auto of = video_lane_of.find(task.wid);
      if (of != video_lane_of.end() && --of->second.tasks == 0) {
        auto w = lane.windows.find(task.wid);
        if (w == lane.windows.end() || w->second.lost) {
          if (w != lane.windows.end()) lane.windows.erase(w);
          video_lane_of.erase(of);
        }
      }
    }
    wake_ui();
  }
}

std::deque<VideoTask>::iterator PaintEngine::Impl::next_video_task(std::deque<VideoTask>& tasks) {
  std::vector<int64_t> waiting;  // windows whose first task waits (few: a lane's windows)
  for (auto it = tasks.begin(); it != tasks.end(); ++it) {
    if (std::find(waiting.begin(), waiting.end(), it->wid) != waiting.end()) continue;
    if (it->kind == VideoTask::Kind::Decode) {
      auto a = video_ahead.find(it->wid);
      if (a != video_ahead.end() && a->second >= kVideoAhead) {
        waiting.push_back(it->wid);
        continue;
      }
    }
    return it;
  }
  return tasks.end();
}

void PaintEngine::Impl::video_draw_taken(Item& item) {
  int lane = -1;
  {
    MutexLock lock(mu);
    if (!item.video_ahead) return;
    item.video_ahead = false;
    auto a = video_ahead.find(item.wid);
    if (a != video_ahead.end() && --a->second <= 0) video_ahead.erase(a);
    if (auto of = video_lane_of.find(item.wid); of != video_lane_of.end()) lane = of->second.lane;
  }
  wake_video_lane(lane);
}

void PaintEngine::Impl::run_video_task(VideoLane& lane, VideoTask& task) {
  switch (task.kind) {
    case VideoTask::Kind::Decode:
      return decode_video(lane, *task.item);
    case VideoTask::Kind::WindowNew:
      if (auto w = lane.windows.find(task.wid); w != lane.windows.end()) w->second.lost = false;
      return;
    case VideoTask::Kind::WindowLost: {
      // Dropped with its window; the window's later draws (if any: the server's, before it
      // knew) are not decoded until a window_new.
      auto& w = lane.windows[task.wid];
      drop_video_decoder(w);
      w = VideoWindow{};
      w.lost = true;
      return;
    }
    case VideoTask::Kind::GpuFailed: {
      auto& w = lane.windows[task.wid];
      w.cpu_only = true;
      if (w.stream == task.stream) drop_video_decoder(w);
      return;
    }
  }
}

void PaintEngine::Impl::decode_video(VideoLane& lane, Item& item) {
  const DrawPacket& p = item.packet;
  auto& r = item.video;
  VideoWindow& w = lane.windows[item.wid];
  item.decode_start = Clock::now();
  if (w.lost) {
    r.lost = true;
    item.decode_end = item.decode_start;
    return;
  }
  codecs::VideoStreamParams want;
  want.coding = p.coding;
  want.width = internal::encoded_width(p);
  want.height = internal::encoded_height(p);
  want.csc = p.options.csc;
  want.limits = config.limits;
  want.gpu_device = video_gpu_device(w, want, p);
  if (want.gpu_device >= 0) want.gpu_context = gpu->cuda_context();
  auto fail = [&](const Error& e) {
    item.decode_end = Clock::now();
    r.error = e;
    drop_video_decoder(w);  // the server sends a key frame after the -1
  };
  const bool new_stream = p.options.frame && *p.options.frame == 0;
  // As xpra's own client: frame 0, or a change of coding, encoded size or csc, starts a new
  // stream (a server changes csc with quality, and re-inits its encoder, without frame 0).
  // A new stream that does not start with a key frame then fails to decode: -1.
  std::string restarted;
  if (w.decoder && !new_stream && !w.decoder->params().same_stream(want))
    restarted = "a new stream (" + describe(w.decoder->params()) + " -> " + describe(want) +
                ") that does not start with frame 0";
  if (!w.decoder || new_stream || !restarted.empty()) {
    w.decoder.reset();  // frames it made stay valid while painted pictures hold them
    w.stream = 0;
    auto made = codecs::VideoDecoder::create(want);
    if (!made.ok()) return fail(made.error());
    w.decoder = std::move(made).value();
    w.stream = ++video_stream_numbers;
    w.stream_noted = false;
    MutexLock lock(mu);
    stats.video_streams++;
  }
  r.stream = w.stream;
  auto frame = w.decoder->decode(p.data.span());
  if (!frame.ok()) {
    if (restarted.empty()) return fail(frame.error());
    return fail(Error(frame.error().code(), p.coding, "decode",
                      frame.error().reason() + "; " + restarted));
  }
  if (!frame->has_value()) {
    if (p.options.delayed <= 0)
      return fail(Error(ErrorCode::CorruptData, p.coding, "decode",
                        "no picture from " + std::to_string(p.data.size()) +
                            " bytes, and the draw is not marked delayed" +
                            (restarted.empty() ? "" : "; " + restarted)));
    r.delayed = true;  // its picture comes with a later frame
    item.decode_end = Clock::now();
    return;
  }
  note_video_stream(item.wid, w);
  codecs::VideoFrame f = std::move(**frame);
  if (f.on_gpu()) return convert_video_gpu(w, item, std::move(f));
  item.decoder_used = want.gpu_device >= 0 ? "gpu->cpu" : "cpu";
  r.frame = std::move(f);
  item.decode_end = Clock::now();
}

void PaintEngine::Impl::drop_video_decoder(VideoWindow& w) {
  if (w.decoder) (void)w.decoder->flush();  // held-back frames are dropped unpainted
  w.decoder.reset();
  w.stream = 0;
}

void PaintEngine::Impl::drop_video_lanes() {
  for (auto& lane : lanes) {
    ScopedRole role(lane->role);  // its thread was joined (shutdown)
    for (auto& [wid, w] : lane->windows) drop_video_decoder(w);
    lane->windows.clear();
  }
}

void PaintEngine::Impl::complete_video(Item& item) {
  const DrawPacket& p = item.packet;
  auto& r = item.video;
  if (r.lost)  // the window was made again since, by someone else than this engine
    return finish(item, 0, "window " + std::to_string(item.wid) + " was lost before this draw", 0);
  if (auto d = video_dropped_stream.find(item.wid);
      r.stream != 0 && d != video_dropped_stream.end() && d->second == r.stream)
    return fail_video(item, Error(ErrorCode::CorruptData, p.coding, "decode",
                                  "the stream's decoder was dropped after a GPU failure; "
                                  "waiting for a key frame (frame 0)"));
  if (r.error) {
    if (r.gpu_error) return video_gpu_failed(item, *r.error, true);
    return fail_video(item, *r.error);
  }
  if (r.delayed) {
    {
      MutexLock lock(mu);
      stats.video_draws++;
      stats.video_delayed++;
    }
    return finish(item, 1, "", 1);  // its picture comes with a later frame
  }
  if (r.gpu) {
    if (video_cpu_windows.count(item.wid)) {
      // A GPU stream its lane began before it heard of the window's GPU failure: dropped as
      // the failed one (not another failure); the server's key frame starts a CPU stream.
      post_video_gpu_failed(item.wid, r.stream);
      return fail_video(item, Error(ErrorCode::Unavailable, p.coding, "gpu texture",
                                    "window " + std::to_string(item.wid) +
                                        "'s video goes to the CPU after a GPU failure"));
    }
    return complete_video_gpu(item);
  }
  codecs::VideoFrame f = std::move(*r.frame);
  r.frame.reset();
  const auto paint_start = Clock::now();
  Result<void> painted = ok();
  if (p.options.paint)
    painted = backing.paint_yuv(item.wid, p.x, p.y, f.picture, f.color, p.w, p.h);
  f.picture = Picture();  // this reference goes here, on the UI thread
  const int64_t paint_us = std::max<int64_t>(1, micros(Clock::now() - paint_start));
  if (!painted.ok()) {
    MutexLock lock(mu);
    stats.video_draws++;
    stats.video_errors++;
    stats.last_video_error = painted.error().message();
  } else {
    MutexLock lock(mu);
    stats.video_draws++;
    stats.video_frames++;
    stats.video_cpu_frames[p.coding]++;
  }
  if (!painted.ok())
    return finish(item, -1, painted.error().within(p.coding, "paint").message(), paint_us);
  finish(item, 1, "", paint_us);
}

void PaintEngine::Impl::fail_video(Item& item, const Error& e) {
  item.picture = Picture();  // a converted GPU frame, unpainted
  item.video.frame.reset();
  {
    MutexLock lock(mu);
    stats.video_draws++;
    stats.video_errors++;
    stats.last_video_error = e.message();
  }
  finish(item, -1, e.message(), 0);
}

void PaintEngine::Impl::post_video_gpu_failed(int64_t wid, uint64_t stream) {
  video_dropped_stream[wid] = stream;
  int lane;
  {
    MutexLock lock(mu);
    VideoTask t;
    t.kind = VideoTask::Kind::GpuFailed;
    t.wid = wid;
    t.stream = stream;
    lane = push_video_task(std::move(t), false);
  }
  wake_video_lane(lane);
}

}  // namespace pixpath::paint
