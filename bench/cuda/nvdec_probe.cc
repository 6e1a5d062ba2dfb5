// Issue 16 (video draws): how fast can NVDEC decode one h264 P-frame when driven directly through
// the driver's libnvcuvid API (parser + decoder + map), without libavcodec? pixpath decodes video on
// the GPU through libavcodec's CUDA hwaccel today; on an H200 that decode call alone took p50
// 1.40 ms for a 1080p P-frame and 5.0 ms at 4K, against targets of bytes -> window texture <= 1 ms
// (1080p) and <= 3 ms (4K). This probe measures the direct API's floor beside libavcodec, on the
// same packets, in one process.
//
// Streams: codecs::testing::encode_video("h264", w, h, frames) (libx264 ultrafast/zerolatency,
// one IDR then P-frames only, Annex B with SPS/PPS in the first packet).
//
// Direct route (nvdec): the driver is opened with ffnvcodec's loader (dlopen of libcuda.so.1 and
// libnvcuvid.so.1, no link against the driver); device 0's primary context is retained and made
// current; a parser (cuvidCreateVideoParser, h264, ulMaxDisplayDelay 0) creates the decoder in its
// sequence callback (NV12, weave, 2 output surfaces, cudaVideoCreate_PreferCUVID), decodes in its
// picture callback (cuvidDecodePicture) and, in its display callback, maps the frame
// (cuvidMapVideoFrame64 on our stream), copies luma and chroma to a device buffer
// (cuMemcpy2DAsync), synchronises the stream and unmaps. Each packet goes in with
// CUVID_PKT_ENDOFPICTURE so the parser need not wait for the next one. Per frame (steady_clock):
//   parse    the cuvidParseVideoData call (the callbacks run inside it)
//   decode   the cuvidDecodePicture call
//   map      the cuvidMapVideoFrame64 call (expected to wait for the decode; with an output_stream
//            the driver may instead only queue its post-processing there: then map+copy holds
//            the wait)
//   map+copy map + both plane copies + cuStreamSynchronize (what a real route does before its
//            colour conversion)
// cuvidGetDecodeStatus is asked before the map (how often the decode is still running when the
// display callback comes) and after the copy (must be Success).
// libavcodec route (av-shared, av-own): libavcodec's h264 decoder with the CUDA hwaccel
// (AV_CODEC_FLAG_LOW_DELAY, one thread, slice threading as pixpath), avcodec_send_packet +
// avcodec_receive_frame per packet, then the same + cuStreamSynchronize(legacy stream).
//   av-shared: libavcodec in our primary context (a caller's context, as pixpath's GPU route
//              passes the CUDA module's context);
//   av-own:    av_hwdevice_ctx_create(CUDA, "0", flags 0): libavcodec's own context
//              (CU_CTX_SCHED_BLOCKING_SYNC).
// libavcodec's CUDA frame is already a copy of the mapped NV12 surface (nvdec's retrieve_data
// copies and unmaps), so "map+copy" of nvdec and the libavcodec call cover the same work.
// Statistics: P-frames only (frame 0, the IDR with the decoder's creation, is left out; it is
// printed apart); passes after the first (pass 1 warms up) when --passes > 1.
// Luma PSNR of the last frame against the source checks that the pixels are real.
//
// Usage: nvdec_probe [--frames N] [--sizes WxH[,WxH...]] [--passes N]
//                    [--routes nvdec,av-shared,av-own] [--sched auto|spin|yield|blocking]
//                    [--display-from-decode]
// Exit 0 when every route ran; 1 when the driver, libnvcuvid or a CUDA device is missing or a
// route failed (the reason is printed). The last line is JSON (prefix "json: ").
#include <cstdio>
#include <string>

// The loader's own log lines go nowhere: codecs::nvdec::driver() loaded the libraries and kept
// its reasons.
#define FFNV_LOG_FUNC(logctx, msg, ...)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
#include <ffnvcodec/dynlink_loader.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixfmt.h>
}

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <span>
#include <vector>

#include "codecs/nvdec_driver.h"
#include "codecs/testing/video_streams.h"
#include "bench_report.h"

namespace {

using namespace pixpath;
using Clock = std::chrono::steady_clock;
using bench::Pct;
using bench::pct;

// CUDA's scheduling flags (cuda.h; ffnvcodec's dynlink_cuda.h spells out only BLOCKING_SYNC).
constexpr unsigned kSchedAuto = 0, kSchedSpin = 1, kSchedYield = 2, kSchedBlocking = 4;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

bench::JsonItems json_items;
void add_json(const std::string& item) { json_items.add(item); }

std::string json_str(const std::string& v) {
  std::string o = "\"";
  for (const char ch : v) {
    if (ch == '"' || ch == '\\') o += '\\', o += ch;
    else if (static_cast<unsigned char>(ch) < 0x20) o += ' ';
    else o += ch;
  }
  return o + "\"";
}

std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list args;
  va_start(args, f);
  std::vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  return buf;
}

// Luma PSNR of a host copy of a decoded luma plane against the source picture's plane 0.
double luma_psnr_host(const Picture& source, const std::vector<uint8_t>& luma, size_t pitch) {
  auto v = source.read();
  if (!v.ok() || luma.size() < pitch * size_t(source.height())) return -1;
  double se = 0;
  for (int y = 0; y < source.height(); ++y) {
    const uint8_t* a = v->plane(0).unchecked_row(y);
    const uint8_t* b = luma.data() + size_t(y) * pitch;
    for (int x = 0; x < source.width(); ++x) {
      const double d = double(a[x]) - b[x];
      se += d * d;
    }
  }
  const double mse = se / (double(source.width()) * source.height());
  return mse == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(255.0 * 255.0 / mse);
}

