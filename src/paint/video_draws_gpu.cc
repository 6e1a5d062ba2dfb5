// Video draws on the GPU route (paint_engine.h, "Video draws"): streams made with the GPU
// decoder's CUDA device, NVDEC frames converted to RGBA in CUDA memory and copied into the window
// texture on the UI thread, acked when the copy's fence signals. The decode and the conversion
// run on the window's video lane (video_draws.cc); the UI thread only queues the copy. Streams
// NVDEC does not take stay on the CPU path (video_draws.cc), counted and explained in the stats.
#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "internal/paint_engine_impl.h"

namespace pixpath::paint {

using internal::micros;

void PaintEngine::Impl::decide_video_gpu() {
  std::string why, route_reason;
  {
    MutexLock lock(mu);
    route_reason = stats.decoder_reason;
  }
  const char* env = std::getenv("PIXPATH_VIDEO_GPU");
  if (gpu_mode != GpuMode::Texture || !gpu)
    why = "no GPU route into window textures (" + route_reason + ")";
  else if (env && std::string_view(env) == "0")
    why = "PIXPATH_VIDEO_GPU=0";
  else if (gpu->cuda_device() < 0)
    why = "the GPU decoder converts no video frames";
  video_gpu = why.empty();
  MutexLock lock(mu);
  stats.video_decoder = video_gpu ? "nvdec" : "cpu";
  stats.video_decoder_reason =
      video_gpu ? "video streams decode on CUDA device " + std::to_string(gpu->cuda_device()) +
                      " with NVDEC where libavcodec can, into the window textures"
                : "video on the CPU: " + why;
}

int PaintEngine::Impl::video_gpu_device(const internal::VideoWindow& w,
                                        const codecs::VideoStreamParams& want,
                                        const DrawPacket& p) const {
  if (!video_gpu || w.cpu_only) return -1;
  // Scaled streams (scaled_size) are painted scaled by the backing: the CPU path.
  if (want.width != p.w || want.height != p.h) return -1;
  return gpu->cuda_device();
}

void PaintEngine::Impl::note_video_stream(int64_t wid, internal::VideoWindow& w) {
  const auto s = w.decoder->stats();
  if (!s.gpu_requested || s.gpu || s.gpu_note.empty() || w.stream_noted) return;
  w.stream_noted = true;
  const std::string line = w.decoder->params().coding + " stream of window " +
                           std::to_string(wid) + " on the CPU: " + s.gpu_note;
  {
    MutexLock lock(mu);
    stats.video_gpu_streams_on_cpu++;
    stats.last_video_gpu_note = line;
  }
  log(line);
}

void PaintEngine::Impl::convert_video_gpu(internal::VideoWindow& w, Item& item,
                                          codecs::VideoFrame frame) {
  const DrawPacket& p = item.packet;
  item.decoder_used = "gpu";
  item.video.gpu = true;
  auto gpu_fail = [&](const Error& e) {
    // Later streams of this window decode on the CPU: the server's key frame after the -1
    // starts one. The UI thread counts and logs it at the draw's turn (video_gpu_failed).
    w.cpu_only = true;
    drop_video_decoder(w);
    item.video.error = e;
    item.video.gpu_error = true;
    item.decode_end = Clock::now();
  };
  if (p.options.paint) {
    if (frame.picture.width() != p.w || frame.picture.height() != p.h)
      return gpu_fail(Error(ErrorCode::OutOfRange, p.coding, "gpu texture",
                            "the frame is not inside the window texture"));
    // Here, not on the UI thread: the conversion waits for its kernel on the host.
    auto rgba = gpu->convert_video_frame(frame, p.coding);
    frame.picture = Picture();  // the RGBA picture keeps the frame until the conversion is done
    if (!rgba.ok()) return gpu_fail(rgba.error());
    item.picture = std::move(rgba).value();
  }
  frame.picture = Picture();
  item.decode_end = Clock::now();
}

void PaintEngine::Impl::video_gpu_failed(Item& item, const Error& e, bool lane_knows) {
  video_cpu_windows.insert(item.wid);
  if (!lane_knows) post_video_gpu_failed(item.wid, item.video.stream);
  {
    MutexLock lock(mu);
    stats.video_gpu_failures++;
    stats.last_video_gpu_note = "window " + std::to_string(item.wid) + ": " + e.message() +
                                "; its video goes to the CPU";
  }
  log("video on the GPU failed (" + e.message() + "): window " + std::to_string(item.wid) +
      " decodes its video on the CPU from its next key frame");
  fail_video(item, e);
}

void PaintEngine::Impl::complete_video_gpu(Item& item) {
  const DrawPacket& p = item.packet;
  const auto paint_start = Clock::now();
  if (!p.options.paint) {
    {
      MutexLock lock(mu);
      stats.video_draws++;
      stats.video_frames++;
      stats.video_gpu_frames[p.coding]++;
    }
    return finish(item, 1, "", std::max<int64_t>(1, micros(Clock::now() - paint_start)));
  }
  const auto tex = backing.window_texture(item.wid);
  if (!tex || tex->texture == 0 || p.x < 0 || p.y < 0 || p.x + p.w > tex->width ||
      p.y + p.h > tex->height || item.picture.width() != p.w || item.picture.height() != p.h)
    return video_gpu_failed(item,
                            Error(ErrorCode::OutOfRange, p.coding, "gpu texture",
                                  "the frame is not inside the window texture"),
                            false);
  const GpuCopyJob job{&item.picture, {tex->texture, tex->width, tex->height, p.x, p.y}};
  registered_textures[item.wid] = tex->texture;
  auto fence = gpu->copy_to_textures(std::span<const GpuCopyJob>(&job, 1));
  const int64_t paint_us = std::max<int64_t>(1, micros(Clock::now() - paint_start));
  if (!fence.ok())
    return video_gpu_failed(item, fence.error().within(p.coding, "gpu texture"), false);
  if (auto r = backing.texture_written(item.wid, Rect{p.x, p.y, p.w, p.h}); !r.ok())
    window_event_error(r.error());
  const std::string coding = p.coding;  // `p` goes with the item below
  auto a = std::make_shared<PendingAck>();
  a->item = std::make_shared<Item>(std::move(item));  // its RGBA picture: alive until the fence
  a->fence = *fence;
  a->paint_us = paint_us;
  pending_per_window[a->item->wid]++;
  {
    MutexLock lock(mu);
    stats.video_draws++;
    stats.video_frames++;
    stats.video_gpu_frames[coding]++;
    stats.gpu_copy_calls++;
    pending.push_back(a);
    to_watch.push_back(std::move(a));
  }
  watcher_cv.notify_one();
}

}  // namespace pixpath::paint
