// One picture through nvJPEG: the request split (jpega), the parse and its checks against the
// packet and the decode limits, the route (hardware engines, HYBRID or GPU_HYBRID), the decode
// into planes, and the conversion into pool memory or host memory.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

#include "cuda_errors.h"
#include "nvjpeg_engine.h"

namespace pixpath::cuda {
namespace {

// The own decoder's options on this route: the defaults; PIXPATH_CUDA_TRANSFER_MAPS=0 leaves
// out step 3a (the transfer maps, own_jpeg_decode.h) for side-by-side measurements. Read once.
own_jpeg::Options own_options() {
  static const bool maps = [] {
    const char* v = std::getenv("PIXPATH_CUDA_TRANSFER_MAPS");
    return !(v && std::string(v) == "0");
  }();
  own_jpeg::Options o;
  o.transfer_maps = maps;
  return o;
}

}  // namespace

Result<abi::ImageHeader> NvjpegEngine::inspect(const abi::DecodeRequest& r) {
  PIXPATH_CHECK(bind());
  PIXPATH_TRY(auto slot, d_->acquire_slot());
  PIXPATH_TRY(auto color, split(r).first);
  slot->turn ^= 1;
  CUDA_TRY("gpu parse", cudaEventSynchronize(slot->turn_done[slot->turn]));
  nvjpegJpegStream_t js = slot->jpeg_stream[slot->turn];
  PIXPATH_TRY(ParsedImage img, parse(d_->handle, js, color.first, color.second, r));
  abi::ImageHeader h;
  h.width = img.width;
  h.height = img.height;
  h.components = img.components;
  h.has_alpha = r.alpha_offset >= 0;
  h.detail = std::string(encoding_name(img.encoding)) + " " + css_name(img.css);
  return h;
}

Result<abi::DeviceImage> NvjpegEngine::queue_to_device(Slot& s, const abi::DecodeRequest& r) {
  PIXPATH_TRY(ParsedImage img, decode_all(s, r, nullptr));
  return convert_to_device(convert_job(s, img, r), s.stream);
}

Result<abi::DeviceImage> NvjpegEngine::decode_to_device(const abi::DecodeRequest& r) {
  PIXPATH_CHECK(bind());
  PIXPATH_TRY(auto slot, d_->acquire_slot());
  const auto start = std::chrono::steady_clock::now();
  auto img = queue_to_device(*slot, r);
  batch_trace_add(r.own ? "own queue" : "other queue", start);
  const auto wait_start = std::chrono::steady_clock::now();
  auto finished = finish_own(*slot);  // after the conversion is queued: one host wait
  if (r.own) {
    batch_trace_add("own wait", wait_start);
    if (img && finished)
      d_->own_cost.add(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                       int64_t(r.own->width) * r.own->height);
  }
  if (img && !finished) {
    release_image(*img);
    return finished.error();
  }
  return img;
}

Result<void> NvjpegEngine::finish_own(Slot& s) {
  own_jpeg::DamageWords color, alpha;
  const bool had_color = s.own_pending.buffers != nullptr, had_alpha = s.own_alpha_pending.buffers != nullptr;
  auto c = own_jpeg::finish_decode(s.own_pending, nullptr, &color);
  auto a = own_jpeg::finish_decode(s.own_alpha_pending, nullptr, &alpha);
  if (had_color && c && s.own_damage_out) *s.own_damage_out = color;
  if (had_alpha && a && s.own_alpha_damage_out) *s.own_alpha_damage_out = alpha;
  s.own_damage_out = s.own_alpha_damage_out = nullptr;
  if (!c) return c.error();
  return a;
}

Result<void> NvjpegEngine::decode_to_host(const abi::DecodeRequest& r, uint8_t* dst, size_t dst_pitch,
                                          int width, int height) {
  PIXPATH_CHECK(bind());
  PIXPATH_TRY(auto slot, d_->acquire_slot());
  auto decoded = decode_all(*slot, r, nullptr);
  PIXPATH_CHECK(finish_own(*slot));
  PIXPATH_TRY(ParsedImage img, std::move(decoded));
  if (img.width != width || img.height != height)
    return gpu_error(ErrorCode::InvalidArgument, "gpu decode", "destination size does not match the JPEG");
  const size_t pitch = align_up(size_t(width) * 4, 256);
  PIXPATH_CHECK(slot->scratch_rgba.reserve(pitch * size_t(height), d_->pool, slot->stream));
  ConvertJob job = convert_job(*slot, img, r);
  job.out = static_cast<uint8_t*>(slot->scratch_rgba.ptr);
  job.out_pitch = pitch;
  CUDA_TRY("gpu convert", launch_ycc_to_rgba(job, slot->stream));
  CUDA_TRY("gpu readback", cudaMemcpy2DAsync(dst, dst_pitch, slot->scratch_rgba.ptr, pitch,
                                             size_t(width) * 4, height, cudaMemcpyDeviceToHost,
                                             slot->stream));
  CUDA_TRY("gpu readback", cudaStreamSynchronize(slot->stream));
  return ok();
}

std::pair<Result<NvjpegEngine::Bytes>, NvjpegEngine::Bytes> NvjpegEngine::split(const abi::DecodeRequest& r) {
  if (!r.data || r.size == 0)
    return {gpu_error(ErrorCode::InvalidArgument, "gpu parse", "no data"), {}};
  if (r.alpha_offset < 0) return {Bytes{r.data, r.size}, {}};
  if (r.alpha_offset == 0 || static_cast<uint64_t>(r.alpha_offset) >= r.size)
    return {gpu_error(ErrorCode::CorruptData, "gpu parse",
                      "alpha-offset " + std::to_string(r.alpha_offset) + " outside the " +
                          std::to_string(r.size) + " data bytes"),
            {}};
  const size_t a = static_cast<size_t>(r.alpha_offset);
  return {Bytes{r.data, a}, Bytes{r.data + a, r.size - a}};
}

Result<ParsedImage> NvjpegEngine::parse(nvjpegHandle_t handle, nvjpegJpegStream_t js, const uint8_t* data,
                                        size_t size, const abi::DecodeRequest& r, bool header_only) {
  if (header_only)
    NVJ_TRY("gpu parse", nvjpegJpegStreamParseHeader(handle, data, size, js));
  else
    NVJ_TRY("gpu parse", nvjpegJpegStreamParse(handle, data, size, 0, 0, js));
  ParsedImage p;
  unsigned w = 0, h = 0, n = 0;
  NVJ_TRY("gpu parse", nvjpegJpegStreamGetFrameDimensions(js, &w, &h));
  NVJ_TRY("gpu parse", nvjpegJpegStreamGetComponentsNum(js, &n));
  NVJ_TRY("gpu parse", nvjpegJpegStreamGetChromaSubsampling(js, &p.css));
  (void)nvjpegJpegStreamGetJpegEncoding(js, &p.encoding);
  if (n != 1 && n != 3)
    return gpu_error(ErrorCode::Unsupported, "gpu parse",
                     std::to_string(n) + "-component JPEG (CMYK?) is not decoded on the GPU");
  if (w == 0 || h == 0) return gpu_error(ErrorCode::CorruptData, "gpu parse", "zero-sized frame");
  if ((r.max_width && w > unsigned(r.max_width)) || (r.max_height && h > unsigned(r.max_height)) ||
      (r.max_pixels && uint64_t(w) * h > r.max_pixels))
    return gpu_error(ErrorCode::LimitExceeded, "gpu parse",
                     std::to_string(w) + "x" + std::to_string(h) + " exceeds the decode limits");
  if ((r.width && unsigned(r.width) != w) || (r.height && unsigned(r.height) != h))
    return gpu_error(ErrorCode::CorruptData, "gpu parse",
                     "JPEG is " + std::to_string(w) + "x" + std::to_string(h) + ", packet says " +
                         std::to_string(r.width) + "x" + std::to_string(r.height));
  p.width = int(w);
  p.height = int(h);
  p.components = int(n);
  for (unsigned c = 0; c < n; ++c)
    NVJ_TRY("gpu parse", nvjpegJpegStreamGetComponentDimensions(js, c, &p.comp_w[c], &p.comp_h[c]));
  return p;
}

Result<ParsedImage> NvjpegEngine::decode_planes(Slot& s, const uint8_t* data, size_t size,
                                                const abi::DecodeRequest& r, PlaneSet& planes, bool luma_only,
                                                const std::function<Result<void>()>& before_host) {
  using PhaseClock = std::chrono::steady_clock;
  auto t_prev = PhaseClock::now();
  auto phase = [&](int i) {
    const auto t = PhaseClock::now();
    d_->phase_ns[i].fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(t - t_prev).count(),
                              std::memory_order_relaxed);
    t_prev = t;
  };
  if (d_->hw_handle && !luma_only && (r.backend == kBackendAuto || r.backend == kBackendHardware)) {
    PIXPATH_TRY(std::optional<ParsedImage> hw, decode_hardware(s, data, size, r, planes, before_host));
    if (hw) return *hw;  // else: not for the engines (progressive, gray...): decoupled below
  }
  s.turn ^= 1;
  const int k = s.turn;
  // The pinned buffer and JPEG stream of this turn were last used two pictures ago; their
  // transfer must be done before the host phase writes them again.
  CUDA_TRY("gpu decode", cudaEventSynchronize(s.turn_done[k]));
  phase(0);
  nvjpegJpegStream_t js = s.jpeg_stream[k];
  PIXPATH_TRY(ParsedImage img, parse(d_->handle, js, data, size, r));
  phase(1);
  const bool y_only = luma_only || img.components == 1;
  NVJ_TRY("gpu decode", nvjpegDecodeParamsSetOutputFormat(s.params, y_only ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_YUV));

