// The video decoder: h264, vp8, vp9 streams made by libavcodec's encoders decode to read-only
// YUV pictures in pixpath storage; frames held by the caller are never written; every frame
// buffer is released exactly once, also after the decoder is gone; bad input fails cleanly.
#include "pixpath/codecs/video_decoder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "codecs/testing/video_streams.h"
#include "pixpath/core/counters.h"

namespace pixpath::codecs {
namespace {

using testing::encode_video;
using testing::luma_psnr;

VideoStreamParams stream(const std::string& coding, int w, int h, std::string csc = "YUV420P") {
  VideoStreamParams p;
  p.coding = coding;
  p.width = w;
  p.height = h;
  p.csc = std::move(csc);
  return p;
}

uint64_t checksum(const Picture& pic) {
  auto v = pic.read();
  uint64_t sum = 1469598103934665603ull;
  for (int p = 0; p < pic.plane_count(); ++p)
    for (int y = 0; y < plane_height(pic.format(), p, pic.height()); ++y) {
      const uint8_t* row = v->plane(p).unchecked_row(y);
      for (size_t x = 0; x < pic.row_bytes(p); ++x) sum = (sum ^ row[x]) * 1099511628211ull;
    }
  return sum;
}

class VideoCodings : public ::testing::TestWithParam<std::string> {};

TEST_P(VideoCodings, DecodesEveryFrameIntoReadOnlyPixpathStorage) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 96, 64, 12);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto before = video_buffer_counters();
  const int64_t live_before = counters().live_storages();
  {
    auto dec = VideoDecoder::create(stream(coding, 96, 64));
    ASSERT_TRUE(dec.ok()) << dec.error().message();
    std::vector<VideoFrame> frames;
    for (size_t i = 0; i < s->packets.size(); ++i) {
      auto f = (*dec)->decode(s->packets[i]);
      ASSERT_TRUE(f.ok()) << "frame " << i << ": " << f.error().message();
      ASSERT_TRUE(f->has_value()) << "frame " << i << " held back (low delay expected)";
      const Picture& pic = (*f)->picture;
      EXPECT_EQ(pic.format(), PixelFormat::YUV420P);
      EXPECT_EQ(pic.width(), 96);
      EXPECT_EQ(pic.height(), 64);
      EXPECT_TRUE(pic.read_only());
      EXPECT_FALSE(pic.writable());
      Picture copy = pic;
      auto w = copy.write();
      EXPECT_FALSE(w.ok()) << "a decoder frame must not be writable";
      EXPECT_GE(luma_psnr(pic, s->sources[i]), 30.0) << coding << " frame " << i;
      EXPECT_FALSE((*f)->color.full_range);
      frames.push_back(std::move(**f));
    }
    EXPECT_EQ((*dec)->stats().frames, 12);
    EXPECT_GT(video_buffer_counters().live(), before.live());
  }
  // Every buffer came back exactly once: none left, none freed twice (freed never exceeds made).
  const auto after = video_buffer_counters();
  EXPECT_EQ(after.live(), before.live());
  EXPECT_GT(after.made, before.made);
  EXPECT_EQ(counters().live_storages(), live_before);
}

TEST_P(VideoCodings, HeldFramesAreNeverWrittenAndOutliveTheDecoder) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 64, 48, 20);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto before = video_buffer_counters();
  std::vector<std::pair<Picture, uint64_t>> held;
  {
    auto dec = VideoDecoder::create(stream(coding, 64, 48));
    ASSERT_TRUE(dec.ok()) << dec.error().message();
    for (size_t i = 0; i < s->packets.size(); ++i) {
      auto f = (*dec)->decode(s->packets[i]);
      ASSERT_TRUE(f.ok() && f->has_value()) << i;
      if (i % 3 == 0) held.emplace_back((*f)->picture, checksum((*f)->picture));
      // the rest are dropped at once: their buffers go back to the pool and get reused
    }
    for (auto& [pic, sum] : held) EXPECT_EQ(checksum(pic), sum) << "a held frame changed";
  }  // the decoder is gone, the pictures stay readable (ASan would see a use after free)
  for (auto& [pic, sum] : held) EXPECT_EQ(checksum(pic), sum);
  EXPECT_GT(video_buffer_counters().live(), before.live());
  held.clear();  // the last references: the buffers' free callbacks run now
  EXPECT_EQ(video_buffer_counters().live(), before.live());
}

