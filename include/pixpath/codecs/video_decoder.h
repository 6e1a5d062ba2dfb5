// VideoDecoder: one window's video stream (h264, vp8, vp9) decoded on the CPU by libavcodec,
// into pixpath storage, handed out as read-only YUV pictures with no copy.
//
// Streams. Unlike the picture decoders (decoder.h), a video decoder has state: each frame may
// reference earlier ones. One VideoDecoder decodes one stream: one coding, one encoded size,
// one input colourspace (xpra's `csc`). The caller (the paint engine, per window) makes a new
// one when a draw says `frame` 0 or changes any of the three (VideoStreamParams::same_stream),
// and drops it when the window goes.
//
// Ownership and lifetime (the zero-copy rule). libavcodec asks for frame memory through
// get_buffer2; every such buffer is a block of a StoragePool owned by the decoder, wrapped in
// an AVBuffer (av_buffer_create) whose free callback drops the pool storage. A decoded frame
// comes out as a Picture whose storage is read-only and holds one more reference to that
// AVBuffer (its release action is av_buffer_unref): while the picture lives, the block is
// neither reused by the pool nor written by the decoder (libavcodec writes only buffers it
// has just been given), and the picture cannot be written through pixpath (read-only). Each
// buffer's free callback runs exactly once, when the last of {the decoder's references, the
// pictures} goes, on whatever thread drops it last; pictures may outlive the decoder.
// video_buffer_counters() counts buffers made and freed, so tests prove it.
//
// Errors (every one names the coding, the stage and the reason): an unsupported coding or
// csc, a size over the limits (refused before anything is allocated), corrupt or truncated
// data (libavcodec's error or a frame flagged corrupt), a stream whose frames do not have the
// size or colourspace the draw says. After an error the caller drops the decoder: the server
// sends a key frame (frame 0) after a -1 ack.
//
// GPU decoding (opt-in: VideoStreamParams::gpu_device >= 0). libavcodec's CUDA hwaccel (NVDEC;
// Debian's libavcodec opens libcuda and libnvcuvid at run time, nothing CUDA is linked here)
// decodes on that CUDA device, in the context the caller names (gpu_context: the CUDA module's,
// the device's primary context, so the frame's device pointers are valid there). The decoder offers libavcodec the CUDA format
// first and the software format second, so a stream NVDEC cannot take (its limits, a coding the
// GPU lacks, 4:4:4) is decoded on the CPU from its first frame, by libavcodec itself; a device
// that cannot be opened (no driver, no GPU) gives a CPU decoder too. Either way stats() says so
// (gpu_requested, gpu, gpu_note). A frame decoded on the GPU comes out as a read-only picture in
// CUDA memory (MemoryKind::CudaDevice: NV12, or the planar format libavcodec's frames hold) whose
// storage holds a reference to libavcodec's frame (released exactly once, on any thread, when
// the last picture reference goes; counted in video_buffer_counters()). It has no SyncPoint:
// libavcodec queued the frame's copy on the stream VideoFrame::cuda_stream names, and a reader
// orders its GPU work after that stream (the CUDA module's convert_yuv_to_device does).
//
// Threading: one VideoDecoder is used by one thread at a time (not synchronised); pictures it
// returned may be read and dropped on any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs {

// The largest stream a video decoder takes (the client says so as video_max_size).
inline constexpr int kVideoMaxWidth = 8192;
inline constexpr int kVideoMaxHeight = 8192;

struct VideoStreamParams {
  std::string coding;  // "h264", "vp8", "vp9"
  int width = 0;       // the encoded size (the draw's scaled_size, else its w x h)
  int height = 0;
  std::string csc;     // xpra's input colourspace: "YUV420P", "YUV422P" or "YUV444P"
  DecodeLimits limits;  // also capped at kVideoMax*
  int threads = 1;     // libavcodec slice threads (1: decode on the calling thread only)
  // >= 0: decode on this CUDA device with NVDEC where it can (see "GPU decoding"); -1: CPU.
  // Not part of the stream's identity (same_stream).
  int gpu_device = -1;
  // The CUcontext to decode in (the CUDA module's: GpuDrawDecoder::cuda_context(), the device's
  // primary context), so that frames live where the module reads them. Null: libavcodec
  // retains the device's primary context itself, which it refuses once something else (the
  // CUDA module) made that context active with other scheduling flags.
  const void* gpu_context = nullptr;

  bool same_stream(const VideoStreamParams& o) const {
    return coding == o.coding && width == o.width && height == o.height && csc == o.csc;
  }
};