// ---------------------------------------------------------------------------------------------
// The driver.

struct Driver {
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cv = nullptr;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  std::string name;

  std::string err(CUresult r) const {
    const char* n = nullptr;
    const char* s = nullptr;
    if (cu && cu->cuGetErrorName) cu->cuGetErrorName(r, &n);
    if (cu && cu->cuGetErrorString) cu->cuGetErrorString(r, &s);
    return fmt("%s (%d: %s)", n ? n : "CUDA error", int(r), s ? s : "?");
  }

  ~Driver() {
    if (ctx) {
      CUcontext popped = nullptr;
      cu->cuCtxPopCurrent(&popped);
      cu->cuDevicePrimaryCtxRelease(device);
    }
    // cu and cv stay loaded: codecs::nvdec::driver() keeps them for the process.
  }
};

// Loads libcuda and libnvcuvid, initialises CUDA and makes device 0's primary context current.
// Returns "" or why not.
std::string open_driver(Driver& d, unsigned sched) {
  const codecs::nvdec::Driver& loaded = codecs::nvdec::driver();
  if (!loaded.cu)
    return loaded.error +
           ": no NVIDIA driver on this machine, or not on the library path "
           "(LD_LIBRARY_PATH=/usr/local/nvidia/lib64 on the GPU machine)";
  if (!loaded.cv)
    return loaded.error + ": the driver's video library is missing (container without the 'video' driver "
                          "capability?)";
  d.cu = loaded.cu;
  d.cv = loaded.cv;
  if (CUresult r = d.cu->cuInit(0); r != CUDA_SUCCESS) return "cuInit: " + d.err(r) + " (no CUDA device?)";
  int count = 0;
  if (CUresult r = d.cu->cuDeviceGetCount(&count); r != CUDA_SUCCESS) return "cuDeviceGetCount: " + d.err(r);
  if (count < 1) return "no CUDA device (cuDeviceGetCount: 0)";
  if (CUresult r = d.cu->cuDeviceGet(&d.device, 0); r != CUDA_SUCCESS) return "cuDeviceGet(0): " + d.err(r);
  char name[256] = {};
  d.cu->cuDeviceGetName(name, sizeof name, d.device);
  d.name = name;
  if (sched != kSchedAuto)
    if (CUresult r = d.cu->cuDevicePrimaryCtxSetFlags(d.device, sched); r != CUDA_SUCCESS)
      return "cuDevicePrimaryCtxSetFlags: " + d.err(r);
  if (CUresult r = d.cu->cuDevicePrimaryCtxRetain(&d.ctx, d.device); r != CUDA_SUCCESS) {
    d.ctx = nullptr;
    return "cuDevicePrimaryCtxRetain: " + d.err(r);
  }
  if (CUresult r = d.cu->cuCtxPushCurrent(d.ctx); r != CUDA_SUCCESS) {
    d.cu->cuDevicePrimaryCtxRelease(d.device);
    d.ctx = nullptr;
    return "cuCtxPushCurrent: " + d.err(r);
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Direct route: libnvcuvid's parser and decoder.

struct FrameTimes {
  double parse = -1, decode = -1, map = -1, map_copy = -1;
  int displayed_in = -1;  // index of the packet whose parse call displayed this frame
  bool intra = false;
};

struct DecodeStatusCounts {
  int before_in_progress = 0, before_success = 0, before_other = 0, before_call_failed = 0;
  int after_success = 0, after_not_success = 0, after_call_failed = 0;
};

class NvdecRun {
 public:
  // `display_from_decode`: the parser gets no display callback; each picture is mapped right
  // after its cuvidDecodePicture (NvDecoder's "force zero latency" mode), for when the parser
  // holds frames back despite ulMaxDisplayDelay 0.
  NvdecRun(Driver& d, const codecs::testing::VideoStream& s, bool check_psnr, bool display_from_decode)
      : d_(d), s_(s), check_psnr_(check_psnr), display_from_decode_(display_from_decode),
        times_(s.packets.size()) {}

  ~NvdecRun() {
    if (parser_) d_.cv->cuvidDestroyVideoParser(parser_);
    if (decoder_) d_.cv->cuvidDestroyDecoder(decoder_);
    if (dst_) d_.cu->cuMemFree(dst_);
    if (stream_) d_.cu->cuStreamDestroy(stream_);
  }

  // Feeds every packet; "" or why it failed.
  std::string run() {
    if (CUresult r = d_.cu->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
      return "cuStreamCreate: " + d_.err(r);
    CUVIDPARSERPARAMS pp{};
    pp.CodecType = cudaVideoCodec_H264;
    pp.ulMaxNumDecodeSurfaces = 1;  // the sequence callback returns the stream's minimum
    pp.ulClockRate = 0;
    pp.ulErrorThreshold = 0;
    pp.ulMaxDisplayDelay = 0;  // low latency: display as soon as decoded
    pp.pUserData = this;
    pp.pfnSequenceCallback = &NvdecRun::on_sequence;
    pp.pfnDecodePicture = &NvdecRun::on_decode;
    pp.pfnDisplayPicture = display_from_decode_ ? nullptr : &NvdecRun::on_display;
    if (CUresult r = d_.cv->cuvidCreateVideoParser(&parser_, &pp); r != CUDA_SUCCESS) {
      parser_ = nullptr;
      return "cuvidCreateVideoParser: " + d_.err(r);
    }
    for (size_t i = 0; i < s_.packets.size(); ++i) {
      current_ = int(i);
      CUVIDSOURCEDATAPACKET pkt{};
      pkt.flags = CUVID_PKT_ENDOFPICTURE | CUVID_PKT_TIMESTAMP;
      pkt.payload_size = s_.packets[i].size();
      pkt.payload = s_.packets[i].data();
      pkt.timestamp = CUvideotimestamp(i);
      const auto t0 = Clock::now();
      const CUresult r = d_.cv->cuvidParseVideoData(parser_, &pkt);
      times_[i].parse = ms_between(t0, Clock::now());
      if (!error_.empty()) return fmt("frame %zu: ", i) + error_;
      if (r != CUDA_SUCCESS) return fmt("frame %zu: cuvidParseVideoData: ", i) + d_.err(r);
    }
    // End of stream: whatever the parser still holds is displayed now (counted as delayed).
    current_ = int(s_.packets.size());
    CUVIDSOURCEDATAPACKET eos{};
    eos.flags = CUVID_PKT_ENDOFSTREAM;
    if (CUresult r = d_.cv->cuvidParseVideoData(parser_, &eos); r != CUDA_SUCCESS)
      return "cuvidParseVideoData(end of stream): " + d_.err(r);
    return error_;
  }

  const std::vector<FrameTimes>& times() const { return times_; }
  const DecodeStatusCounts& status() const { return status_; }
  int displayed() const { return displayed_; }
  double psnr() const { return psnr_; }
  std::string describe() const { return describe_; }

 private:
  static int CUDAAPI on_sequence(void* user, CUVIDEOFORMAT* f) {
    auto* self = static_cast<NvdecRun*>(user);
    return self->sequence(f);
  }
  static int CUDAAPI on_decode(void* user, CUVIDPICPARAMS* p) {
    auto* self = static_cast<NvdecRun*>(user);
    return self->decode(p);
  }
  static int CUDAAPI on_display(void* user, CUVIDPARSERDISPINFO* di) {
    auto* self = static_cast<NvdecRun*>(user);
    return self->display(di);
  }

  int sequence(CUVIDEOFORMAT* f) {
    const int surfaces = std::max<int>(1, f->min_num_decode_surfaces);
    if (decoder_) {  // a repeated sequence header: the same size needs nothing new
      if (f->coded_width == coded_w_ && f->coded_height == coded_h_) return surfaces;
      error_ = "the stream changed size mid-stream (not handled by the probe)";
      return 0;
    }
    if (f->codec != cudaVideoCodec_H264 || f->chroma_format != cudaVideoChromaFormat_420 ||
        f->bit_depth_luma_minus8 != 0) {
      error_ = fmt("unexpected stream: codec %d, chroma format %d, bit depth %d", int(f->codec),
                   int(f->chroma_format), 8 + f->bit_depth_luma_minus8);
      return 0;
    }
    if (d_.cv->cuvidGetDecoderCaps) {
      CUVIDDECODECAPS caps{};
      caps.eCodecType = f->codec;
      caps.eChromaFormat = f->chroma_format;
      caps.nBitDepthMinus8 = f->bit_depth_luma_minus8;
      if (CUresult r = d_.cv->cuvidGetDecoderCaps(&caps); r != CUDA_SUCCESS) {
        error_ = "cuvidGetDecoderCaps: " + d_.err(r);
        return 0;
      }
      if (!caps.bIsSupported || f->coded_width > caps.nMaxWidth || f->coded_height > caps.nMaxHeight) {
        error_ = fmt("NVDEC does not support h264 4:2:0 8-bit at %ux%u (supported %d, max %ux%u)",
                     f->coded_width, f->coded_height, int(caps.bIsSupported), caps.nMaxWidth,
                     caps.nMaxHeight);
        return 0;
      }
      nvdecs_ = caps.nNumNVDECs;
    }
    coded_w_ = f->coded_width;
    coded_h_ = f->coded_height;
    left_ = f->display_area.left;
    top_ = f->display_area.top;
    width_ = f->display_area.right - f->display_area.left;
    height_ = f->display_area.bottom - f->display_area.top;
    CUVIDDECODECREATEINFO ci{};
    ci.ulWidth = f->coded_width;
    ci.ulHeight = f->coded_height;
    ci.ulNumDecodeSurfaces = surfaces;
    ci.CodecType = f->codec;
    ci.ChromaFormat = f->chroma_format;
    ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
    ci.bitDepthMinus8 = f->bit_depth_luma_minus8;
    ci.ulIntraDecodeOnly = 0;
    ci.ulMaxWidth = f->coded_width;
    ci.ulMaxHeight = f->coded_height;
    // display_area stays zero (the whole coded frame): a display area smaller than the target
    // would be scaled into it (1080 rows stretched over 1088). NvDecoder does the same when it
    // neither crops nor scales; the copy cuts the display area out.
    ci.OutputFormat = cudaVideoSurfaceFormat_NV12;
    ci.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
    // The output surface is the coded size.
    ci.ulTargetWidth = f->coded_width;
    ci.ulTargetHeight = f->coded_height;
    ci.ulNumOutputSurfaces = 2;
    ci.vidLock = nullptr;
    surface_h_ = int(ci.ulTargetHeight);
    if (CUresult r = d_.cv->cuvidCreateDecoder(&decoder_, &ci); r != CUDA_SUCCESS) {
      decoder_ = nullptr;
      error_ = "cuvidCreateDecoder: " + d_.err(r);
      return 0;
    }
    // The copy's destination: NV12 of the display size, pitched.
    const size_t rows = size_t(height_) + size_t(height_ + 1) / 2;
    if (CUresult r = d_.cu->cuMemAllocPitch(&dst_, &dst_pitch_, size_t(width_), rows, 16); r != CUDA_SUCCESS) {
      dst_ = 0;
      error_ = "cuMemAllocPitch: " + d_.err(r);
      return 0;
    }
    describe_ = fmt("coded %ux%u, display %dx%d, %d decode surfaces, %d NVDECs", coded_w_, coded_h_,
                    width_, height_, surfaces, nvdecs_);
    return surfaces;  // > 1 overrides the parser's ulMaxNumDecodeSurfaces
  }

  int decode(CUVIDPICPARAMS* p) {
    if (!decoder_) {
      error_ = "a picture to decode before the decoder exists";
      return 0;
    }
    const auto t0 = Clock::now();
    const CUresult r = d_.cv->cuvidDecodePicture(decoder_, p);
    const double ms = ms_between(t0, Clock::now());
    if (r != CUDA_SUCCESS) {
      error_ = "cuvidDecodePicture: " + d_.err(r);
      return 0;
    }
    if (current_ >= 0 && current_ < int(times_.size())) {
      auto& t = times_[size_t(current_)];
      t.decode = t.decode < 0 ? ms : t.decode + ms;  // more than one picture per packet: summed
      t.intra = p->intra_pic_flag != 0;
    }
    pic_frame_[p->CurrPicIdx] = current_;
    if (display_from_decode_ && (!p->field_pic_flag || p->second_field)) {
      CUVIDPARSERDISPINFO di{};
      di.picture_index = p->CurrPicIdx;
      di.progressive_frame = !p->field_pic_flag;
      di.top_field_first = p->bottom_field_flag ^ 1;
      return display(&di);
    }
    return 1;
  }

  int display(CUVIDPARSERDISPINFO* di) {
    if (!di) return 1;  // end-of-stream notification
    const auto it = pic_frame_.find(di->picture_index);
    const int frame = it == pic_frame_.end() ? -1 : it->second;
    CUVIDGETDECODESTATUS st{};
    if (d_.cv->cuvidGetDecodeStatus(decoder_, di->picture_index, &st) != CUDA_SUCCESS)
      ++status_.before_call_failed;
    else if (st.decodeStatus == cuvidDecodeStatus_InProgress)
      ++status_.before_in_progress;
    else if (st.decodeStatus == cuvidDecodeStatus_Success)
      ++status_.before_success;
    else
      ++status_.before_other;
    CUVIDPROCPARAMS pp{};
    pp.progressive_frame = di->progressive_frame;
    pp.second_field = di->repeat_first_field + 1;
    pp.top_field_first = di->top_field_first;
    pp.unpaired_field = di->repeat_first_field < 0;
    pp.output_stream = stream_;
    unsigned long long src = 0;
    unsigned int pitch = 0;
    const auto t0 = Clock::now();
    CUresult r = d_.cv->cuvidMapVideoFrame(decoder_, di->picture_index, &src, &pitch, &pp);
    const auto t1 = Clock::now();
    if (r != CUDA_SUCCESS) {
      error_ = "cuvidMapVideoFrame64: " + d_.err(r);
      return 0;
    }
    CUDA_MEMCPY2D m{};
    m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m.srcDevice = src + size_t(top_) * pitch + size_t(left_);
    m.srcPitch = pitch;
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = dst_;
    m.dstPitch = dst_pitch_;
    m.WidthInBytes = size_t(width_);
    m.Height = size_t(height_);
    r = d_.cu->cuMemcpy2DAsync(&m, stream_);
    if (r == CUDA_SUCCESS) {
      // NV12's chroma plane follows the luma plane of the surface's height, rounded up to even.
      m.srcDevice = src + size_t(pitch) * size_t((surface_h_ + 1) & ~1) + size_t(top_ / 2) * pitch +
                    size_t(left_ & ~1);
      m.dstDevice = dst_ + dst_pitch_ * size_t(height_);
      m.Height = size_t(height_ + 1) / 2;
      r = d_.cu->cuMemcpy2DAsync(&m, stream_);
    }
    if (r == CUDA_SUCCESS) r = d_.cu->cuStreamSynchronize(stream_);
    const auto t2 = Clock::now();
    if (r != CUDA_SUCCESS) {
      d_.cv->cuvidUnmapVideoFrame(decoder_, src);
      error_ = "copy of the mapped frame: " + d_.err(r);
      return 0;
    }
    CUVIDGETDECODESTATUS after{};
    if (d_.cv->cuvidGetDecodeStatus(decoder_, di->picture_index, &after) != CUDA_SUCCESS)
      ++status_.after_call_failed;
    else if (after.decodeStatus == cuvidDecodeStatus_Success)
      ++status_.after_success;
    else
      ++status_.after_not_success;
    if (CUresult u = d_.cv->cuvidUnmapVideoFrame(decoder_, src); u != CUDA_SUCCESS) {
      error_ = "cuvidUnmapVideoFrame64: " + d_.err(u);
      return 0;
    }
    ++displayed_;
    if (frame >= 0 && frame < int(times_.size())) {
      auto& t = times_[size_t(frame)];
      t.map = ms_between(t0, t1);
      t.map_copy = ms_between(t0, t2);
      t.displayed_in = current_;
      // The last frame's luma against its source (outside the timed part).
      if (check_psnr_ && frame + 1 == int(times_.size())) {
        std::vector<uint8_t> host(dst_pitch_ * size_t(height_));
        CUDA_MEMCPY2D h{};
        h.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        h.srcDevice = dst_;
        h.srcPitch = dst_pitch_;
        h.dstMemoryType = CU_MEMORYTYPE_HOST;
        h.dstHost = host.data();
        h.dstPitch = dst_pitch_;
        h.WidthInBytes = size_t(width_);
        h.Height = size_t(height_);
        if (d_.cu->cuMemcpy2D(&h) == CUDA_SUCCESS)
          psnr_ = luma_psnr_host(s_.sources[size_t(frame)], host, dst_pitch_);
      }
    }
    return 1;
  }

  Driver& d_;
  const codecs::testing::VideoStream& s_;
  bool check_psnr_;
  bool display_from_decode_;
  std::vector<FrameTimes> times_;
  DecodeStatusCounts status_;
  std::map<int, int> pic_frame_;  // decode surface index -> frame (packet) index
  CUvideoparser parser_ = nullptr;
  CUvideodecoder decoder_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr dst_ = 0;
  size_t dst_pitch_ = 0;
  unsigned coded_w_ = 0, coded_h_ = 0;
  int left_ = 0, top_ = 0, width_ = 0, height_ = 0, surface_h_ = 0, nvdecs_ = 0;
  int current_ = -1;
  int displayed_ = 0;
  double psnr_ = -1;
  std::string error_, describe_;
};

// ---------------------------------------------------------------------------------------------
// libavcodec route.

// libavutil/hwcontext_cuda.h's AVCUDADeviceContext, first two members (public, stable ABI since
// FFmpeg 4.x), spelled out as pixpath's video_decoder.cc does: that header includes CUDA's cuda.h.
struct CudaDeviceContextView {
  void* cuda_ctx;  // CUcontext
  void* stream;    // CUstream; null: the legacy default stream
};

std::string av_err(int e) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(e, buf, sizeof buf);
  return buf;
}

AVPixelFormat pick_cuda(AVCodecContext* /*c*/, const AVPixelFormat* fmts) {
  for (const AVPixelFormat* p = fmts; *p != AV_PIX_FMT_NONE; ++p)
    if (*p == AV_PIX_FMT_CUDA) return *p;
  return AV_PIX_FMT_NONE;  // no CUDA format offered: fail the decode rather than go to the CPU
}

struct AvTimes {
  std::vector<double> call, call_sync;  // per frame; -1 where no frame came out of that packet
  int frames_out = 0, same_call = 0;
  double psnr = -1;
};

// `shared`: libavcodec in the driver's primary context; else its own context.
std::string run_avcodec(Driver& d, const codecs::testing::VideoStream& s, bool shared, bool check_psnr,
                        AvTimes& out) {
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_H264);
  if (!codec) return "libavcodec has no h264 decoder";
  AVBufferRef* dev = nullptr;
  int r = 0;
  if (shared) {
    dev = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!dev) return "av_hwdevice_ctx_alloc(cuda) failed";
    auto* hw = reinterpret_cast<AVHWDeviceContext*>(dev->data);
    auto* view = static_cast<CudaDeviceContextView*>(hw->hwctx);
    view->cuda_ctx = d.ctx;
    view->stream = nullptr;
    r = av_hwdevice_ctx_init(dev);
    if (r < 0) {
      av_buffer_unref(&dev);
      return "av_hwdevice_ctx_init(cuda, our primary context): " + av_err(r);
    }
  } else {
    r = av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_CUDA, "0", nullptr, 0);
    if (r < 0) return "av_hwdevice_ctx_create(cuda, \"0\"): " + av_err(r);
  }
  auto av_ctx = static_cast<CUcontext>(
      static_cast<CudaDeviceContextView*>(reinterpret_cast<AVHWDeviceContext*>(dev->data)->hwctx)->cuda_ctx);
  AVCodecContext* c = avcodec_alloc_context3(codec);
  AVFrame* frame = av_frame_alloc();
  AVFrame* sw = av_frame_alloc();
  AVPacket* pkt = av_packet_alloc();
  std::string why;
  auto cleanup = [&] {
    av_packet_free(&pkt);
    av_frame_free(&sw);
    av_frame_free(&frame);
    avcodec_free_context(&c);
    av_buffer_unref(&dev);
  };
  if (!c || !frame || !sw || !pkt) {
    cleanup();
    return "libavcodec allocation failed";
  }
  c->hw_device_ctx = av_buffer_ref(dev);
  c->get_format = &pick_cuda;
  c->flags |= AV_CODEC_FLAG_LOW_DELAY;
  c->thread_count = 1;
  c->thread_type = FF_THREAD_SLICE;
  if (r = avcodec_open2(c, codec, nullptr); r < 0) {
    cleanup();
    return "avcodec_open2: " + av_err(r);
  }
  out.call.assign(s.packets.size(), -1);
  out.call_sync.assign(s.packets.size(), -1);
  for (size_t i = 0; i < s.packets.size() && why.empty(); ++i) {
    av_packet_unref(pkt);
    if (av_new_packet(pkt, int(s.packets[i].size())) < 0) {
      why = "av_new_packet failed";
      break;
    }
    std::memcpy(pkt->data, s.packets[i].data(), s.packets[i].size());
    pkt->pts = int64_t(i);
    const auto t0 = Clock::now();
    r = avcodec_send_packet(c, pkt);
    if (r < 0) {
      why = fmt("frame %zu: avcodec_send_packet: ", i) + av_err(r);
      break;
    }
    r = avcodec_receive_frame(c, frame);
    const auto t1 = Clock::now();
    if (r == AVERROR(EAGAIN)) continue;  // delayed: counted by frames_out
    if (r < 0) {
      why = fmt("frame %zu: avcodec_receive_frame: ", i) + av_err(r);
      break;
    }
    if (frame->format != AV_PIX_FMT_CUDA) {
      why = "libavcodec did not decode on the GPU (frame format is not CUDA)";
      break;
    }
    // The legacy stream libavcodec copies on, in libavcodec's context (av-own: not ours).
    CUresult cr = CUDA_SUCCESS;
    if (av_ctx != d.ctx) cr = d.cu->cuCtxPushCurrent(av_ctx);
    if (cr == CUDA_SUCCESS) {
      cr = d.cu->cuStreamSynchronize(nullptr);
      if (av_ctx != d.ctx) {
        CUcontext popped = nullptr;
        d.cu->cuCtxPopCurrent(&popped);
      }
    }
    const auto t2 = Clock::now();
    if (cr != CUDA_SUCCESS) {
      why = "cuStreamSynchronize: " + d.err(cr);
      break;
    }
    ++out.frames_out;
    if (frame->pts == int64_t(i)) ++out.same_call;
    out.call[i] = ms_between(t0, t1);
    out.call_sync[i] = ms_between(t0, t2);
    if (check_psnr && i + 1 == s.packets.size()) {
      av_frame_unref(sw);
      if (av_hwframe_transfer_data(sw, frame, 0) == 0 && sw->data[0]) {
        const size_t pitch = size_t(sw->linesize[0]);
        std::vector<uint8_t> host(pitch * size_t(sw->height));
        for (int y = 0; y < sw->height; ++y)
          std::memcpy(host.data() + size_t(y) * pitch, sw->data[0] + size_t(y) * pitch, pitch);
        out.psnr = luma_psnr_host(s.sources[i], host, pitch);
      }
    }
    av_frame_unref(frame);
  }
  cleanup();
  return why;
}

