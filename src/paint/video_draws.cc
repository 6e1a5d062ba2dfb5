// Video draws (paint_engine.h, "Video draws"): the window's stream decoder is made, re-made and
// dropped as the draws say; each draw is decoded and painted on the UI thread at its turn.
#include <string>

#include "internal/draw_decoding.h"
#include "internal/paint_engine_impl.h"

namespace pixpath::paint {

using internal::micros;

namespace {

std::string describe(const codecs::VideoStreamParams& p) {
  return p.coding + " " + std::to_string(p.width) + "x" + std::to_string(p.height) + " " +
         (p.csc.empty() ? "(no csc)" : p.csc);
}

}  // namespace

void PaintEngine::Impl::complete_video(Item& item) {
  const DrawPacket& p = item.packet;
  item.decode_start = Clock::now();
  codecs::VideoStreamParams want;
  want.coding = p.coding;
  want.width = internal::encoded_width(p);
  want.height = internal::encoded_height(p);
  want.csc = p.options.csc;
  want.limits = config.limits;
  want.gpu_device = video_gpu_device(item.wid, want, p);
  if (want.gpu_device >= 0) want.gpu_context = gpu->cuda_context();
  auto fail = [&](const Error& e) {
    item.decode_end = Clock::now();
    fail_video(item, e);
  };
  auto& decoder = video_decoders[item.wid];
  const bool new_stream = p.options.frame && *p.options.frame == 0;
  // As xpra's own client: frame 0, or a change of coding, encoded size or csc, starts a new
  // stream (a server changes csc with quality, and re-inits its encoder, without frame 0).
  // A new stream that does not start with a key frame then fails to decode: -1.
  std::string restarted;
  if (decoder && !new_stream && !decoder->params().same_stream(want))
    restarted = "a new stream (" + describe(decoder->params()) + " -> " + describe(want) +
                ") that does not start with frame 0";
  if (!decoder || new_stream || !restarted.empty()) {
    decoder.reset();  // frames it made stay valid while painted pictures hold them
    auto made = codecs::VideoDecoder::create(want);
    if (!made.ok()) return fail(made.error());
    decoder = std::move(made).value();
    video_stream_noted.erase(item.wid);
    MutexLock lock(mu);
    stats.video_streams++;
  }
  auto frame = decoder->decode(p.data.span());
  item.decode_end = Clock::now();
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
    {
      MutexLock lock(mu);
      stats.video_draws++;
      stats.video_delayed++;
    }
    return finish(item, 1, "", 1);  // its picture comes with a later frame
  }
  note_video_stream(item.wid, *decoder);
  codecs::VideoFrame f = std::move(**frame);
  if (f.on_gpu()) return complete_video_gpu(item, std::move(f));
  item.decoder_used = want.gpu_device >= 0 ? "gpu->cpu" : "cpu";
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
  drop_video_decoder(item.wid);  // the server sends a key frame after the -1
  {
    MutexLock lock(mu);
    stats.video_draws++;
    stats.video_errors++;
    stats.last_video_error = e.message();
  }
  finish(item, -1, e.message(), 0);
}

void PaintEngine::Impl::drop_video_decoder(int64_t wid) {
  auto it = video_decoders.find(wid);
  if (it == video_decoders.end()) return;
  if (it->second) (void)it->second->flush();  // held-back frames are dropped unpainted
  video_decoders.erase(it);
}

}  // namespace pixpath::paint
