// Several pictures at once on the hardware JPEG engines (nvjpegDecodeBatched): the batch states
// used in turn, the pick of the pictures the engines take, the conversions into textures or pool
// memory, and the bookkeeping that disables batches after repeated failures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "cuda_errors.h"
#include "nvjpeg_engine.h"

namespace pixpath::cuda {

int batch_depth(int64_t mean_pixels) {
  static const int forced = [] {
    const char* v = std::getenv("PIXPATH_CUDA_BATCH_DEPTH");
    const int d = v ? std::atoi(v) : 0;
    return d < 0 ? 0 : (d > 4 ? 4 : d);
  }();
  if (forced) return forced;
  return mean_pixels >= kDeepBatchPixels ? 3 : 2;
}

void DeviceState::batch_outcome(const Result<void>& r) {
  if (r) {
    hw_batch_failures_in_row = 0;
    return;
  }
  ++hw_batch_failures;
  hw_batch_last_failure = r.error().stage() + ": " + r.error().reason();
  if (++hw_batch_failures_in_row >= kBatchFailuresToDisable) {
    hw_batch_error = hw_batch_last_failure;
    std::fprintf(stderr, "pixpath cuda: hardware batches disabled after %d failures in a row: %s\n",
                 hw_batch_failures_in_row, hw_batch_error.c_str());
  }
}

bool NvjpegEngine::batch_trace_on() {
  static const bool on = std::getenv("PIXPATH_CUDA_BATCH_TRACE") != nullptr;
  return on;
}

void NvjpegEngine::batch_trace_add(const char* step, std::chrono::steady_clock::time_point since) {
  if (!batch_trace_on()) return;
  const float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - since).count();
  MutexLock lock(batch_trace_.mu);
  batch_trace_.ms[step].push_back(ms);
}

nlohmann::ordered_json NvjpegEngine::batch_trace_json() {
  MutexLock lock(batch_trace_.mu);
  nlohmann::ordered_json j;
  for (auto& [step, v] : batch_trace_.ms) {
    std::vector<float> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    j[step] = {{"p50", sorted.empty() ? -1.0f : sorted[sorted.size() / 2]}, {"count", sorted.size()}};
  }
  return j;
}

abi::RouteCosts NvjpegEngine::route_costs() {
  abi::RouteCosts c;
  c.own_ms_per_mpixel = d_->own_cost.per_mpixel();
  c.engine_pass_ms_per_mpixel = d_->engine_pass_cost.per_mpixel();
  return c;
}

int NvjpegEngine::hardware_engines() {
  if (!d_->hw_handle) return 0;
  MutexLock lock(d_->batch_mu);
  return d_->hw_batch_error.empty() ? int(d_->hw_engines) : 0;
}

std::vector<Result<void>> NvjpegEngine::decode_batch_to_textures(const abi::DecodeRequest* requests,
                                                                 const abi::TextureTarget* targets,
                                                                 size_t count) {
  std::vector<Result<void>> results(count, Result<void>());
  if (count == 0) return results;
  if (auto b = bind(); !b) {
    for (auto& r : results) r = b.error();
    return results;
  }
  std::vector<bool> done(count, false);
  if (d_->hw_handle && count >= 2) {
    MutexLock lock(d_->batch_mu);
    if (d_->hw_batch_error.empty())  // a failed batch: what is not done goes one by one below
      d_->batch_outcome(batch_hardware(requests, targets, count, results, done));
  }
  for (size_t i = 0; i < count; ++i) {
    if (done[i]) continue;
    auto fence = decode_to_texture(requests[i], targets[i]);
    if (fence) release_fence(*fence);  // the caller waits with GL (the unmap orders it)
    else results[i] = fence.error();
  }
  return results;
}