// ---------------------------------------------------------------------------------------------

struct Options {
  int frames = 120;
  int passes = 1;
  std::vector<std::pair<int, int>> sizes = {{1920, 1080}, {3840, 2160}};
  bool nvdec = true, av_shared = true, av_own = true;
  bool display_from_decode = false;
  unsigned sched = kSchedAuto;
  std::string sched_name = "auto";
};

void usage(FILE* to) {
  std::fprintf(to,
               "usage: nvdec_probe [--frames N] [--sizes WxH[,WxH...]] [--passes N]\n"
               "                   [--routes nvdec,av-shared,av-own] [--sched auto|spin|yield|blocking]\n"
               "                   [--display-from-decode]\n"
               "  Decodes h264 P-frames with NVDEC driven directly through libnvcuvid (parser, decoder,\n"
               "  map, copy) and through libavcodec's CUDA hwaccel, on the same packets; prints p50/p90\n"
               "  of each step per size (P-frames only) and a JSON line (prefix \"json: \").\n"
               "  --frames N   frames per stream (default 120; frame 0 is the IDR, left out)\n"
               "  --sizes      default 1920x1080,3840x2160\n"
               "  --passes N   runs of each route per size; with N > 1 the first is a warm-up, left out\n"
               "  --routes     which routes (default all three): nvdec = libnvcuvid directly,\n"
               "               av-shared = libavcodec in our primary context (as pixpath),\n"
               "               av-own = libavcodec's own context (av_hwdevice_ctx_create)\n"
               "  --sched      the primary context's scheduling flag (default auto: CUDA's choice)\n"
               "  --display-from-decode  nvdec maps each picture in the decode callback (no display\n"
               "               callback), in case the parser holds frames back\n"
               "  Needs the NVIDIA driver (libcuda.so.1, libnvcuvid.so.1) and a CUDA device; exits 1\n"
               "  with the reason when either is missing.\n");
}

