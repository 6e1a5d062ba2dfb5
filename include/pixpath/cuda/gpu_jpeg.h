// GpuJpegDecoder: JPEG (and jpega) decoding on an NVIDIA GPU through nvJPEG, into CUDA memory,
// into a region of an OpenGL texture, or (on request) into host memory.
//
// This header includes no CUDA, nvJPEG or GL header, and linking against it needs neither: the
// GPU code lives in its own shared library, libpixpath_cuda.so, which create() loads at run time
// with dlopen. On a machine without an NVIDIA driver, nvJPEG or the module, create() fails with
// ErrorCode::Unavailable and a reason naming what is missing; callers then use the CPU decoder.
//
// Long-lived state. Everything expensive is made once per device and shared by every decoder
// and window on it: the primary CUDA context, the nvJPEG handles (one per backend family), the
// stream-ordered device memory pool, and per concurrently decoding thread one "decode slot"
// (JPEG states, pinned and device buffers, a stream, events). GL textures are registered with
// CUDA once, on first use, and stay registered until forget_texture(). Nothing is created or
// registered per frame.
//
// Errors. Every GPU failure returns an Error (subject "jpeg", stage "gpu parse", "gpu decode",
// "gpu convert", "gpu texture" ...), never aborts, and leaves the decoder usable for the next
// picture: the caller decodes that one picture on the CPU instead.
//
// Ownership. decode_to_device() returns a Picture (RGBA, MemoryKind::CudaDevice) whose storage
// owns pool memory; its release returns the memory to the pool (stream-ordered, in the device's
// primary context, from any thread). Its SyncPoint is a CUDA event recorded after the write:
// wait on it (wait_host(), or cudaStreamWaitEvent on native()) before reading. Dropping the last
// reference while the write is still running is safe.
//
// Threading: all methods may be called from any threads concurrently; each call takes a free
// decode slot. decode_to_texture() and forget_texture() must be called on a thread where the GL
// context owning the texture is current (CUDA-GL registration and mapping need it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/paint/gpu_draw_decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::cuda {

// The types shared with the paint engine's GPU route (include/pixpath/paint/gpu_draw_decoder.h).
using paint::GpuBackend;
using paint::GpuCopyJob;
using paint::GpuDecodeJob;
using paint::GpuDecodeParams;
using paint::GpuFence;
using paint::GlTextureRegion;

struct GpuDecoderOptions {
  // Which GPU: "" or "0" (the first), "cuda:1", a PCI bus id ("0000:1b:00.0"), or a substring of
  // the device name ("H200"). Environment PIXPATH_CUDA_DEVICE is used when this is empty.
  std::string device;
  // Path of libpixpath_cuda.so; "" = environment PIXPATH_CUDA_MODULE, else the dynamic loader's
  // search path (and the directory of the calling program).
  std::string module_path;
  // Decode real pictures at start and check that device memory stays flat. Forced on (and
  // longer) when the driver is known to leak in nvJPEG, or its version cannot be read.
  bool self_test = true;
  int self_test_decodes = 32;
};

struct GpuTextureJob {
  std::span<const uint8_t> data;
  GpuDecodeParams params;
  GlTextureRegion target;
};

class GpuJpegDecoder : public paint::GpuDrawDecoder {
 public:
  // Loads libpixpath_cuda.so, opens the device and runs the start-up self-test.
  [[nodiscard]] static Result<std::unique_ptr<GpuJpegDecoder>> create(
      const GpuDecoderOptions& options = {});
  virtual ~GpuJpegDecoder() = default;

  // Headers only (no decode).
  virtual Result<codecs::ImageInfo> inspect(std::span<const uint8_t> data,
                                            const GpuDecodeParams& params) const = 0;
  // RGBA in CUDA memory (see Ownership above). Returns as soon as the work is queued.
  virtual Result<Picture> decode_to_device(std::span<const uint8_t> data,
                                           const GpuDecodeParams& params) const = 0;
  // RGBA in a new host picture; waits for the GPU.
  virtual Result<codecs::DecodeResult> decode_to_host(std::span<const uint8_t> data,
                                                      const GpuDecodeParams& params) const override = 0;
  // Into a texture region through CUDA-GL interop: no host copy, no host wait, no glFinish
  // (the unmap orders the write before later GL commands that use the texture). The texture is
  // mapped while nvJPEG decodes, so the map's wait for GL overlaps the decode. The fence
  // signals when the pixels are in the texture (GL commands issued after this call see them
  // anyway; the fence is for timing and acknowledgements).
  [[nodiscard]] virtual Result<std::shared_ptr<GpuFence>> decode_to_texture(
      std::span<const uint8_t> data, const GpuDecodeParams& params,
      const GlTextureRegion& target) const = 0;
  // Several pictures at once (several windows updating): baseline pictures go to the hardware
  // JPEG engines as one batch where the GPU has them; the others are decoded one by one.
  // Fails as a whole only on a GPU failure; per-picture errors are returned in order.
  virtual std::vector<Result<void>> decode_batch_to_textures(
      std::span<const GpuTextureJob> jobs) const = 0;
  // Several pictures into CUDA memory (the paint engine's GPU thread decodes every draw waiting
  // for it in one call): two or more baseline colour pictures go to the hardware JPEG engines as
  // one batch where the GPU has them, the rest one by one. One result per job, in order; each
  // picture is as decode_to_device() makes it (its own event).
  virtual std::vector<Result<Picture>> decode_batch_to_device(
      std::span<const GpuDecodeJob> jobs) const override = 0;
  // The paint engine's route (decode on worker threads, write textures on the GL thread):
  // copies pictures made by decode_to_device() into texture regions. One call maps every
  // distinct texture once, makes the GPU (not the host) wait for each picture's write, copies,
  // unmaps, and returns a fence recorded after the unmap. No host wait, no glFinish; like
  // decode_to_texture(), the unmap orders the writes before GL commands issued after this call.
  // Preconditions: GL context current; every region inside its texture. The pictures must stay
  // alive until the fence has signalled. On failure nothing was written that later GL work can
  // see as complete: paint those pictures another way.
  [[nodiscard]] virtual Result<std::shared_ptr<GpuFence>> copy_to_textures(
      std::span<const GpuCopyJob> jobs) const override = 0;
  // Unregisters a texture from CUDA; call before deleting or re-creating it (GL context
  // current). Unknown names are ignored.
  virtual void forget_texture(uint32_t texture) const override = 0;
  // Registers a texture ahead of its first write (GL context current), where creating a window
  // can pay for it: registration and the first map cost about 1.3 ms for a 3840x2160 texture on
  // the H200, against 0.1 ms for later writes. Optional: writes register on first use anyway.
  [[nodiscard]] virtual Result<void> prepare_texture(const GlTextureRegion& texture) const override = 0;

  // How many hardware JPEG engines a batch spreads over (7 on an H100/H200); 0 when the GPU has
  // none or hardware batches were disabled after failures.
  virtual int hardware_engines() const override = 0;
  // The device, driver, nvJPEG version, hardware engines, memory and self-test, as JSON.
  virtual std::string info_json() const = 0;
};

// GPU details for `pixpath info`: loads the module and describes every CUDA device without
// creating a decoder. Fails (Unavailable) when the module, driver or nvJPEG is missing.
[[nodiscard]] Result<std::string> gpu_info_json(const GpuDecoderOptions& options = {});

// For PaintEngineConfig::gpu_factory: creates a GpuJpegDecoder with these options when the
// engine asks for one.
paint::GpuDrawDecoderFactory gpu_draw_decoder_factory(GpuDecoderOptions options = {});

}  // namespace pixpath::cuda
