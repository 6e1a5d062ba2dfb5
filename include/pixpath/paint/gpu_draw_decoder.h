// GpuDrawDecoder: the GPU JPEG decoder as the paint engine uses it. The paint area owns this
// interface; the GPU module (include/pixpath/cuda/gpu_jpeg.h, a higher area) implements it, and
// whoever puts a program together (the client, the tools) hands the engine a factory for one.
// So paint never includes CUDA or the GPU module, and a program without the GPU module simply
// has no GPU route (PaintEngineConfig::gpu_factory left empty).
//
// Ownership and threading are those of cuda::GpuJpegDecoder (gpu_jpeg.h): every method may be
// called from any thread, except copy_to_textures(), forget_texture() and prepare_texture(),
// which need the GL context that owns the textures to be current on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/codecs/jpeg_tables.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::paint {

// Which nvJPEG backend decodes one picture. Auto: baseline colour pictures to the hardware JPEG
// engines where the GPU has them, the rest to HYBRID below 1.5 Mpixel and GPU_HYBRID above.
// Hybrid / GpuHybrid force the decoupled API; Hardware = Auto.
enum class GpuBackend { Auto, Hybrid, GpuHybrid, Hardware };
inline std::string_view to_string(GpuBackend backend) {
  switch (backend) {
    case GpuBackend::Auto: return "auto";
    case GpuBackend::Hybrid: return "hybrid";
    case GpuBackend::GpuHybrid: return "gpu_hybrid";
    case GpuBackend::Hardware: return "hardware";
  }
  return "?";
}

struct GpuDecodeParams {
  // Expected size (the packet's w x h); 0 = take it from the stream; a mismatch fails.
  int width = 0, height = 0;
  // jpega: byte offset of the grayscale alpha JPEG; the colour JPEG is data[0, alpha_offset).
  std::optional<int64_t> alpha_offset;
  GpuBackend backend = GpuBackend::Auto;
  codecs::DecodeLimits limits;
};

// A region of an immutable RGBA8 GL texture (glTexStorage2D, GL_RGBA8). The picture's row 0
// lands on texture row y, as glTexSubImage2D(x, y, ...) would put it.
struct GlTextureRegion {
  uint32_t texture = 0;  // GL texture name, in the GL context current on the calling thread
  int texture_width = 0, texture_height = 0;
  int x = 0, y = 0;
};

struct GpuDecodeJob {
  std::span<const uint8_t> data;
  GpuDecodeParams params;
  // Where the decoder appends the picture's decode warnings (Severity::Warning: damaged data
  // that still decoded, as decode_to_host() returns them in DecodeResult::warnings); null: the
  // caller does not want them. Only a decoder that decodes the entropy-coded data itself can
  // tell (nvJPEG reports none: docs/exactness.md); the paint engine counts them as it counts
  // the CPU decoders' warnings.
  std::vector<Error>* warnings = nullptr;
};

// Completion of queued GPU work (a CUDA event). Lifetime: independent of the decoder that made
// it. Any thread.
class GpuFence {
 public:
  virtual ~GpuFence() = default;
  // Non-blocking: true once the work is done (or failed; wait() then returns the error).
  virtual bool ready() const = 0;
  // Blocks the calling thread (sleeping, not spinning) until the work is done.
  virtual Result<void> wait() const = 0;
};

// One picture in CUDA memory (as decode_batch_to_device() makes it) and where it goes.
struct GpuCopyJob {
  const Picture* picture = nullptr;
  GlTextureRegion target;
};

class GpuDrawDecoder {
 public:
  virtual ~GpuDrawDecoder() = default;

  // RGBA in a new host picture; waits for the GPU.
  virtual Result<codecs::DecodeResult> decode_to_host(std::span<const uint8_t> data,
                                                      const GpuDecodeParams& params) const = 0;
  // Several pictures into CUDA memory (RGBA, MemoryKind::CudaDevice, each with its own sync
  // point): two or more baseline colour pictures go to the hardware JPEG engines as one batch
  // where the GPU has them, the rest one by one. One result per job, in order.
  virtual std::vector<Result<Picture>> decode_batch_to_device(
      std::span<const GpuDecodeJob> jobs) const = 0;
  // Copies pictures made by decode_batch_to_device() into texture regions: one map of every
  // distinct texture, a GPU-side wait for each picture's write, the copies, one unmap, and a
  // fence recorded after the unmap. No host wait. The pictures must stay alive until the fence
  // has signalled. On failure nothing was written that later GL work can see as complete.
  [[nodiscard]] virtual Result<std::shared_ptr<GpuFence>> copy_to_textures(
      std::span<const GpuCopyJob> jobs) const = 0;
  // Unregisters a texture from the GPU decoder before it is deleted or re-created. Unknown
  // names are ignored.
  virtual void forget_texture(uint32_t texture) const = 0;
  // Registers a texture ahead of its first write (optional: writes register on first use).
  [[nodiscard]] virtual Result<void> prepare_texture(const GlTextureRegion& texture) const = 0;
  // How many hardware JPEG engines a batch spreads over; 0 when there are none.
  virtual int hardware_engines() const = 0;
  // True when the pictures the route takes are decoded by a decoder that reports damaged
  // entropy-coded data as the CPU path does (pixpath's own GPU decoder: baseline only), so the
  // route must refuse what it does not take (gpu_exactness_refusal's own_decoder).
  virtual bool reports_damage() const { return false; }

