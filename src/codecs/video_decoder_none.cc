// The video decoder of a build without libavcodec (PIXPATH_WITH_VIDEO=OFF: e.g. the Python
// package staged for a machine where libavcodec's dozens of dependencies do not fit,
// python/stage-gpu). Same interface as video_decoder.cc: no video coding is offered
// (video_codings() is empty, so a client advertises none), and a stream asked for anyway fails
// with Unavailable naming the coding, the stage and the reason.
#include "pixpath/codecs/video_decoder.h"

#include <array>
#include <string_view>

namespace pixpath::codecs {
namespace {
constexpr std::array<std::string_view, 3> kVideoCodings = {"h264", "vp8", "vp9"};
}  // namespace

struct VideoDecoder::Impl {
  VideoStreamParams params;
};

Result<std::unique_ptr<VideoDecoder>> VideoDecoder::create(const VideoStreamParams& params) {
  const std::string subject = params.coding.empty() ? "video" : params.coding;
  if (!is_video_coding(params.coding))
    return Error(ErrorCode::Unsupported, subject, "create decoder",
                 "'" + params.coding + "' is not a video coding");
  return Error(ErrorCode::Unavailable, subject, "create decoder",
               "this pixpath was built without video (PIXPATH_WITH_VIDEO=OFF: no libavcodec)");
}

VideoDecoder::VideoDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VideoDecoder::~VideoDecoder() = default;

const VideoStreamParams& VideoDecoder::params() const { return impl_->params; }
VideoDecoderStats VideoDecoder::stats() const { return {}; }

Result<std::optional<VideoFrame>> VideoDecoder::decode(std::span<const uint8_t> /*data*/) {
  return Error(ErrorCode::Unavailable, impl_->params.coding, "decode", "built without video");
}

Result<std::vector<VideoFrame>> VideoDecoder::flush() { return std::vector<VideoFrame>{}; }

std::vector<std::string> video_codings() { return {}; }

bool is_video_coding(std::string_view coding) {
  for (auto c : kVideoCodings)
    if (c == coding) return true;
  return false;
}

std::vector<std::string> video_csc_modes(std::string_view /*coding*/) { return {}; }

std::string video_library_version() { return "none (built without libavcodec)"; }

std::vector<VideoCodecDescription> describe_video_codecs() { return {}; }

VideoBufferCounters video_buffer_counters() { return {}; }

}  // namespace pixpath::codecs