TEST_P(VideoCodings, TruncatedAndCorruptDataFailWithAClearError) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 64, 48, 4);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto before = video_buffer_counters();
  {
    auto dec = VideoDecoder::create(stream(coding, 64, 48));
    ASSERT_TRUE(dec.ok());
    // A key frame cut inside its headers gives no picture (an error, or nothing: the paint
    // engine acks both -1). h264 also refuses a key frame cut later (slice data missing);
    // libavcodec's vp8/vp9 conceal a cut partition and return a picture (see below).
    auto key = s->packets[0];
    key.resize(std::min<size_t>(key.size(), 10));
    auto r = (*dec)->decode(key);
    if (r.ok()) {
      EXPECT_FALSE(r->has_value()) << "a key frame cut to 10 bytes gave a picture";
    } else {
      EXPECT_EQ(r.error().message().rfind(coding + " decode: ", 0), 0u) << r.error().message();
    }
  }
  if (coding == "h264") {
    auto dec = VideoDecoder::create(stream(coding, 64, 48));
    ASSERT_TRUE(dec.ok());
    auto key = s->packets[0];
    key.resize(key.size() / 3);
    auto r = (*dec)->decode(key);
    if (r.ok()) {
      EXPECT_FALSE(r->has_value()) << "a truncated key frame gave a picture";
    } else {
      EXPECT_EQ(r.error().message().rfind("h264 decode: ", 0), 0u) << r.error().message();
    }
  } else {
    // vp8/vp9: concealed, but never more than the stream's size and never a crash (ASan).
    auto dec = VideoDecoder::create(stream(coding, 64, 48));
    ASSERT_TRUE(dec.ok());
    auto key = s->packets[0];
    key.resize(key.size() / 3);
    auto r = (*dec)->decode(key);
    if (r.ok() && r->has_value()) {
      EXPECT_EQ((*r)->picture.width(), 64);
    }
  }
  {
    auto dec = VideoDecoder::create(stream(coding, 64, 48));
    ASSERT_TRUE(dec.ok());
    std::vector<uint8_t> junk(500);
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = uint8_t(i * 37 + 11);
    auto r = (*dec)->decode(junk);
    EXPECT_TRUE(!r.ok() || !r->has_value());
    auto empty = (*dec)->decode({});
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().message(), coding + " decode: no data");
  }
  EXPECT_EQ(video_buffer_counters().live(), before.live());
}

