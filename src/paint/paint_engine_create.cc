// PaintEngine::create(): the configuration's checks, then the GPU route, decided once: which
// decoder (cpu, gpu into the window textures, gpu into host memory) and why, and the threads.
#include <algorithm>
#include <optional>

#include "internal/paint_engine_impl.h"

namespace pixpath::paint {

using internal::GpuMode;

Result<std::unique_ptr<PaintEngine>> PaintEngine::create(Backing& backing,
                                                         PaintEngineConfig config) {
  if (config.decode_threads < 1 || config.decode_threads > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "decode_threads must be 1..64, not " + std::to_string(config.decode_threads));
  if (config.gpu_max_batch < 0 || config.gpu_max_batch > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "gpu_max_batch must be 0 (auto) or 1..64, not " + std::to_string(config.gpu_max_batch));
  if (config.gpu_min_pixels < 0)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create", "gpu_min_pixels must be >= 0");
  if (config.video_threads < 0 || config.video_threads > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "video_threads must be 0 (auto) or 1..64, not " +
                     std::to_string(config.video_threads));
  if (config.delta_buckets < 0 || config.delta_buckets > 64)
    return Error(ErrorCode::InvalidArgument, "paint engine", "create",
                 "delta_buckets must be 0..64");
  if (!config.decoders) config.decoders = builtin_decoders();
  // The GPU decoder: decided once, here.
  GpuMode mode = GpuMode::Off;
  std::string reason = "decoder cpu";
  std::shared_ptr<const GpuDrawDecoder> gpu = config.gpu_decoder;
  if (config.decoder != DecoderChoice::Cpu) {
    const bool textures = backing.has_window_textures();
    std::optional<Error> gpu_error;
    if (!gpu && (textures || config.decoder == DecoderChoice::Gpu)) {
      if (!config.gpu_factory) {
        gpu_error = Error(ErrorCode::Unavailable, "paint engine", "create",
                          "this program has no GPU route (no GPU decoder factory)");
      } else if (auto r = config.gpu_factory(); r.ok()) {
        gpu = std::move(r).value();
      } else {
        gpu_error = r.error();
      }
    }
    const std::string bname(backing.name());
    if (config.decoder == DecoderChoice::Auto) {
      if (!textures)
        reason = "decoder auto: cpu, backing '" + bname + "' has no window textures";
      else if (!gpu)
        reason = "decoder auto: cpu, no GPU decoder: " + gpu_error->message();
      else
        mode = GpuMode::Texture, reason = "decoder auto: gpu, into the window textures";
    } else {
      if (!gpu)
        return Error(ErrorCode::Unavailable, "paint engine", "create",
                     "decoder gpu: no GPU decoder: " + gpu_error->message());
      mode = textures ? GpuMode::Texture : GpuMode::Host;
      reason = textures ? "decoder gpu: into the window textures"
                        : "decoder gpu: backing '" + bname +
                              "' has no window textures: decode_to_host, painted from host memory";
    }
  }
  if (mode == GpuMode::Off) gpu.reset();
  if (config.gpu_max_batch == 0) {
    config.gpu_max_batch = gpu ? auto_gpu_batch(gpu->hardware_engines(), gpu->reports_damage()) : 8;
  }
  auto impl = std::make_unique<Impl>(backing, std::move(config));
  Impl* raw = impl.get();
  raw->gpu_mode = mode;
  raw->gpu = std::move(gpu);
  {
    MutexLock lock(raw->mu);
    raw->stats.decoder = mode == GpuMode::Off ? "cpu" : (mode == GpuMode::Texture ? "gpu" : "gpu-host");
    raw->stats.decoder_reason = reason;
    raw->stats.gpu_max_batch = raw->config.gpu_max_batch;
  }
  raw->decide_video_gpu();
  raw->make_video_lanes();
  if (mode == GpuMode::Texture) {
    raw->watcher = std::thread([raw] { raw->watcher_loop(); });
    raw->gpu_thread = std::thread([raw] { raw->gpu_loop(); });
  }
  for (int i = 0; i < raw->config.decode_threads; ++i)
    raw->workers.emplace_back([raw] { raw->worker_loop(); });
  return std::unique_ptr<PaintEngine>(new PaintEngine(std::move(impl)));
}

}  // namespace pixpath::paint