// How the YUV values map to RGB, as the stream signals it.
struct VideoColor {
  bool bt709 = false;       // else BT.601
  bool full_range = false;  // else studio range (Y 16..235)
  // The planes are G, B, R (no YUV at all): an h264 4:4:4 stream with the identity matrix whose
  // draw says the server encoded RGB; the picture says YUV444P. (xpra 6.x marks every h264
  // stream with the identity matrix: with csc YUV444P its planes are Y, Cb, Cr, not G, B, R.)
  bool gbr = false;
  bool operator==(const VideoColor&) const = default;
};

struct VideoFrame {
  Picture picture;  // YUV420P, YUV422P or YUV444P; read-only; the encoded size
  VideoColor color;
  // GPU frames (picture in CudaDevice memory): the CUstream libavcodec queued the frame's write
  // on; null with cuda_legacy_stream: the legacy default stream.
  void* cuda_stream = nullptr;
  bool cuda_legacy_stream = false;
  bool on_gpu() const { return picture.location().kind == MemoryKind::CudaDevice; }
};

struct VideoDecoderStats {
  int64_t packets = 0;     // decode() calls
  int64_t frames = 0;      // pictures returned
  int64_t no_picture = 0;  // decode() calls that returned no picture (held back frames)
  bool gpu_requested = false;  // params.gpu_device >= 0
  bool gpu = false;            // frames come from NVDEC (known once libavcodec chose, at the first frame)
  int64_t gpu_frames = 0;      // pictures returned in CUDA memory
  std::string gpu_note;        // why a GPU-requested stream decodes on the CPU ("" when it does not)
};

class VideoDecoder {
 public:
  static Result<std::unique_ptr<VideoDecoder>> create(const VideoStreamParams& params);
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  const VideoStreamParams& params() const;
  // Decodes one packet. Returns the newest frame it produced, or nullopt when the decoder
  // produced none yet (a frame held back; xpra marks such draws `delayed`).
  Result<std::optional<VideoFrame>> decode(std::span<const uint8_t> data);
  // End of stream: the frames still held back, oldest first.
  Result<std::vector<VideoFrame>> flush();
  VideoDecoderStats stats() const;

  struct Impl;

 private:
  explicit VideoDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The video codings this build decodes, in preference order (the client advertises them).
std::vector<std::string> video_codings();
bool is_video_coding(std::string_view coding);
// The input colourspaces (`csc`) a coding's decoder takes (full_csc_modes).
std::vector<std::string> video_csc_modes(std::string_view coding);
// "libavcodec 59.37.100" (the run-time version) and the decoder's name per coding.
std::string video_library_version();
struct VideoCodecDescription {
  std::string coding;
  std::string decoder;  // libavcodec's decoder name, e.g. "h264"
  std::vector<std::string> csc_modes;
  // libavcodec's hardware decoders for the coding that pixpath uses ("nvdec" when this
  // libavcodec was built with the CUDA hwaccel for it); whether a GPU takes a stream is known
  // only when one is decoded (stats().gpu, gpu_note).
  std::vector<std::string> hwaccels;
  int max_width = kVideoMaxWidth, max_height = kVideoMaxHeight;
};
std::vector<VideoCodecDescription> describe_video_codecs();

// NVDEC's own limits for `coding` on CUDA device `device`, as the driver reports them
// (cuvidGetDecoderCaps through the driver's libnvcuvid, opened at run time): 8-bit streams.
struct NvdecCaps {
  std::vector<std::string> csc_modes;  // of YUV420P / YUV444P; empty: not on this GPU
  int max_width = 0, max_height = 0;   // coded size, 4:2:0
  int min_width = 0, min_height = 0;
  int engines = 0;  // NVDEC engines that take it
};
// Unavailable with the reason where there is no driver, libnvcuvid or device, or the build had
// no ffnvcodec headers; Unsupported for a coding that is not h264, vp8 or vp9.
Result<NvdecCaps> nvdec_caps(std::string_view coding, int device);

// Opens (and closes) libavcodec's CUDA device `device` as a GPU video decoder would: ok when
// NVDEC decoding may be tried there, else the reason (no libcuda, no such device...).
// `context` as VideoStreamParams::gpu_context.
Result<void> probe_video_gpu(int device, const void* context = nullptr);

// Frame buffers made through get_buffer2 and GPU frames handed out as pictures, and their
// releases (process-wide): equal when every frame has been released; `live` = made - freed.
struct VideoBufferCounters {
  int64_t made = 0, freed = 0;
  int64_t live() const { return made - freed; }
};
VideoBufferCounters video_buffer_counters();

}  // namespace pixpath::codecs
