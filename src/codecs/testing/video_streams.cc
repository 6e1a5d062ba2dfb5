#include "codecs/testing/video_streams.h"

#if PIXPATH_WITH_VIDEO
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}
#endif

#include <cmath>
#include <limits>

namespace pixpath::codecs::testing {

Picture moving_yuv_frame(PixelFormat format, int width, int height, int frame) {
  auto pic = Picture::allocate(format, width, height);
  if (!pic.ok()) return Picture();
  auto v = pic->write();
  for (int p = 0; p < 3; ++p) {
    const auto& pl = v->plane(p);
    const int pw = plane_width(format, p, width), ph = plane_height(format, p, height);
    const int sx = width / pw, sy = height / ph;
    for (int y = 0; y < ph; ++y) {
      uint8_t* row = pl.unchecked_row(y);
      for (int x = 0; x < pw; ++x) {
        const int X = x * sx, Y = y * sy;
        int val;
        if (p == 0) {
          val = 40 + (X * 150) / std::max(1, width) + (Y * 40) / std::max(1, height);
          const int bx = (frame * 3) % std::max(1, width - 16), by = (frame * 2) % std::max(1, height - 16);
          if (X >= bx && X < bx + 16 && Y >= by && Y < by + 16) val = 220;
        } else {
          val = 128 + (p == 1 ? (X * 60) / std::max(1, width) - 30 : (Y * 60) / std::max(1, height) - 30);
        }
        row[x] = static_cast<uint8_t>(val);
      }
    }
  }
  return std::move(*pic);
}

namespace {
Error enc_error(const std::string& coding, const std::string& why) {
  return Error(ErrorCode::Unavailable, coding, "test encode", why);
}
}  // namespace

Result<VideoStream> encode_video(const std::string& coding, int width, int height, int frames,
                                 PixelFormat csc, bool identity_matrix) {
#if PIXPATH_WITH_VIDEO
  const char* name = coding == "h264" ? "libx264" : coding == "vp8" ? "libvpx" : coding == "vp9" ? "libvpx-vp9" : nullptr;
  if (!name) return enc_error(coding, "no test encoder");
  const AVCodec* codec = avcodec_find_encoder_by_name(name);
  if (!codec) return enc_error(coding, std::string("libavcodec has no ") + name);
  AVCodecContext* c = avcodec_alloc_context3(codec);
  c->width = width;
  c->height = height;
  c->time_base = AVRational{1, 30};
  c->framerate = AVRational{30, 1};
  c->pix_fmt = csc == PixelFormat::YUV444P ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P;
  c->gop_size = 1000;
  c->max_b_frames = 0;
  c->bit_rate = int64_t(width) * height * 8;
  c->thread_count = 1;
  if (identity_matrix) c->colorspace = AVCOL_SPC_RGB;  // libx264 writes it as the VUI matrix
  if (coding == "h264") {
    av_opt_set(c->priv_data, "preset", "ultrafast", 0);
    av_opt_set(c->priv_data, "tune", "zerolatency", 0);
    av_opt_set(c->priv_data, "crf", "18", 0);
  } else {
    av_opt_set(c->priv_data, "deadline", "realtime", 0);
    av_opt_set(c->priv_data, "lag-in-frames", "0", 0);
    av_opt_set_int(c->priv_data, "cpu-used", 8, 0);
  }
  if (int r = avcodec_open2(c, codec, nullptr); r < 0) {
    avcodec_free_context(&c);
    return enc_error(coding, "avcodec_open2 failed " + std::to_string(r));
  }
  VideoStream out;
  AVFrame* f = av_frame_alloc();
  AVPacket* pkt = av_packet_alloc();
  auto drain = [&] {
    while (avcodec_receive_packet(c, pkt) == 0) {
      out.packets.emplace_back(pkt->data, pkt->data + pkt->size);
      av_packet_unref(pkt);
    }
  };
  for (int i = 0; i < frames; ++i) {
    Picture src = moving_yuv_frame(csc, width, height, i);
    auto v = src.read();
    f->format = c->pix_fmt;
    f->width = width;
    f->height = height;
    for (int p = 0; p < 3; ++p) {
      f->data[p] = const_cast<uint8_t*>(v->plane(p).unchecked_row(0));
      f->linesize[p] = int(v->plane(p).stride);
    }
    f->pts = i;
    if (avcodec_send_frame(c, f) < 0) break;
    drain();
    out.sources.push_back(std::move(src));
  }
  avcodec_send_frame(c, nullptr);
  drain();
  av_packet_free(&pkt);
  av_frame_free(&f);
  avcodec_free_context(&c);
  if (out.packets.size() != out.sources.size())
    return enc_error(coding, std::to_string(out.packets.size()) + " packets for " +
                                 std::to_string(out.sources.size()) + " frames");
  return out;
#else
  (void)width, (void)height, (void)frames, (void)csc, (void)identity_matrix;
  return enc_error(coding, "built without video (PIXPATH_WITH_VIDEO=OFF)");
#endif
}

double luma_psnr(const Picture& a, const Picture& b) {
  auto va = a.read(), vb = b.read();
  if (!va.ok() || !vb.ok() || a.width() != b.width() || a.height() != b.height()) return -1;
  double se = 0;
  for (int y = 0; y < a.height(); ++y) {
    const uint8_t* ra = va->plane(0).unchecked_row(y);
    const uint8_t* rb = vb->plane(0).unchecked_row(y);
    for (int x = 0; x < a.width(); ++x) {
      const double d = double(ra[x]) - rb[x];
      se += d * d;
    }
  }
  const double mse = se / (double(a.width()) * a.height());
  return mse == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(255.0 * 255.0 / mse);
}

double region_psnr(const Picture& window, int x, int y, const Picture& expected) {
  auto sv = window.read();
  auto ev = expected.read();
  double se = 0;
  for (int j = 0; j < expected.height(); ++j) {
    const uint8_t* s = sv->plane(0).unchecked_row(y + j) + size_t(x) * 4;
    const uint8_t* e = ev->plane(0).unchecked_row(j);
    for (int i = 0; i < expected.width() * 4; ++i) {
      if (i % 4 == 3) continue;
      const double d = double(s[i]) - e[i];
      se += d * d;
    }
  }
  const double mse = se / (double(expected.width()) * expected.height() * 3);
  return mse == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(255.0 * 255.0 / mse);
}

}  // namespace pixpath::codecs::testing
