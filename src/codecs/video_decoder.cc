// The libavcodec video decoder (video_decoder.h): frames land in a StoragePool through
// get_buffer2 and leave as read-only pictures holding a reference to their AVBuffer.
#include "pixpath/codecs/video_decoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "pixpath/core/log.h"
#include "pixpath/core/storage_pool.h"

namespace pixpath::codecs {
namespace {

// libavcodec's own messages: never printed (libraries never print); the last error-level one
// of this thread is added to the decode error's reason, every one goes to the pixpath log at
// debug level.
thread_local std::string t_last_av_message;

extern "C" void av_log_to_pixpath(void* /*avcl*/, int level, const char* fmt, va_list args) {
  if (level > AV_LOG_WARNING && !log_enabled(LogLevel::Debug)) return;
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, args);
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (level <= AV_LOG_ERROR) t_last_av_message = text;
  if (log_enabled(LogLevel::Debug)) log_line(LogLevel::Debug, "libavcodec: " + text);
}

void route_av_log() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(av_log_to_pixpath); });
}

std::atomic<int64_t> g_buffers_made{0};
std::atomic<int64_t> g_buffers_freed{0};

// libavutil/hwcontext_cuda.h's AVCUDADeviceContext and AV_CUDA_USE_PRIMARY_CONTEXT, spelled out
// here because that header includes CUDA's cuda.h, which a CPU build need not have. Both are
// public, stable libavutil ABI (the struct's first two members and the flag are unchanged since
// FFmpeg 4.x).
struct CudaDeviceContextView {
  void* cuda_ctx;  // CUcontext
  void* stream;    // CUstream; null: the legacy default stream
};
constexpr int kCudaUsePrimaryContext = 1 << 0;

// Opens libavcodec's CUDA device `device`: in `context` (a CUcontext: the CUDA module's, its
// device's primary context) when given, else in the device's primary context, retained by
// libavcodec. The second works only while nothing else has made the primary context active:
// libavcodec insists on CU_CTX_SCHED_BLOCKING_SYNC for it and refuses ("Primary context already
// active with incompatible flags") when the CUDA runtime made it with other flags, as the CUDA
// module does. A given context is libavcodec's documented user context (cuda_ctx set before
// av_hwdevice_ctx_init): libavcodec pushes it around its calls and never destroys it.
Result<AVBufferRef*> open_cuda_device(int device, const void* context) {
  AVBufferRef* ref = nullptr;
  const std::string name = std::to_string(device);
  t_last_av_message.clear();
  int r = 0;
  const char* call = "av_hwdevice_ctx_create";
  if (context) {
    call = "av_hwdevice_ctx_init";
    ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!ref) return Error(ErrorCode::OutOfMemory, "video", "gpu device", "av_hwdevice_ctx_alloc(cuda) failed");
    auto* dev = reinterpret_cast<AVHWDeviceContext*>(ref->data);
    auto* cuda = static_cast<CudaDeviceContextView*>(dev->hwctx);
    cuda->cuda_ctx = const_cast<void*>(context);
    cuda->stream = nullptr;  // the legacy default stream
    r = av_hwdevice_ctx_init(ref);
    if (r < 0) av_buffer_unref(&ref);
  } else {
    r = av_hwdevice_ctx_create(&ref, AV_HWDEVICE_TYPE_CUDA, name.c_str(), nullptr,
                               kCudaUsePrimaryContext);
  }
  if (r < 0) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(r, buf, sizeof buf);
    std::string why = std::string(call) + "(cuda, device " + name + (context ? ", the caller's context" : "") +
                      "): " + buf;
    if (!t_last_av_message.empty()) why += " (" + t_last_av_message + ")";
    return Error(ErrorCode::Unavailable, "video", "gpu device", why);
  }
  return ref;
}

bool codec_has_cuda_hwaccel(const AVCodec* codec) {
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* hw = avcodec_get_hw_config(codec, i);
    if (!hw) return false;
    if (hw->device_type == AV_HWDEVICE_TYPE_CUDA &&
        (hw->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) && hw->pix_fmt == AV_PIX_FMT_CUDA)
      return true;
  }
}