bool parse_options(int argc, char** argv, Options& o, int& exit_code) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      exit_code = 0;
      return false;
    } else if (a == "--frames") {
      o.frames = std::atoi(next().c_str());
      if (o.frames < 2 || o.frames > 100000) {
        std::fprintf(stderr, "nvdec_probe: --frames wants 2..100000\n");
        exit_code = 2;
        return false;
      }
    } else if (a == "--passes") {
      o.passes = std::atoi(next().c_str());
      if (o.passes < 1 || o.passes > 100) {
        std::fprintf(stderr, "nvdec_probe: --passes wants 1..100\n");
        exit_code = 2;
        return false;
      }
    } else if (a == "--sizes") {
      o.sizes.clear();
      std::string v = next();
      size_t pos = 0;
      while (pos <= v.size()) {
        const size_t comma = std::min(v.find(',', pos), v.size());
        const std::string item = v.substr(pos, comma - pos);
        int w = 0, h = 0;
        char tail = 0;
        if (std::sscanf(item.c_str(), "%dx%d%c", &w, &h, &tail) != 2 || w < 16 || h < 16 || w > 8192 ||
            h > 8192 || (w & 1) || (h & 1)) {
          std::fprintf(stderr, "nvdec_probe: --sizes: '%s' is not an even WxH of 16..8192\n", item.c_str());
          exit_code = 2;
          return false;
        }
        o.sizes.emplace_back(w, h);
        pos = comma + 1;
      }
    } else if (a == "--routes") {
      o.nvdec = o.av_shared = o.av_own = false;
      std::string v = next();
      size_t pos = 0;
      while (pos <= v.size()) {
        const size_t comma = std::min(v.find(',', pos), v.size());
        const std::string item = v.substr(pos, comma - pos);
        if (item == "nvdec") o.nvdec = true;
        else if (item == "av-shared") o.av_shared = true;
        else if (item == "av-own") o.av_own = true;
        else {
          std::fprintf(stderr, "nvdec_probe: --routes: unknown route '%s' (nvdec, av-shared, av-own)\n",
                       item.c_str());
          exit_code = 2;
          return false;
        }
        pos = comma + 1;
      }
    } else if (a == "--display-from-decode") {
      o.display_from_decode = true;
    } else if (a == "--sched") {
      o.sched_name = next();
      if (o.sched_name == "auto") o.sched = kSchedAuto;
      else if (o.sched_name == "spin") o.sched = kSchedSpin;
      else if (o.sched_name == "yield") o.sched = kSchedYield;
      else if (o.sched_name == "blocking") o.sched = kSchedBlocking;
      else {
        std::fprintf(stderr, "nvdec_probe: --sched wants auto, spin, yield or blocking\n");
        exit_code = 2;
        return false;
      }
    } else {
      std::fprintf(stderr, "nvdec_probe: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      exit_code = 2;
      return false;
    }
  }
  return true;
}