  // Route: the asked backend, else by size; fall over to the other when nvJPEG says the
  // picture is not supported there (e.g. progressive on GPU_HYBRID).
  int want = r.backend;
  if (want == kBackendAuto || want == kBackendHardware)
    want = int64_t(img.width) * img.height < kHybridBelowPixels ? kBackendHybrid : kBackendGpuHybrid;
  BackendState* b = nullptr;
  nvjpegJpegDecoder_t dec = nullptr;
  for (int attempt = 0; attempt < 2 && !b; ++attempt) {
    const int cand = attempt == 0 ? want : (want == kBackendHybrid ? kBackendGpuHybrid : kBackendHybrid);
    nvjpegJpegDecoder_t cd = cand == kBackendHybrid ? d_->decoder_hybrid : d_->decoder_gpu;
    int unsupported = 1;
    if (nvjpegDecoderJpegSupported(cd, js, s.params, &unsupported) == NVJPEG_STATUS_SUCCESS &&
        unsupported == 0) {
      b = cand == kBackendHybrid ? &s.hybrid : &s.gpu;
      dec = cd;
    }
  }
  if (!b)
    return gpu_error(ErrorCode::Unsupported, "gpu decode",
                     std::string("nvJPEG supports this ") + encoding_name(img.encoding) + " " +
                         css_name(img.css) + " JPEG on no backend");
  unsigned w[3] = {}, h[3] = {};
  const int comps = y_only ? 1 : 3;
  for (int c = 0; c < comps; ++c) w[c] = img.comp_w[c], h[c] = img.comp_h[c];
  PIXPATH_CHECK(planes.prepare(comps, w, h, d_->pool, s.stream));
  planes.layout = y_only ? ChromaLayout::kGray : layout_for(img.css, img.components);
  planes.width = img.width;
  planes.height = img.height;