constexpr size_t kPlaneAlign = 64;  // >= libavcodec's STRIDE_ALIGN on every x86 build

struct CodingInfo {
  std::string_view coding;
  AVCodecID id;
  std::vector<std::string> csc;
};

const std::vector<CodingInfo>& codings() {
  static const std::vector<CodingInfo> table = {
      {"h264", AV_CODEC_ID_H264, {"YUV420P", "YUV422P", "YUV444P"}},
      {"vp8", AV_CODEC_ID_VP8, {"YUV420P"}},
      {"vp9", AV_CODEC_ID_VP9, {"YUV420P", "YUV444P"}},
  };
  return table;
}

const CodingInfo* find_coding(std::string_view coding) {
  for (const auto& c : codings())
    if (c.coding == coding) return &c;
  return nullptr;
}

// The libavcodec decoder for a coding, only when it lets us provide the frame memory (DR1).
const AVCodec* find_decoder(const CodingInfo& c) {
  const AVCodec* codec = avcodec_find_decoder(c.id);
  if (!codec || !(codec->capabilities & AV_CODEC_CAP_DR1)) return nullptr;
  return codec;
}

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

// The pixpath format of a libavcodec frame format (the J formats are full range). GBRP is
// three full planes in the stream's order (libavcodec's data[0..2] = G, B, R): what they hold
// is up to the draw's csc (take_frame).
std::optional<PixelFormat> pixpath_format(int f, bool* full_range, bool* gbr = nullptr) {
  switch (f) {
    case AV_PIX_FMT_GBRP:
      if (gbr) *gbr = true;
      return PixelFormat::YUV444P;
    case AV_PIX_FMT_YUVJ420P: *full_range = true; [[fallthrough]];
    case AV_PIX_FMT_YUV420P: return PixelFormat::YUV420P;
    case AV_PIX_FMT_YUVJ422P: *full_range = true; [[fallthrough]];
    case AV_PIX_FMT_YUV422P: return PixelFormat::YUV422P;
    case AV_PIX_FMT_YUVJ444P: *full_range = true; [[fallthrough]];
    case AV_PIX_FMT_YUV444P: return PixelFormat::YUV444P;
    default: return std::nullopt;
  }
}

std::string format_name(int f) {
  const char* n = av_get_pix_fmt_name(static_cast<AVPixelFormat>(f));
  return n ? n : "format " + std::to_string(f);
}

