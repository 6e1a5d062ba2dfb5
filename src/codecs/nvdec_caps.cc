// NVDEC's own limits per coding (video_decoder.h, nvdec_caps): the driver's libcuda and
// libnvcuvid are opened at run time through ffnvcodec's loader header (Debian
// libffmpeg-nvenc-dev), so a build needs neither the CUDA toolkit nor the driver, and a machine
// without them gets the reason. cuvidGetDecoderCaps runs in a context of its own, made and
// destroyed here, so the device's primary context (libavcodec's and the CUDA module's) is left
// alone.
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "pixpath/codecs/video_decoder.h"

#include "nvdec_driver.h"

#ifdef PIXPATH_HAVE_FFNVCODEC
namespace {
std::string g_loader_log;  // what ffnvcodec's loader said (written inside driver()'s call_once only)
void loader_log(void* /*logctx*/, const char* fmt, ...) {
  char line[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  g_loader_log += line;
}
}  // namespace
#define FFNV_LOG_FUNC(logctx, msg, ...) loader_log((logctx), (msg), __VA_ARGS__)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
#include <ffnvcodec/dynlink_loader.h>
#endif

namespace pixpath::codecs {

#ifdef PIXPATH_HAVE_FFNVCODEC

const nvdec::Driver& nvdec::driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    auto why = [](const char* what) {
      std::string s = what;
      while (!g_loader_log.empty() && (g_loader_log.back() == '\n' || g_loader_log.back() == ' '))
        g_loader_log.pop_back();
      if (!g_loader_log.empty()) s += " (" + g_loader_log + ")";
      g_loader_log.clear();
      return s;
    };
    if (cuda_load_functions(&d.cu, nullptr) < 0 || !d.cu) {
      d.cu = nullptr;
      d.error = why("the NVIDIA driver's libcuda.so.1 could not be loaded");
      return;
    }
    if (cuvid_load_functions(&d.cv, nullptr) < 0 || !d.cv) {
      d.cv = nullptr;
      d.error = why("the NVIDIA driver's libnvcuvid.so.1 (NVDEC) could not be loaded");
      return;
    }
    if (!d.cv->cuvidGetDecoderCaps) d.error = "this libnvcuvid has no cuvidGetDecoderCaps";
  });
  return d;
}

namespace {

using nvdec::Driver;

std::string cuda_error(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cu->cuGetErrorString) d.cu->cuGetErrorString(r, &s);
  return (s ? std::string(s) : std::string("CUDA error")) + " (" + std::to_string(int(r)) + ")";
}

bool codec_of(std::string_view coding, cudaVideoCodec& out) {
  if (coding == "h264") out = cudaVideoCodec_H264;
  else if (coding == "vp8") out = cudaVideoCodec_VP8;
  else if (coding == "vp9") out = cudaVideoCodec_VP9;
  else return false;
  return true;
}

}  // namespace

Result<NvdecCaps> nvdec_caps(std::string_view coding, int device) {
  const std::string subject(coding);
  cudaVideoCodec codec;
  if (!codec_of(coding, codec))
    return Error(ErrorCode::Unsupported, subject, "nvdec caps",
                 "'" + subject + "' is not a video coding NVDEC is asked for");
  const Driver& d = nvdec::driver();
  if (!d.error.empty()) return Error(ErrorCode::Unavailable, subject, "nvdec caps", d.error);
  auto fail = [&](const char* call, CUresult r) {
    return Error(ErrorCode::Unavailable, subject, "nvdec caps", std::string(call) + ": " + cuda_error(d, r));
  };
  if (CUresult r = d.cu->cuInit(0); r != CUDA_SUCCESS) return fail("cuInit", r);
  CUdevice dev = 0;
  if (CUresult r = d.cu->cuDeviceGet(&dev, device); r != CUDA_SUCCESS) return fail("cuDeviceGet", r);
  CUcontext ctx = nullptr;
  if (CUresult r = d.cu->cuCtxCreate(&ctx, 0, dev); r != CUDA_SUCCESS) return fail("cuCtxCreate", r);
  NvdecCaps caps;
  std::optional<Error> error;
  // 8-bit 4:2:0 (every coding's YUV420P) and 4:4:4 (YUV444P, where the coding has it).
  for (auto [chroma, csc] : {std::pair{cudaVideoChromaFormat_420, "YUV420P"},
                             std::pair{cudaVideoChromaFormat_444, "YUV444P"}}) {
    if (chroma == cudaVideoChromaFormat_444 && codec == cudaVideoCodec_VP8) continue;
    CUVIDDECODECAPS c{};
    c.eCodecType = codec;
    c.eChromaFormat = chroma;
    c.nBitDepthMinus8 = 0;
    if (CUresult r = d.cv->cuvidGetDecoderCaps(&c); r != CUDA_SUCCESS) {
      error = fail("cuvidGetDecoderCaps", r);
      break;
    }
    if (!c.bIsSupported) continue;
    caps.csc_modes.push_back(csc);
    if (caps.max_width == 0) {  // the 4:2:0 figures (4:4:4's are the same or smaller)
      caps.max_width = int(c.nMaxWidth);
      caps.max_height = int(c.nMaxHeight);
      caps.min_width = int(c.nMinWidth);
      caps.min_height = int(c.nMinHeight);
      caps.engines = int(c.nNumNVDECs);
    }
  }
  CUcontext popped = nullptr;
  d.cu->cuCtxPopCurrent(&popped);
  d.cu->cuCtxDestroy(ctx);
  if (error) return *error;
  return caps;
}

#else

Result<NvdecCaps> nvdec_caps(std::string_view coding, int /*device*/) {
  return Error(ErrorCode::Unavailable, std::string(coding), "nvdec caps",
               "built without ffnvcodec's headers (Debian libffmpeg-nvenc-dev): NVDEC's limits "
               "are not asked");
}

#endif

}  // namespace pixpath::codecs