// The paint engine's GPU thread: the pictures of several draws (often several windows) at
// once. Two or more baseline colour pictures go to the hardware engines as one batch (one
// picture costs a whole engine pass; a batch spreads over all of them), then one conversion
// per picture into pool memory on the batch's stream, each with its own event. The rest, and
// everything when the GPU has no engines, one by one.
std::vector<Result<abi::DeviceImage>> NvjpegEngine::decode_batch_to_device(const abi::DecodeRequest* requests,
                                                                           size_t count) {
  using Clock = std::chrono::steady_clock;
  const auto call_start = Clock::now();
  std::vector<Result<abi::DeviceImage>> results;
  results.reserve(count);
  for (size_t i = 0; i < count; ++i) results.emplace_back(abi::DeviceImage{});
  if (count == 0) return results;
  if (auto b = bind(); !b) {
    for (auto& r : results) r = b.error();
    return results;
  }
  std::vector<bool> done(count, false);
  if (d_->hw_handle && count >= 2) {
    MutexLock lock(d_->batch_mu);
    if (d_->hw_batch_error.empty()) {
      const auto hw_start = Clock::now();
      auto e = batch_to_device(requests, count, results, done);
      batch_trace_add("hardware part", hw_start);
      d_->batch_outcome(e);
      if (!e) {  // the batch failed as a whole: every picture again, one by one
        for (size_t i = 0; i < count; ++i)
          if (done[i] && results[i]) release_image(*results[i]);
        std::fill(done.begin(), done.end(), false);
      }
    }
  }
  // The rest one by one, the hardware batch running meanwhile. An own-decoder picture is
  // finished (its damage words read, the host's one wait) once its conversion is queued, and
  // before the next is queued. Measured on the H200 with 8 4K windows (docs/performance.md,
  // "Many windows"): queueing them all first, each on a slot and stream of its own, or
  // chained on the GPU, or before the hardware batch, painted 10-35 % fewer frames a second.
  for (size_t i = 0; i < count; ++i) {
    if (done[i]) continue;
    results[i] = decode_to_device(requests[i]);
  }
  batch_trace_add("call", call_start);
  return results;
}