void free_block(void* opaque, uint8_t* /*data*/) {
  delete static_cast<StorageRef*>(opaque);  // the pool storage goes back to its pool
  g_buffers_freed.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

struct VideoDecoder::Impl {
  VideoStreamParams params;
  AVCodecContext* ctx = nullptr;
  AVFrame* frame = nullptr;
  std::shared_ptr<StoragePool> pool;  // blocks of the current frame size
  std::string buffer_error;           // why get_buffer2 refused, for the decode error
  VideoDecoderStats stats;
  int max_w = 0, max_h = 0;
  AVBufferRef* hw_device = nullptr;  // the CUDA device (GPU-requested streams that opened it)
  bool gpu_chosen = false;           // get_format's last answer was AV_PIX_FMT_CUDA

  ~Impl() {
    av_frame_free(&frame);
    avcodec_free_context(&ctx);  // drops the decoder's references; pictures keep theirs
    av_buffer_unref(&hw_device);
  }

  // libavcodec's choice of output format: CUDA first (when this stream has a CUDA device), the
  // first software format second. When the CUDA hwaccel fails to start for the stream (NVDEC's
  // limits), libavcodec asks again without CUDA in the list: the software format, noted.
  static AVPixelFormat get_format(AVCodecContext* c, const AVPixelFormat* fmts) {
    auto* self = static_cast<Impl*>(c->opaque);
    bool has_cuda = false;
    AVPixelFormat sw = AV_PIX_FMT_NONE;
    std::string offered;
    for (const AVPixelFormat* p = fmts; *p != AV_PIX_FMT_NONE; ++p) {
      offered += (offered.empty() ? "" : ",") + format_name(*p);
      if (*p == AV_PIX_FMT_CUDA) has_cuda = true;
      const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*p);
      if (sw == AV_PIX_FMT_NONE && d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL)) sw = *p;
    }
    if (self->hw_device && has_cuda) {
      self->gpu_chosen = true;
      return AV_PIX_FMT_CUDA;
    }
    if (self->hw_device && self->stats.gpu_note.empty()) {
      self->stats.gpu_note =
          self->gpu_chosen ? "NVDEC refused the stream" : "libavcodec offers no CUDA format for it";
      if (!t_last_av_message.empty()) self->stats.gpu_note += " (" + t_last_av_message + ")";
      self->stats.gpu_note += "; offered " + offered + ": decoded on the CPU";
    }
    self->gpu_chosen = false;
    return sw;
  }

  Error error(ErrorCode code, std::string stage, std::string reason) const {
    return Error(code, params.coding, std::move(stage), std::move(reason));
  }

  static int get_buffer(AVCodecContext* ctx, AVFrame* f, int flags) {
    // GPU frames come from the CUDA frames pool libavcodec set up for the hwaccel.
    if (f->format == AV_PIX_FMT_CUDA || ctx->hw_frames_ctx)
      return avcodec_default_get_buffer2(ctx, f, flags);
    auto* self = static_cast<Impl*>(ctx->opaque);
    return self->make_buffer(ctx, f);
  }

  int make_buffer(AVCodecContext* c, AVFrame* f) {
    bool full = false;
    if (!pixpath_format(f->format, &full)) {
      buffer_error = "the stream decodes to " + format_name(f->format) + " (the draw says csc " +
                     params.csc + "), which pixpath cannot paint (YUV 4:2:0, 4:2:2 or 4:4:4, 8-bit)";
      return AVERROR(EINVAL);
    }
    if (f->width <= 0 || f->height <= 0 || f->width > max_w + 64 || f->height > max_h + 64) {
      buffer_error = "the stream's frames are " + std::to_string(f->width) + "x" +
                     std::to_string(f->height) + ", the draw says " +
                     std::to_string(params.width) + "x" + std::to_string(params.height) +
                     " (a new size needs a new stream, frame 0)";
      return AVERROR(EINVAL);
    }
    int w = f->width, h = f->height;
    int align[AV_NUM_DATA_POINTERS] = {};
    avcodec_align_dimensions2(c, &w, &h, align);
    int linesize[4] = {};
    if (av_image_fill_linesizes(linesize, static_cast<AVPixelFormat>(f->format), w) < 0)
      return AVERROR(EINVAL);
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
    size_t offsets[3] = {}, total = 0;
    for (int i = 0; i < 3; ++i) {
      linesize[i] = (linesize[i] + int(kPlaneAlign) - 1) & ~(int(kPlaneAlign) - 1);
      const int ph = i == 0 ? h : -((-h) >> desc->log2_chroma_h);
      offsets[i] = total;
      // +16 +align: libavcodec may read/write a little past the last row (as its own pools)
      total += (size_t(linesize[i]) * size_t(ph) + 16 + kPlaneAlign - 1 + kPlaneAlign - 1) &
               ~(kPlaneAlign - 1);
    }
    if (!pool || pool->block_bytes() < total) {
      StoragePoolConfig pc;
      pc.name = params.coding + " frames";
      pc.block_bytes = total;
      pc.max_free_blocks = 8;
      auto p = StoragePool::create(std::move(pc));
      if (!p.ok()) {
        buffer_error = p.error().message();
        return AVERROR(ENOMEM);
      }
      pool = std::move(p).value();
    }
    auto storage = pool->acquire(total);
    if (!storage.ok()) {
      buffer_error = storage.error().message();
      return AVERROR(ENOMEM);
    }
    auto* data = static_cast<uint8_t*>((*storage)->data());
    auto* holder = new StorageRef(std::move(storage).value());
    f->buf[0] = av_buffer_create(data, total, free_block, holder, 0);
    if (!f->buf[0]) {
      delete holder;
      return AVERROR(ENOMEM);
    }
    g_buffers_made.fetch_add(1, std::memory_order_relaxed);
    for (int i = 0; i < 3; ++i) {
      f->data[i] = data + offsets[i];
      f->linesize[i] = linesize[i];
    }
    f->extended_data = f->data;
    return 0;
  }

  // The decoded frame has the encoded size the draw says (CPU and GPU frames alike).
  Result<void> check_frame_size() const {
    if (frame->width == params.width && frame->height == params.height) return ok();
    return error(ErrorCode::CorruptData, "decode",
                 "the stream's frame is " + std::to_string(frame->width) + "x" +
                     std::to_string(frame->height) + ", the draw says " +
                     std::to_string(params.width) + "x" + std::to_string(params.height) +
                     " (a new size needs a new stream, frame 0)");
  }

  // The frame now in `frame` as a read-only picture holding a reference to its buffer.
  Result<VideoFrame> take_frame() {
    if (frame->format == AV_PIX_FMT_CUDA) return take_gpu_frame();
    if (stats.gpu_requested && stats.gpu_note.empty())
      stats.gpu_note = "libavcodec decoded the stream on the CPU (" + format_name(frame->format) + ")";
    bool full = false, gbr = false;
    auto format = pixpath_format(frame->format, &full, &gbr);
    if (stats.frames == 0 && log_enabled(LogLevel::Debug))
      log_line(LogLevel::Debug,
               params.coding + " stream " + std::to_string(params.width) + "x" +
                   std::to_string(params.height) + " csc " + params.csc + ": decodes to " +
                   format_name(frame->format) + ", colorspace " +
                   (av_color_space_name(frame->colorspace) ?: "?") + ", range " +
                   (av_color_range_name(frame->color_range) ?: "?"));
    if (!format)
      return error(ErrorCode::Unsupported, "decode",
                   "the stream decodes to " + format_name(frame->format));
    if (frame->flags & AV_FRAME_FLAG_CORRUPT || frame->decode_error_flags)
      return error(ErrorCode::CorruptData, "decode", "libavcodec flagged the frame corrupt");
    PIXPATH_CHECK(check_frame_size());
    if (name(*format) != params.csc)
      return error(ErrorCode::CorruptData, "decode",
                   "the stream is " + std::string(name(*format)) + ", the draw says csc " +
                       params.csc);
    if (!frame->buf[0] || frame->buf[1])
      return error(ErrorCode::Internal, "decode", "the frame is not in one pixpath buffer");
    AVBufferRef* ref = av_buffer_ref(frame->buf[0]);
    if (!ref) return error(ErrorCode::OutOfMemory, "decode", "av_buffer_ref failed");
    uint8_t* base = ref->data;
    const size_t size = ref->size;
    StorageFlags flags;
    flags.read_only = true;  // the decoder's memory: never written through pixpath
    // On failure wrap() has run the release (the ref is dropped).
    PIXPATH_TRY(StorageRef storage,
                PictureStorage::wrap(MemoryLocation::host(), base, size, flags,
                                     [ref]() mutable { av_buffer_unref(&ref); }));
    PlaneRef planes[3];
    for (int i = 0; i < 3; ++i) {
      if (frame->data[i] < base || frame->linesize[i] <= 0)
        return error(ErrorCode::Internal, "decode", "a plane lies outside the frame buffer");
      planes[i] = PlaneRef{storage, size_t(frame->data[i] - base), size_t(frame->linesize[i])};
    }
    PictureLimits limits = PictureLimits::defaults();
    auto pic = Picture::wrap(*format, frame->width, frame->height, planes, limits);
    if (!pic.ok()) return pic.error().within(params.coding, "decode");
    VideoFrame out;
    out.picture = std::move(pic).value();
    out.color.full_range = full || frame->color_range == AVCOL_RANGE_JPEG;
    out.color.bt709 = frame->colorspace == AVCOL_SPC_BT709;
    // libavcodec makes GBRP of every h264 4:4:4 stream whose matrix is the identity ("RGB"),
    // and xpra 6.x's x264 encoder writes the identity matrix into every stream (vui
    // i_colmatrix = 0) whatever it encodes: with csc YUV444P the planes are the Y, Cb, Cr of
    // the server's own BGRX -> YUV444P conversion (BT.601). Painted as G, B, R they came out
    // at PSNR 7.8 dB. The planes are G, B, R only when the draw says the server encoded RGB.
    out.color.gbr = gbr && params.csc != "YUV444P";
    return out;
  }

  // A frame in CUDA memory (NVDEC) as a read-only CudaDevice picture holding a clone of the
  // AVFrame (its references to libavcodec's buffers), dropped by the picture's release.
  Result<VideoFrame> take_gpu_frame() {
    if (frame->flags & AV_FRAME_FLAG_CORRUPT || frame->decode_error_flags)
      return error(ErrorCode::CorruptData, "decode", "libavcodec flagged the frame corrupt (NVDEC)");
    if (!frame->hw_frames_ctx)
      return error(ErrorCode::Internal, "gpu frame", "a CUDA frame without a frames context");
    const auto* fc = reinterpret_cast<const AVHWFramesContext*>(frame->hw_frames_ctx->data);
    PixelFormat format;
    int planes = 3;
    switch (fc->sw_format) {
      case AV_PIX_FMT_NV12: format = PixelFormat::NV12, planes = 2; break;
      case AV_PIX_FMT_YUV420P: format = PixelFormat::YUV420P; break;
      case AV_PIX_FMT_YUV444P: format = PixelFormat::YUV444P; break;
      default:
        return error(ErrorCode::Unsupported, "gpu frame",
                     "NVDEC's frames are " + format_name(fc->sw_format) +
                         " (pixpath converts NV12, YUV420P and YUV444P, 8-bit)");
    }
    const std::string csc = format == PixelFormat::YUV444P ? "YUV444P" : "YUV420P";
    PIXPATH_CHECK(check_frame_size());
    if (csc != params.csc)
      return error(ErrorCode::CorruptData, "decode",
                   "the stream is " + csc + ", the draw says csc " + params.csc);
    // One storage spanning the planes (libavcodec's CUDA frames hold them in one allocation).
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < planes; ++i) {
      if (!frame->data[i] || frame->linesize[i] <= 0)
        return error(ErrorCode::Internal, "gpu frame", "plane " + std::to_string(i) + " missing");
      const auto p = reinterpret_cast<uintptr_t>(frame->data[i]);
      const int rows = plane_height(format, i, frame->height);
      lo = std::min(lo, p);
      hi = std::max(hi, p + uintptr_t(frame->linesize[i]) * uintptr_t(rows));
    }
    AVFrame* held = av_frame_clone(frame);
    if (!held) return error(ErrorCode::OutOfMemory, "gpu frame", "av_frame_clone failed");
    g_buffers_made.fetch_add(1, std::memory_order_relaxed);
    const auto* dc = reinterpret_cast<const CudaDeviceContextView*>(
        reinterpret_cast<const AVHWDeviceContext*>(fc->device_ref->data)->hwctx);
    MemoryLocation where;
    where.kind = MemoryKind::CudaDevice;
    where.device = params.gpu_device;
    where.context = dc->cuda_ctx;
    StorageFlags flags;
    flags.read_only = true;
    // On failure wrap() has run the release (the clone is freed).
    PIXPATH_TRY(StorageRef storage,
                PictureStorage::wrap(where, reinterpret_cast<void*>(lo), size_t(hi - lo), flags,
                                     [held]() mutable {
                                       av_frame_free(&held);
                                       g_buffers_freed.fetch_add(1, std::memory_order_relaxed);
                                     }));
    PlaneRef refs[3];
    for (int i = 0; i < planes; ++i)
      refs[i] = PlaneRef{storage, size_t(reinterpret_cast<uintptr_t>(frame->data[i]) - lo),
                         size_t(frame->linesize[i])};
    auto pic = Picture::wrap(format, frame->width, frame->height,
                             std::span<const PlaneRef>(refs, size_t(planes)),
                             PictureLimits::defaults());
    if (!pic.ok()) return pic.error().within(params.coding, "gpu frame");
    VideoFrame out;
    out.picture = std::move(pic).value();
    out.color.full_range = frame->color_range == AVCOL_RANGE_JPEG;
    out.color.bt709 = frame->colorspace == AVCOL_SPC_BT709;
    out.cuda_stream = dc->stream;
    out.cuda_legacy_stream = dc->stream == nullptr;
    stats.gpu = true;
    stats.gpu_frames++;
    return out;
  }

  // Receives every frame ready; keeps them in `out`. EAGAIN/EOF end the loop.
  Result<void> receive(std::vector<VideoFrame>& out) {
    for (;;) {
      const int r = avcodec_receive_frame(ctx, frame);
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return ok();
      if (r < 0) return decode_error(r);
      auto f = take_frame();
      av_frame_unref(frame);
      if (!f.ok()) return f.error();
      out.push_back(std::move(f).value());
    }
  }

  Error decode_error(int r) {
    std::string why = av_error(r);
    if (!t_last_av_message.empty()) why += " (" + t_last_av_message + ")";
    if (!buffer_error.empty()) why = buffer_error;
    buffer_error.clear();
    return error(r == AVERROR(ENOMEM) ? ErrorCode::OutOfMemory : ErrorCode::CorruptData,
                 "decode", why);
  }
};