  if (inject_failure("decode"))
    return gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
  NVJ_TRY("gpu decode", nvjpegStateAttachPinnedBuffer(b->state, b->pinned[k]));
  if (before_host) PIXPATH_CHECK(before_host());
  t_prev = PhaseClock::now();
  NVJ_TRY("gpu decode", nvjpegDecodeJpegHost(d_->handle, dec, b->state, s.params, js));
  phase(2);
  NVJ_TRY("gpu decode", nvjpegDecodeJpegTransferToDevice(d_->handle, dec, b->state, js, s.stream));
  CUDA_TRY("gpu decode", cudaEventRecord(s.turn_done[k], s.stream));
  phase(3);
  NVJ_TRY("gpu decode", nvjpegDecodeJpegDevice(d_->handle, dec, b->state, &planes.image, s.stream));
  phase(4);
  d_->phase_count.fetch_add(1, std::memory_order_relaxed);
  return img;
}

Result<std::optional<ParsedImage>> NvjpegEngine::decode_hardware(Slot& s, const uint8_t* data, size_t size,
                                                                 const abi::DecodeRequest& r, PlaneSet& planes,
                                                                 const std::function<Result<void>()>& before_host) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!s.hw_state) {
    NVJ_TRY("gpu init", nvjpegJpegStateCreate(d_->hw_handle, &s.hw_state));
    NVJ_TRY("gpu init", nvjpegJpegStreamCreate(d_->hw_handle, &s.hw_stream));
    NVJ_TRY("gpu init", nvjpegDecodeBatchedInitialize(d_->hw_handle, s.hw_state, 1, 1, NVJPEG_OUTPUT_YUV));
  }
  PIXPATH_TRY(ParsedImage img, parse(d_->hw_handle, s.hw_stream, data, size, r, /*header_only=*/true));
  int unsupported = 1;
  if (!for_the_engines(img) ||
      nvjpegDecodeBatchedSupported(d_->hw_handle, s.hw_stream, &unsupported) != NVJPEG_STATUS_SUCCESS ||
      unsupported != 0)
    return std::optional<ParsedImage>();
  unsigned w[3], h[3];
  for (int c = 0; c < 3; ++c) w[c] = img.comp_w[c], h[c] = img.comp_h[c];
  PIXPATH_CHECK(planes.prepare(3, w, h, d_->pool, s.stream));
  planes.layout = layout_for(img.css, 3);
  planes.width = img.width;
  planes.height = img.height;
  if (inject_failure("decode"))
    return gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
  // Reported on H100: the hardware path may not honour stream order. Start from an idle
  // stream: the previous picture's conversion has read these planes.
  CUDA_TRY("gpu decode", cudaStreamSynchronize(s.stream));
  if (before_host) PIXPATH_CHECK(before_host());
  const unsigned char* ptr = data;
  NVJ_TRY("gpu decode", nvjpegDecodeBatched(d_->hw_handle, s.hw_state, &ptr, &size, &planes.image, s.stream));
  d_->hw_single_ns.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
      std::memory_order_relaxed);
  d_->hw_single_count.fetch_add(1, std::memory_order_relaxed);
  return std::optional<ParsedImage>(img);
}