  // Video (h264, vp8, vp9 decoded by NVDEC through codecs::VideoDecoder with
  // VideoStreamParams::gpu_device = cuda_device()).
  // The CUDA device this decoder works on (its primary context); -1: no video GPU route.
  virtual int cuda_device() const { return -1; }
  // Its CUcontext (the device's primary context), for VideoStreamParams::gpu_context.
  virtual const void* cuda_context() const { return nullptr; }
  // A video frame in CUDA memory (VideoFrame::on_gpu(): NV12, YUV420P or YUV444P) converted into
  // a new RGBA picture in CUDA memory (as decode_batch_to_device() makes them, for
  // copy_to_textures()), after a GPU-side wait for the frame's producer stream; no host wait.
  // The RGBA picture keeps the frame alive until it is released (which first waits for the
  // conversion). Errors name the coding, stage and reason.
  virtual Result<Picture> convert_video_frame(const codecs::VideoFrame& frame,
                                              std::string_view coding) const {
    (void)frame;
    return Error(ErrorCode::Unavailable, std::string(coding), "gpu video convert",
                 "this GPU decoder converts no video frames");
  }
};

// The GPU route's refusals, decided from the JPEG's headers before any decode (a bounded marker
// scan, codecs/jpeg_tables.h): nullopt when the GPU path gives the CPU path's pixels (within
// +-1 in every channel) for this stream, else the reason it is decoded on the CPU instead.
// Measured on the H200 (docs/exactness.md): the hardware JPEG engines decode baseline colour
// pictures exactly as libjpeg-turbo does at every quality 1-100; nvJPEG's decoupled backends
// (HYBRID, GPU_HYBRID) decode gray pictures within 1 but colour ones only within 3. So:
//   - a colour picture is taken only when it goes to the engines: baseline (SOF0), 4:4:4,
//     4:2:2 or 4:2:0, and `exact_engines` (the GPU has hardware JPEG engines and the request
//     leaves the backend to nvJPEG); progressive and extended-sequential colour pictures (the
//     engines decode cjpeg's 16-bit-table files wrongly, up to 236 levels off), other
//     samplings, and every colour picture on a GPU without engines are refused;
//   - gray pictures are taken (baseline, extended, progressive);
//   - what nvJPEG does not decode is refused: arithmetic coding, lossless, 12-bit samples,
//     other than 1 or 3 components (CMYK / YCCK);
//   - a stream that ends before its EOI marker is refused (truncated: nvJPEG decodes it
//     silently; the CPU decoder reports it).
// A stream the scan cannot read is not refused here: the decoder reports what is wrong with it.
// `data` is one JPEG (for jpega: the colour JPEG and the alpha JPEG are checked one by one).
// exactness = false (a caller that asked for a backend by name, GpuDecodeParams::backend
// Hybrid / GpuHybrid, for measurements) keeps only the last two kinds of refusal.
// own_decoder = true (GpuDrawDecoder::reports_damage(): pixpath's own GPU decoder, exact on
// every picture it takes, with or without engines) replaces the colour rules by its own: only
// baseline pictures, gray or 4:4:4 / 4:2:2 / 4:2:0, are taken; progressive and extended
// ones, gray too, go to the CPU, so that no damaged picture is decoded silently.
// Stateless; any thread.
std::optional<std::string> gpu_exactness_refusal(std::span<const uint8_t> data, bool exact_engines,
                                                 bool exactness = true, bool own_decoder = false);
// The same rules on a frame already read (`tables`: what scan_jpeg_tables gives, or the same
// fields from another parse of the headers: sof, precision, components and their sampling,
// has_eoi), for a caller that has parsed the picture and need not scan it again.
std::optional<std::string> gpu_exactness_refusal(const codecs::JpegTables& tables, bool exact_engines,
                                                 bool exactness = true, bool own_decoder = false);

// Makes the GPU decoder when the engine decides it needs one (in PaintEngine::create()). Fails
// with ErrorCode::Unavailable and a reason when no GPU decoder can be had on this machine.
using GpuDrawDecoderFactory = std::function<Result<std::shared_ptr<const GpuDrawDecoder>>()>;

}  // namespace pixpath::paint