Result<std::unique_ptr<VideoDecoder>> VideoDecoder::create(const VideoStreamParams& params) {
  const std::string subject = params.coding.empty() ? "video" : params.coding;
  auto fail = [&](ErrorCode code, std::string reason) {
    return Error(code, subject, "create decoder", std::move(reason));
  };
  route_av_log();
  const CodingInfo* info = find_coding(params.coding);
  if (!info) return fail(ErrorCode::Unsupported, "'" + params.coding + "' is not a video coding");
  const AVCodec* codec = find_decoder(*info);
  if (!codec) return fail(ErrorCode::Unavailable, "libavcodec has no decoder for it");
  if (params.csc.empty())
    return fail(ErrorCode::Protocol, "the draw has no csc option (the input colourspace)");
  if (std::find(info->csc.begin(), info->csc.end(), params.csc) == info->csc.end())
    return fail(ErrorCode::Unsupported, "csc '" + params.csc + "' cannot be decoded");
  const int max_w = std::min(params.limits.max_width, kVideoMaxWidth);
  const int max_h = std::min(params.limits.max_height, kVideoMaxHeight);
  if (params.width <= 0 || params.height <= 0 || params.width > max_w ||
      params.height > max_h ||
      uint64_t(params.width) * uint64_t(params.height) > params.limits.max_pixels)
    return fail(ErrorCode::LimitExceeded,
                "stream size " + std::to_string(params.width) + "x" +
                    std::to_string(params.height) + " is outside 1x1.." + std::to_string(max_w) +
                    "x" + std::to_string(max_h));
  auto impl = std::make_unique<Impl>();
  impl->params = params;
  impl->max_w = max_w;
  impl->max_h = max_h;
  impl->ctx = avcodec_alloc_context3(codec);
  impl->frame = av_frame_alloc();
  if (!impl->ctx || !impl->frame) return fail(ErrorCode::OutOfMemory, "libavcodec allocation");
  AVCodecContext* c = impl->ctx;
  c->opaque = impl.get();
  c->get_buffer2 = &Impl::get_buffer;
  c->width = params.width;
  c->height = params.height;
  c->max_pixels = int64_t(max_w + 64) * (max_h + 64);
  c->flags |= AV_CODEC_FLAG_LOW_DELAY;
  c->err_recognition = AV_EF_EXPLODE;
  c->thread_count = std::max(1, params.threads);
  c->thread_type = FF_THREAD_SLICE;  // frame threads would delay every frame
  impl->stats.gpu_requested = params.gpu_device >= 0;
  if (params.gpu_device >= 0) {
    if (!codec_has_cuda_hwaccel(codec)) {
      impl->stats.gpu_note = std::string("this libavcodec has no CUDA hwaccel for ") + codec->name +
                             ": decoded on the CPU";
    } else if (auto dev = open_cuda_device(params.gpu_device, params.gpu_context); !dev.ok()) {
      impl->stats.gpu_note = dev.error().reason() + ": decoded on the CPU";
    } else {
      impl->hw_device = *dev;
      c->hw_device_ctx = av_buffer_ref(impl->hw_device);
      if (!c->hw_device_ctx) return fail(ErrorCode::OutOfMemory, "av_buffer_ref(hw device)");
      c->get_format = &Impl::get_format;
    }
    if (!impl->stats.gpu_note.empty() && log_enabled(LogLevel::Debug))
      log_line(LogLevel::Debug, params.coding + " stream: " + impl->stats.gpu_note);
  }
  if (const int r = avcodec_open2(c, codec, nullptr); r < 0)
    return fail(ErrorCode::Unavailable, "avcodec_open2: " + av_error(r));
  return std::unique_ptr<VideoDecoder>(new VideoDecoder(std::move(impl)));
}