Result<ParsedImage> NvjpegEngine::decode_own(Slot& s, const abi::DecodeRequest& r,
                                             const std::function<Result<void>()>& before_host) {
  const own_jpeg::OwnJpegInput& in = *r.own;
  if (in.components != 1 && in.components != 3)
    return gpu_error(ErrorCode::Unsupported, "gpu decode", "own decoder: gray and YCbCr pictures only");
  if ((r.width && r.width != in.width) || (r.height && r.height != in.height))
    return gpu_error(ErrorCode::CorruptData, "gpu parse",
                     "JPEG is " + std::to_string(in.width) + "x" + std::to_string(in.height) + ", packet says " +
                         std::to_string(r.width) + "x" + std::to_string(r.height));
  if (!s.own) s.own = std::make_unique<own_jpeg::DeviceBuffers>();
  if (inject_failure("decode"))
    return gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
  // The texture path's before_host (the map) reads the picture size from s.color.
  s.color.width = in.width;
  s.color.height = in.height;
  if (before_host) PIXPATH_CHECK(before_host());
  // The input was cut into subsequences by the loader; the options' size is not used again.
  // Queued only: finish_own reads the damage words once the caller has queued the rest.
  PIXPATH_TRY(own_jpeg::PlanesOut planes,
              own_jpeg::queue_input_to_planes(in, own_options(), *s.own, s.stream, s.own_pending));
  s.own_damage_out = r.own_damage;
  if (r.alpha_offset >= 0) {
    // jpega: the alpha JPEG (gray, the picture's size) into buffers of its own, on the same
    // stream; the conversion merges it (convert_job).
    const own_jpeg::OwnJpegInput& a = *r.own_alpha;
    if (a.components != 1 || a.width != in.width || a.height != in.height)
      return gpu_error(ErrorCode::CorruptData, "gpu alpha",
                       "the alpha JPEG is " + std::to_string(a.width) + "x" + std::to_string(a.height) + " with " +
                           std::to_string(a.components) + " components; gray " + std::to_string(in.width) + "x" +
                           std::to_string(in.height) + " expected");
    if (!s.own_alpha) s.own_alpha = std::make_unique<own_jpeg::DeviceBuffers>();
    PIXPATH_TRY(own_jpeg::PlanesOut ap, own_jpeg::queue_input_to_planes(a, own_options(), *s.own_alpha,
                                                                        s.stream, s.own_alpha_pending));
    s.own_alpha_damage_out = r.own_alpha_damage;
    s.alpha.components = 1;
    s.alpha.planes[0] = PlaneIn{ap.plane[0], ap.pitch[0], a.sample_width[0], a.sample_height[0]};
    s.alpha.layout = ChromaLayout::kGray;
    s.alpha.width = a.width;
    s.alpha.height = a.height;
  }
  PlaneSet& c = s.color;
  c.components = in.components;
  for (int k = 0; k < 3; ++k) c.planes[k] = PlaneIn{};
  for (int k = 0; k < in.components; ++k)
    c.planes[k] = PlaneIn{planes.plane[k], planes.pitch[k], in.sample_width[size_t(k)], in.sample_height[size_t(k)]};
  using codecs::jpeg::Upsampling;
  c.layout = in.components == 1                      ? ChromaLayout::kGray
             : in.upsampling == Upsampling::H2V1 ? ChromaLayout::k422
             : in.upsampling == Upsampling::H2V2 ? ChromaLayout::k420
             : in.upsampling == Upsampling::H1V2 ? ChromaLayout::k440
                                                 : ChromaLayout::k444;
  c.width = in.width;
  c.height = in.height;
  ParsedImage img;
  img.width = in.width;
  img.height = in.height;
  img.components = in.components;
  return img;
}