TEST_P(VideoCodings, AStreamOfAnotherSizeIsAnError) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 96, 64, 2);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto dec = VideoDecoder::create(stream(coding, 64, 48));  // the draw says 64x48
  ASSERT_TRUE(dec.ok());
  auto r = (*dec)->decode(s->packets[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("96x64"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("frame 0"), std::string::npos) << r.error().message();
}

INSTANTIATE_TEST_SUITE_P(All, VideoCodings, ::testing::Values("h264", "vp8", "vp9"));

TEST(VideoDecoder, Yuv444StreamsNeedTheirCsc) {
  auto s = encode_video("vp9", 64, 48, 3, PixelFormat::YUV444P);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto dec = VideoDecoder::create(stream("vp9", 64, 48, "YUV444P"));
  ASSERT_TRUE(dec.ok());
  auto f = (*dec)->decode(s->packets[0]);
  ASSERT_TRUE(f.ok() && f->has_value()) << (f.ok() ? "no picture" : f.error().message());
  EXPECT_EQ((*f)->picture.format(), PixelFormat::YUV444P);
  EXPECT_GE(luma_psnr((*f)->picture, s->sources[0]), 30.0);
  // The same stream announced as YUV420P: the decoder says what the stream really is.
  auto wrong = VideoDecoder::create(stream("vp9", 64, 48, "YUV420P"));
  ASSERT_TRUE(wrong.ok());
  auto r = (*wrong)->decode(s->packets[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "vp9 decode: the stream is YUV444P, the draw says csc YUV420P");
}

// xpra 6.x's x264 marks every stream with the identity matrix, also YUV444P ones; libavcodec
// then decodes h264 4:4:4 as GBRP. The draw's csc says the planes are Y, Cb, Cr (painted as
// G, B, R the window came out at PSNR 7.8 dB against the server's).
TEST(VideoDecoder, H264Yuv444WithIdentityMatrixIsYuv) {
  auto s = encode_video("h264", 64, 48, 3, PixelFormat::YUV444P, /*identity_matrix=*/true);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto dec = VideoDecoder::create(stream("h264", 64, 48, "YUV444P"));
  ASSERT_TRUE(dec.ok()) << dec.error().message();
  for (size_t i = 0; i < s->packets.size(); ++i) {
    auto f = (*dec)->decode(s->packets[i]);
    ASSERT_TRUE(f.ok() && f->has_value()) << (f.ok() ? "no picture" : f.error().message());
    EXPECT_EQ((*f)->picture.format(), PixelFormat::YUV444P);
    EXPECT_FALSE((*f)->color.gbr) << "frame " << i << ": csc YUV444P is Y, Cb, Cr";
    EXPECT_FALSE((*f)->color.full_range) << "frame " << i;
    EXPECT_GE(luma_psnr((*f)->picture, s->sources[i]), 30.0) << "frame " << i;
  }
}

TEST(VideoDecoder, RefusesWhatItCannotDecodeBeforeAllocating) {
  auto no_csc = VideoDecoder::create(stream("h264", 64, 48, ""));
  ASSERT_FALSE(no_csc.ok());
  EXPECT_EQ(no_csc.error().message(),
            "h264 create decoder: the draw has no csc option (the input colourspace)");
  auto bad_csc = VideoDecoder::create(stream("vp8", 64, 48, "BGRX"));
  ASSERT_FALSE(bad_csc.ok());
  EXPECT_EQ(bad_csc.error().message(), "vp8 create decoder: csc 'BGRX' cannot be decoded");
  auto huge = VideoDecoder::create(stream("h264", 16384, 16384));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), ErrorCode::LimitExceeded);
  EXPECT_EQ(huge.error().message(),
            "h264 create decoder: stream size 16384x16384 is outside 1x1..8192x8192");
  auto zero = VideoDecoder::create(stream("h264", 0, 48));
  ASSERT_FALSE(zero.ok());
  auto unknown = VideoDecoder::create(stream("mpeg2", 64, 48));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(), "mpeg2 create decoder: 'mpeg2' is not a video coding");
}

// A stream asked to decode on the GPU (gpu_device 0) decodes on the CPU where there is no GPU
// (no libcuda here: the CUDA device cannot be opened), and says so; where NVDEC takes it, its
// frames are in CUDA memory (the GPU tests in src/cuda_loader check their pixels).
TEST_P(VideoCodings, AGpuRequestDecodesOnTheCpuVisiblyWithoutAGpu) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 96, 64, 6);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto before = video_buffer_counters();
  {
    auto p = stream(coding, 96, 64);
    p.gpu_device = 0;
    auto dec = VideoDecoder::create(p);
    ASSERT_TRUE(dec.ok()) << dec.error().message();
    for (size_t i = 0; i < s->packets.size(); ++i) {
      auto f = (*dec)->decode(s->packets[i]);
      ASSERT_TRUE(f.ok()) << "frame " << i << ": " << f.error().message();
      ASSERT_TRUE(f->has_value());
      const auto st = (*dec)->stats();
      if (st.gpu) {
        EXPECT_TRUE((*f)->on_gpu());
        EXPECT_EQ((*f)->picture.location().kind, MemoryKind::CudaDevice);
      } else {
        EXPECT_FALSE((*f)->on_gpu());
        EXPECT_GE(luma_psnr((*f)->picture, s->sources[i]), 30.0) << coding << " frame " << i;
      }
    }
    const auto st = (*dec)->stats();
    EXPECT_TRUE(st.gpu_requested);
    if (!st.gpu) {
      EXPECT_FALSE(st.gpu_note.empty()) << "a GPU request decoded on the CPU must say why";
      EXPECT_EQ(st.gpu_frames, 0);
    }
    std::printf("  %s, gpu_device 0: %s\n", coding.c_str(),
                st.gpu ? "NVDEC" : ("CPU: " + st.gpu_note).c_str());
  }
  EXPECT_EQ(video_buffer_counters().live(), before.live());
}