VideoDecoder::VideoDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VideoDecoder::~VideoDecoder() = default;

const VideoStreamParams& VideoDecoder::params() const { return impl_->params; }
VideoDecoderStats VideoDecoder::stats() const { return impl_->stats; }

Result<std::optional<VideoFrame>> VideoDecoder::decode(std::span<const uint8_t> data) {
  Impl& d = *impl_;
  d.stats.packets++;
  if (data.empty()) return d.error(ErrorCode::CorruptData, "decode", "no data");
  t_last_av_message.clear();
  if (data.size() > size_t(INT32_MAX))
    return d.error(ErrorCode::LimitExceeded, "decode", "packet over 2 GiB");
  AVPacket* pkt = av_packet_alloc();
  if (!pkt) return d.error(ErrorCode::OutOfMemory, "decode", "av_packet_alloc failed");
  // Not reference counted: libavcodec copies it into a padded buffer of its own.
  pkt->data = const_cast<uint8_t*>(data.data());
  pkt->size = int(data.size());
  const int r = avcodec_send_packet(d.ctx, pkt);
  av_packet_free(&pkt);
  std::vector<VideoFrame> frames;
  if (r < 0 && r != AVERROR(EAGAIN)) return d.decode_error(r);
  PIXPATH_CHECK(d.receive(frames));
  if (frames.empty()) {
    d.stats.no_picture++;
    return std::optional<VideoFrame>();
  }
  d.stats.frames++;
  return std::optional<VideoFrame>(std::move(frames.back()));  // older ones: superseded
}