Result<BatchState*> NvjpegEngine::batch_decode(const abi::DecodeRequest* requests, size_t count,
                                               std::vector<size_t>& picked, std::vector<bool>& done,
                                               const std::function<void(size_t, Error)>& fail,
                                               const std::function<Result<void>(BatchState&)>& before_decode) {
  // The depth follows the previous batch's picture size (windows keep their sizes).
  d_->batch_turn = (d_->batch_turn + 1) % batch_depth(d_->last_batch_mean_pixels);
  auto& b = d_->batch[d_->batch_turn];
  if (!b.stream) {
    CUDA_TRY("gpu batch", cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    CUDA_TRY("gpu batch", cudaEventCreateWithFlags(&b.decoded, cudaEventDisableTiming));
    CUDA_TRY("gpu batch", cudaEventCreateWithFlags(&b.converted, cudaEventDisableTiming));
    CUDA_TRY("gpu batch", cudaEventCreate(&b.pass_start));
    CUDA_TRY("gpu batch", cudaEventCreate(&b.pass_end));
    NVJ_TRY("gpu batch", nvjpegJpegStateCreate(d_->hw_handle, &b.state));
  }
  while (b.streams.size() < count) {
    nvjpegJpegStream_t js = nullptr;
    NVJ_TRY("gpu batch", nvjpegJpegStreamCreate(d_->hw_handle, &js));
    b.streams.push_back(js);
  }
  if (b.planes.size() < count) b.planes.resize(count);

  picked.clear();
  std::vector<ParsedImage> parsed(count);
  for (size_t i = 0; i < count; ++i) {
    const auto& r = requests[i];
    if (r.alpha_offset >= 0 || (r.backend != kBackendAuto && r.backend != kBackendHardware)) continue;
    if (r.own) continue;  // pixpath's own decoder: one by one (it reports damaged data)
    nvjpegJpegStream_t js = b.streams[i];
    auto p = parse(d_->hw_handle, js, r.data, r.size, r, /*header_only=*/true);
    if (!p) {
      fail(i, p.error());
      done[i] = true;
      continue;
    }
    int unsupported = 1;
    if (!for_the_engines(*p) ||
        nvjpegDecodeBatchedSupported(d_->hw_handle, js, &unsupported) != NVJPEG_STATUS_SUCCESS ||
        unsupported != 0)
      continue;  // decoded one by one
    parsed[i] = *p;
    picked.push_back(i);
  }
  if (picked.size() < 2) {
    picked.clear();
    return &b;
  }
  ++d_->hw_batches;  // a batch for the engines starts (a call with fewer than 2 pictures is none)
  const int n = static_cast<int>(picked.size());
  int64_t pixels = 0;
  for (size_t i : picked) pixels += int64_t(parsed[i].width) * parsed[i].height;
  d_->last_batch_mean_pixels = pixels / n;
  if (b.initialized_size != n) {
    NVJ_TRY("gpu batch", nvjpegDecodeBatchedInitialize(d_->hw_handle, b.state, n, 1, NVJPEG_OUTPUT_YUV));
    b.initialized_size = n;
  }
  std::vector<const unsigned char*> datas;
  std::vector<size_t> lengths;
  std::vector<nvjpegImage_t> dests;
  for (int j = 0; j < n; ++j) {
    const size_t i = picked[size_t(j)];
    auto& ps = b.planes[size_t(j)];
    const auto& img = parsed[i];
    unsigned w[3], h[3];
    for (int c = 0; c < 3; ++c) w[c] = img.comp_w[c], h[c] = img.comp_h[c];
    PIXPATH_CHECK(ps.prepare(3, w, h, d_->pool, b.stream));
    ps.layout = layout_for(img.css, 3);
    ps.width = img.width;
    ps.height = img.height;
    datas.push_back(requests[i].data);
    lengths.push_back(requests[i].size);
    dests.push_back(ps.image);
  }
  if (inject_failure("decode")) {  // a failure of each picture, not of the batch path
    for (size_t i : picked) {
      fail(i, gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)"));
      done[i] = true;
    }
    picked.clear();
    return &b;
  }
  // Reported on H100: the hardware path may not honour stream order; start from an idle
  // stream (this also guarantees the previous batch's conversions read their planes).
  const auto idle_start = std::chrono::steady_clock::now();
  CUDA_TRY("gpu batch", cudaStreamSynchronize(b.stream));
  batch_trace_add("hardware idle wait", idle_start);
  record_engine_pass(b);
  if (before_decode) PIXPATH_CHECK(before_decode(b));
  const auto queue_start = std::chrono::steady_clock::now();
  CUDA_TRY("gpu batch", cudaEventRecord(b.pass_start, b.stream));
  NVJ_TRY("gpu batch", nvjpegDecodeBatched(d_->hw_handle, b.state, datas.data(), lengths.data(),
                                           dests.data(), b.stream));
  CUDA_TRY("gpu batch", cudaEventRecord(b.pass_end, b.stream));
  b.pass_pictures = n;
  b.pass_pixels = pixels;
  batch_trace_add("hardware decode call", queue_start);
  return &b;
}

// The state's previous pass (its stream idle now): the engines' time per pass of that batch,
// per megapixel of its mean picture, into the route's costs (the loader's batch split).
void NvjpegEngine::record_engine_pass(BatchState& b) {
  if (b.pass_pictures <= 0) return;
  float ms = 0;
  const int engines = std::max(1, int(d_->hw_engines));
  if (cudaEventElapsedTime(&ms, b.pass_start, b.pass_end) == cudaSuccess) {
    const int passes = (b.pass_pictures + engines - 1) / engines;
    d_->engine_pass_cost.add(double(ms) / passes, b.pass_pixels / b.pass_pictures);
  }
  b.pass_pictures = 0;
}

ConvertJob NvjpegEngine::plane_job(const PlaneSet& ps) {
  ConvertJob job;
  job.y = ps.planes[0];
  job.cb = ps.planes[1];
  job.cr = ps.planes[2];
  job.layout = ps.layout;
  job.width = ps.width;
  job.height = ps.height;
  return job;
}

Result<void> NvjpegEngine::batch_hardware(const abi::DecodeRequest* requests, const abi::TextureTarget* targets,
                                          size_t count, std::vector<Result<void>>& results,
                                          std::vector<bool>& done) {
  std::vector<size_t> picked;
  TextureSet set;
  const auto& regs = set.regs;
  auto& resources = set.resources;
  std::unique_lock paint(paint_mu_, std::defer_lock);
  cudaStream_t ts = nullptr;
  bool mapped = false;
  auto map_all = [&](BatchState& b) -> Result<void> {
    std::vector<TextureWrite> writes;
    for (size_t j = 0; j < picked.size(); ++j)
      writes.push_back({targets[picked[j]], b.planes[j].width, b.planes[j].height});
    PIXPATH_TRY(set, texture_set(writes));
    PIXPATH_TRY(ts, lock_texture_stream(paint));
    CUDA_TRY("gpu texture", cudaGraphicsMapResources(int(resources.size()), resources.data(), ts));
    mapped = true;
    return ok();
  };
  auto decoded = batch_decode(requests, count, picked, done,
                              [&](size_t i, Error e) { results[i] = std::move(e); }, map_all);
  if (!decoded) {
    if (mapped) (void)cudaGraphicsUnmapResources(int(resources.size()), resources.data(), ts);
    return decoded.error();
  }
  if (picked.empty()) return ok();
  BatchState& b = **decoded;
  Result<void> status = ok();
  auto queue = [&]() -> Result<void> {
    CUDA_TRY("gpu batch", cudaEventRecord(b.decoded, b.stream));
    CUDA_TRY("gpu texture", cudaStreamWaitEvent(ts, b.decoded, 0));
    for (size_t j = 0; j < picked.size(); ++j) {
      const size_t i = picked[j];
      const auto& t = targets[i];
      const auto& ps = b.planes[j];
      if (t.x + ps.width > t.texture_width || t.y + ps.height > t.texture_height) {
        results[i] = gpu_error(ErrorCode::OutOfRange, "gpu texture", "picture does not fit the texture");
        done[i] = true;
        continue;
      }
      PIXPATH_CHECK(surface_for(*regs[j], ts));
      ConvertJob job = plane_job(ps);
      job.surface = regs[j]->surface;
      job.x0 = t.x;
      job.y0 = t.y;
      CUDA_TRY("gpu convert", launch_ycc_to_rgba(job, ts));
      done[i] = true;
    }
    // The next use of this batch state overwrites the planes: its stream waits for these.
    CUDA_TRY("gpu convert", cudaEventRecord(b.converted, ts));
    CUDA_TRY("gpu convert", cudaStreamWaitEvent(b.stream, b.converted, 0));
    return ok();
  };
  status = queue();
  const cudaError_t ue = cudaGraphicsUnmapResources(int(resources.size()), resources.data(), ts);
  if (status && ue != cudaSuccess) return cuda_error("gpu texture", "cudaGraphicsUnmapResources", ue);
  return status;
}

Result<void> NvjpegEngine::batch_to_device(const abi::DecodeRequest* requests, size_t count,
                                           std::vector<Result<abi::DeviceImage>>& results, std::vector<bool>& done) {
  std::vector<size_t> picked;
  PIXPATH_TRY(BatchState* bp, batch_decode(requests, count, picked, done,
                                           [&](size_t i, Error e) { results[i] = std::move(e); }, nullptr));
  for (size_t j = 0; j < picked.size(); ++j) {
    const size_t i = picked[j];
    PIXPATH_TRY(abi::DeviceImage img, convert_to_device(plane_job(bp->planes[j]), bp->stream));
    results[i] = img;
    done[i] = true;
  }
  return ok();
}

}  // namespace pixpath::cuda