Result<ParsedImage> NvjpegEngine::decode_all(Slot& s, const abi::DecodeRequest& r,
                                             const std::function<Result<void>()>& before_host) {
  if (r.own && (r.alpha_offset < 0 || r.own_alpha)) return decode_own(s, r, before_host);
  auto [color, alpha] = split(r);
  if (!color) return color.error();
  PIXPATH_TRY(ParsedImage img, decode_planes(s, color->first, color->second, r, s.color, false, before_host));
  if (r.alpha_offset >= 0) {
    abi::DecodeRequest ar = r;
    ar.width = img.width;
    ar.height = img.height;
    auto a = decode_planes(s, alpha.first, alpha.second, ar, s.alpha, true, nullptr);
    if (!a) return gpu_error(a.error().code(), "gpu alpha", a.error().stage() + ": " + a.error().reason());
  }
  return img;
}

ConvertJob NvjpegEngine::convert_job(Slot& s, const ParsedImage& img, const abi::DecodeRequest& r) {
  ConvertJob job;
  job.y = s.color.planes[0];
  if (s.color.components == 3) {
    job.cb = s.color.planes[1];
    job.cr = s.color.planes[2];
  }
  job.layout = s.color.layout;
  if (r.alpha_offset >= 0) job.alpha = s.alpha.planes[0];
  job.width = img.width;
  job.height = img.height;
  return job;
}

Result<abi::DeviceImage> NvjpegEngine::convert_to_device(ConvertJob job, cudaStream_t stream) {
  const size_t pitch = align_up(size_t(job.width) * 4, 256);
  const size_t bytes = pitch * size_t(job.height);
  void* out = nullptr;
  CUDA_TRY("gpu memory", cudaMallocFromPoolAsync(&out, bytes, d_->pool, stream));
  auto fail = [&](Error e) -> Result<abi::DeviceImage> {
    (void)cudaFreeAsync(out, stream);
    return e;
  };
  job.out = static_cast<uint8_t*>(out);
  job.out_pitch = pitch;
  if (inject_failure("convert"))
    return fail(gpu_error(ErrorCode::Internal, "gpu convert", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)"));
  if (auto e = launch_ycc_to_rgba(job, stream); e != cudaSuccess)
    return fail(cuda_error("gpu convert", "ycc_to_rgba<<<>>>", e));
  auto ev = d_->acquire_event();
  if (!ev) return fail(ev.error());
  if (auto e = cudaEventRecord(*ev, stream); e != cudaSuccess) {
    d_->recycle_event(*ev);
    return fail(cuda_error("gpu convert", "cudaEventRecord", e));
  }
  abi::DeviceImage img;
  img.ptr = out;
  img.pitch = pitch;
  img.bytes = bytes;
  img.width = job.width;
  img.height = job.height;
  img.event = *ev;
  img.stream = stream;
  img.device = d_->device;
  img.context = d_->context;
  return img;
}

void NvjpegEngine::release_image(const abi::DeviceImage& img) {
  release_device(img.ptr, img.stream);
  d_->recycle_event(static_cast<cudaEvent_t>(img.event));
}

}  // namespace pixpath::cuda