Result<std::vector<VideoFrame>> VideoDecoder::flush() {
  Impl& d = *impl_;
  std::vector<VideoFrame> frames;
  const int r = avcodec_send_packet(d.ctx, nullptr);
  if (r < 0 && r != AVERROR_EOF) return d.decode_error(r);
  PIXPATH_CHECK(d.receive(frames));
  d.stats.frames += int64_t(frames.size());
  return frames;
}

std::vector<std::string> video_codings() {
  std::vector<std::string> out;
  for (const auto& c : codings())
    if (find_decoder(c)) out.emplace_back(c.coding);
  return out;
}

bool is_video_coding(std::string_view coding) { return find_coding(coding) != nullptr; }

std::vector<std::string> video_csc_modes(std::string_view coding) {
  const CodingInfo* c = find_coding(coding);
  return c ? c->csc : std::vector<std::string>{};
}

std::string video_library_version() {
  const unsigned v = avcodec_version();
  return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
         std::to_string(v & 0xff);
}

std::vector<VideoCodecDescription> describe_video_codecs() {
  std::vector<VideoCodecDescription> out;
  for (const auto& c : codings()) {
    const AVCodec* codec = find_decoder(c);
    if (!codec) continue;
    VideoCodecDescription d;
    d.coding = std::string(c.coding);
    d.decoder = codec->name;
    d.csc_modes = c.csc;
    if (codec_has_cuda_hwaccel(codec)) d.hwaccels.push_back("nvdec");
    out.push_back(std::move(d));
  }
  return out;
}

Result<void> probe_video_gpu(int device, const void* context) {
  route_av_log();
  PIXPATH_TRY(AVBufferRef* ref, open_cuda_device(device, context));
  av_buffer_unref(&ref);
  return ok();
}

VideoBufferCounters video_buffer_counters() {
  return {g_buffers_made.load(std::memory_order_relaxed),
          g_buffers_freed.load(std::memory_order_relaxed)};
}

}  // namespace pixpath::codecs