TEST(VideoDecoder, ProbesTheGpuWithAReason) {
  auto r = probe_video_gpu(0);
  if (r.ok()) {
    std::printf("  CUDA device 0 opens for NVDEC\n");
  } else {
    EXPECT_FALSE(r.error().reason().empty());
    std::printf("  no GPU video: %s\n", r.error().message().c_str());
  }
  auto bad = probe_video_gpu(4096);
  EXPECT_FALSE(bad.ok());
}

// NVDEC's own limits (pixpath info): on an NVIDIA machine the driver's figures (h264 4:2:0 at
// least 1080p); elsewhere Unavailable with the reason; a coding NVDEC is never asked for is
// Unsupported. The filter '*Gpu*' of gpu-check-run picks this up on the GPU machine.
TEST(VideoDecoder, NvdecCapsGpuOrAReason) {
  for (const char* coding : {"h264", "vp8", "vp9"}) {
    auto caps = nvdec_caps(coding, 0);
    if (caps.ok()) {
      std::printf("  %s on NVDEC: %zu csc modes, up to %dx%d, %d engines\n", coding, caps->csc_modes.size(),
                  caps->max_width, caps->max_height, caps->engines);
      if (std::string(coding) == "h264") {
        ASSERT_FALSE(caps->csc_modes.empty());
        EXPECT_EQ(caps->csc_modes[0], "YUV420P");
        EXPECT_GE(caps->max_width, 1920);
        EXPECT_GE(caps->max_height, 1080);
        EXPECT_GE(caps->engines, 1);
      }
    } else {
      EXPECT_EQ(caps.error().code(), ErrorCode::Unavailable);
      EXPECT_EQ(caps.error().subject(), coding);
      EXPECT_EQ(caps.error().stage(), "nvdec caps");
      EXPECT_FALSE(caps.error().reason().empty());
      std::printf("  %s: no NVDEC limits here: %s\n", coding, caps.error().reason().c_str());
    }
  }
  auto bad = nvdec_caps("png", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::Unsupported);
}

TEST(VideoDecoder, ListsWhatThisBuildDecodes) {
  const auto codings = video_codings();
  EXPECT_EQ(codings, (std::vector<std::string>{"h264", "vp8", "vp9"}));
  EXPECT_TRUE(is_video_coding("vp8"));
  EXPECT_FALSE(is_video_coding("jpeg"));
  EXPECT_EQ(video_csc_modes("vp8"), std::vector<std::string>{"YUV420P"});
  EXPECT_FALSE(video_library_version().empty());
  ASSERT_EQ(describe_video_codecs().size(), 3u);
  EXPECT_EQ(describe_video_codecs()[0].decoder, "h264");
  for (const auto& d : describe_video_codecs()) {
    std::string hw;
    for (const auto& h : d.hwaccels) hw += " " + h;
    std::printf("  %s: %s, hwaccels:%s\n", d.coding.c_str(), d.decoder.c_str(), hw.empty() ? " none" : hw.c_str());
  }
}

TEST(VideoDecoder, FlushReturnsNothingForALowDelayStream) {
  auto s = encode_video("h264", 64, 48, 3);
  ASSERT_TRUE(s.ok());
  auto dec = VideoDecoder::create(stream("h264", 64, 48));
  ASSERT_TRUE(dec.ok());
  for (auto& p : s->packets) ASSERT_TRUE((*dec)->decode(p).ok());
  auto rest = (*dec)->flush();
  ASSERT_TRUE(rest.ok()) << rest.error().message();
  EXPECT_TRUE(rest->empty());
}

}  // namespace
}  // namespace pixpath::codecs