void print_pct(const char* label, const Pct& p) {
  std::printf("    %-34s p50 %7.3f ms  p90 %7.3f ms  (n=%zu)\n", label, p.p50, p.p90, p.n);
}

std::string json_pct(const char* key, const Pct& p) {
  return fmt("\"%s\":{\"p50\":%.4f,\"p90\":%.4f,\"n\":%zu}", key, p.p50, p.p90, p.n);
}

// Returns false when a route failed.
bool probe_size(Driver& d, const Options& o, int w, int h) {
  std::printf("== %dx%d h264, %d frames (encoding...)\n", w, h, o.frames);
  std::fflush(stdout);
  auto s = codecs::testing::encode_video("h264", w, h, o.frames);
  if (!s.ok()) {
    std::printf("  encode failed: %s\n", s.error().message().c_str());
    return false;
  }
  size_t pbytes = 0;
  for (size_t i = 1; i < s->packets.size(); ++i) pbytes += s->packets[i].size();
  const size_t pmean = pbytes / std::max<size_t>(1, s->packets.size() - 1);
  std::printf("  IDR %zu bytes, P-frames mean %zu bytes\n", s->packets[0].size(), pmean);
  bool ok = true;
  const int first_pass = o.passes > 1 ? 1 : 0;
  double nvdec_p50 = -1;  // (a), for the ratio line

  if (o.nvdec) {
    std::vector<double> parse, decode, map, map_copy, overhead, frame0;
    int fed = 0, displayed = 0, same_call = 0, delayed = 0, never = 0, max_delay = 0;
    DecodeStatusCounts st{};
    double psnr = -1;
    std::string describe, failure;
    for (int pass = 0; pass < o.passes && failure.empty(); ++pass) {
      NvdecRun run(d, *s, pass + 1 == o.passes, o.display_from_decode);
      failure = run.run();
      if (!failure.empty()) break;
      describe = run.describe();
      const auto& t = run.times();
      frame0.push_back(t[0].parse);
      std::vector<double> pass_parse;
      for (size_t i = 0; i < t.size(); ++i) {
        if (pass >= first_pass) {
          ++fed;
          if (t[i].displayed_in == int(i)) ++same_call;
          else if (t[i].displayed_in > int(i)) ++delayed;
          else ++never;
          if (t[i].displayed_in >= 0) max_delay = std::max(max_delay, t[i].displayed_in - int(i));
        }
        if (i == 0) continue;
        pass_parse.push_back(t[i].parse);
        if (pass < first_pass) continue;
        parse.push_back(t[i].parse);
        if (t[i].decode >= 0) decode.push_back(t[i].decode);
        if (t[i].map >= 0) map.push_back(t[i].map);
        if (t[i].map_copy >= 0) map_copy.push_back(t[i].map_copy);
        if (t[i].displayed_in == int(i) && t[i].decode >= 0)
          overhead.push_back(t[i].parse - t[i].decode - t[i].map_copy);
      }
      if (pass >= first_pass) {
        displayed += run.displayed();
        const auto& c = run.status();
        st.before_in_progress += c.before_in_progress;
        st.before_success += c.before_success;
        st.before_other += c.before_other;
        st.before_call_failed += c.before_call_failed;
        st.after_success += c.after_success;
        st.after_not_success += c.after_not_success;
        st.after_call_failed += c.after_call_failed;
      }
      if (o.passes > 1)
        std::printf("  nvdec pass %d: parse p50 %.3f ms%s\n", pass + 1, pct(pass_parse).p50,
                    pass < first_pass ? " (warm-up, left out)" : "");
      psnr = run.psnr();
    }
    if (!failure.empty()) {
      std::printf("  nvdec (libnvcuvid directly): FAILED: %s\n", failure.c_str());
      add_json(fmt("{\"size\":\"%dx%d\",\"route\":\"nvdec\",\"error\":", w, h) + json_str(failure) + "}");
      ok = false;
    } else {
      std::printf("  nvdec (libnvcuvid directly): %s\n", describe.c_str());
      std::printf("    frames fed %d, displayed %d: in the same parse call %d, later %d (max delay %d "
                  "packets), never %d\n",
                  fed, displayed, same_call, delayed, max_delay, never);
      if (same_call != fed)
        std::printf("    NOTE: some frames were displayed only after a later packet: the parse time of a "
                    "packet then holds an earlier frame's map+copy\n");
      std::printf("    cuvidGetDecodeStatus before map: in progress %d, success %d, other %d, call failed %d; "
                  "after copy: success %d, not success %d, call failed %d\n",
                  st.before_in_progress, st.before_success, st.before_other, st.before_call_failed,
                  st.after_success, st.after_not_success, st.after_call_failed);
      std::printf("    frame 0 (IDR, with the decoder's creation) parse: %.3f ms (first pass)\n",
                  frame0.empty() ? -1.0 : frame0[0]);
      const Pct pp = pct(parse), pd = pct(decode), pm = pct(map), pmc = pct(map_copy), po = pct(overhead);
      nvdec_p50 = pp.p50;
      print_pct("(a) cuvidParseVideoData (all)", pp);
      print_pct("(b) cuvidDecodePicture", pd);
      print_pct("(c) cuvidMapVideoFrame64", pm);
      print_pct("(d) map + 2 plane copies + sync", pmc);
      print_pct("(a)-(b)-(d) parser + callbacks", po);
      std::printf("    last frame luma PSNR vs source: %.2f dB\n", psnr);
      add_json(fmt("{\"size\":\"%dx%d\",\"route\":\"nvdec\",\"p_bytes\":%zu,\"fed\":%d,\"displayed\":%d,"
                   "\"same_call\":%d,\"delayed\":%d,\"max_delay\":%d,\"status_in_progress_before_map\":%d,"
                   "\"status_after_not_success\":%d,\"psnr\":%.2f,",
                   w, h, pmean, fed, displayed, same_call, delayed, max_delay, st.before_in_progress,
                   st.after_not_success + st.after_call_failed, std::isinf(psnr) ? 999.0 : psnr) +
               json_pct("parse", pp) + "," + json_pct("decode", pd) + "," + json_pct("map", pm) + "," +
               json_pct("map_copy_sync", pmc) + "," + json_pct("parser_overhead", po) + "}");
    }
  }

  for (int variant = 0; variant < 2; ++variant) {
    const bool shared = variant == 0;
    if ((shared && !o.av_shared) || (!shared && !o.av_own)) continue;
    const char* name = shared ? "av-shared" : "av-own";
    std::vector<double> call, call_sync;
    int fed = 0, out = 0, same = 0;
    double psnr = -1;
    std::string failure;
    for (int pass = 0; pass < o.passes && failure.empty(); ++pass) {
      AvTimes t;
      failure = run_avcodec(d, *s, shared, pass + 1 == o.passes, t);
      if (!failure.empty()) break;
      std::vector<double> pass_call;
      for (size_t i = 1; i < t.call.size(); ++i)
        if (t.call[i] >= 0) pass_call.push_back(t.call[i]);
      if (o.passes > 1)
        std::printf("  %s pass %d: call p50 %.3f ms%s\n", name, pass + 1, pct(pass_call).p50,
                    pass < first_pass ? " (warm-up, left out)" : "");
      if (pass < first_pass) continue;
      fed += int(t.call.size());
      out += t.frames_out;
      same += t.same_call;
      for (size_t i = 1; i < t.call.size(); ++i) {
        if (t.call[i] >= 0) call.push_back(t.call[i]);
        if (t.call_sync[i] >= 0) call_sync.push_back(t.call_sync[i]);
      }
      psnr = t.psnr;
    }
    const char* what = shared ? "libavcodec CUDA hwaccel, our primary context (as pixpath)"
                              : "libavcodec CUDA hwaccel, its own context (av_hwdevice_ctx_create)";
    if (!failure.empty()) {
      std::printf("  %s (%s): FAILED: %s\n", name, what, failure.c_str());
      add_json(fmt("{\"size\":\"%dx%d\",\"route\":\"%s\",\"error\":", w, h, name) + json_str(failure) + "}");
      ok = false;
      continue;
    }
    std::printf("  %s (%s)\n", name, what);
    std::printf("    frames fed %d, out %d, out of the same packet's call %d\n", fed, out, same);
    const Pct pc = pct(call), pcs = pct(call_sync);
    print_pct("send_packet + receive_frame", pc);
    print_pct("send + receive + stream sync", pcs);
    if (nvdec_p50 > 0 && pc.p50 > 0)
      std::printf("    ratio: nvdec (a) p50 / this call p50 = %.3f / %.3f = %.2f\n", nvdec_p50, pc.p50,
                  nvdec_p50 / pc.p50);
    std::printf("    last frame luma PSNR vs source: %.2f dB\n", psnr);
    add_json(fmt("{\"size\":\"%dx%d\",\"route\":\"%s\",\"fed\":%d,\"out\":%d,\"same_call\":%d,\"psnr\":%.2f,",
                 w, h, name, fed, out, same, std::isinf(psnr) ? 999.0 : psnr) +
             json_pct("call", pc) + "," + json_pct("call_sync", pcs) + "}");
  }
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int exit_code = 0;
  if (!parse_options(argc, argv, o, exit_code)) return exit_code;
  av_log_set_level(AV_LOG_WARNING);  // libx264's per-stream statistics are info
  Driver d;
  if (const std::string why = open_driver(d, o.sched); !why.empty()) {
    std::printf("nvdec_probe: cannot run: %s\n", why.c_str());
    return 1;
  }
  std::printf("device 0: %s; primary context sched %s; %d frames per stream, %d pass(es); nvdec maps in the %s "
              "callback\n",
              d.name.c_str(), o.sched_name.c_str(), o.frames, o.passes,
              o.display_from_decode ? "decode" : "display");
  std::printf("libavcodec %s\n", av_version_info());
  bool ok = true;
  for (const auto& [w, h] : o.sizes) ok = probe_size(d, o, w, h) && ok;
  std::printf("json: [%s]\n", json_items.text().c_str());
  return ok ? 0 : 1;
}
