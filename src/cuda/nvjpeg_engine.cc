// libpixpath_cuda.so: the nvJPEG engine behind pixpath::cuda::GpuJpegDecoder, and the module's
// entry point. nvjpeg_engine.h names the engine's parts; device_state.h what a device shares.
#include "nvjpeg_engine.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "cuda/module_abi.h"
#include "cuda_errors.h"

namespace pixpath::cuda {

NvjpegEngine::~NvjpegEngine() {
  (void)bind();
  if (paint_stream_) (void)cudaStreamSynchronize(paint_stream_), (void)cudaStreamDestroy(paint_stream_);
  for (auto e : free_fences_) (void)cudaEventDestroy(e);
}

Result<void> NvjpegEngine::bind() {
  CUDA_TRY("gpu device", cudaSetDevice(d_->device));
  return ok();
}

void NvjpegEngine::release_device(void* ptr, void* stream) {
  (void)cudaSetDevice(d_->device);
  (void)cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
}

Result<void> NvjpegEngine::wait_event(void* event) {
  CUDA_TRY("gpu sync", cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  return ok();
}

void NvjpegEngine::recycle_event(void* event) { d_->recycle_event(static_cast<cudaEvent_t>(event)); }

Result<void*> NvjpegEngine::allocate_device(size_t bytes) {
  PIXPATH_CHECK(bind());
  void* p = nullptr;
  CUDA_TRY("gpu memory", cudaMallocFromPoolAsync(&p, bytes, d_->pool, d_->release_stream));
  CUDA_TRY("gpu memory", cudaStreamSynchronize(d_->release_stream));
  return p;
}

Result<void> NvjpegEngine::copy_device_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                          size_t row_bytes, int rows) {
  PIXPATH_CHECK(bind());
  CUDA_TRY("gpu copy", cudaMemcpy2D(dst, dst_pitch, src, src_pitch, row_bytes, rows,
                                    cudaMemcpyDeviceToDevice));
  return ok();
}

std::string NvjpegEngine::info_json() {
  nlohmann::ordered_json j = d_->describe();
  {
    MutexLock lock(d_->slots_mu);
    j["decode_slots"] = d_->slots_created;
  }
  if (texture_trace_on()) j["texture_trace_ms"] = texture_trace_json();
  if (batch_trace_on()) j["batch_trace_ms"] = batch_trace_json();
  return json_text(j);
}

namespace {

Result<std::shared_ptr<abi::Engine>> create_engine(const abi::EngineOptions& options) {
  PIXPATH_TRY(int dev, select_device(options.device));
  PIXPATH_TRY(auto state, device_state(dev));
  auto engine = std::make_shared<NvjpegEngine>(state);
  // Self-test: always when the driver's leak status is not known-good; longer when known-bad.
  const bool must = state->driver.nvidia_major < 525;
  if (options.self_test || must) {
    int n = std::max(options.self_test_decodes, must ? 64 : 8);
    if (state->driver.nvidia_major > 0 && state->driver.nvidia_major < 525) n = std::max(n, 512);
    PIXPATH_CHECK(engine->run_self_test(n));
  }
  return std::shared_ptr<abi::Engine>(engine);
}

Result<std::string> describe_devices() {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return gpu_error(ErrorCode::Unavailable, "gpu device",
                     std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e));
  nlohmann::ordered_json out;
  auto& devices = out["devices"] = nlohmann::ordered_json::array();
  for (int i = 0; i < count; ++i) {
    auto s = device_state(i);
    if (s)
      devices.push_back((*s)->describe());
    else
      devices.push_back(nlohmann::ordered_json{{"index", i}, {"error", s.error().reason()}});
  }
  return json_text(out);
}

}  // namespace
}  // namespace pixpath::cuda

extern "C" __attribute__((visibility("default"))) const pixpath::cuda::abi::ModuleEntry*
pixpath_cuda_module_v1() {
  static const pixpath::cuda::abi::ModuleEntry entry{pixpath::cuda::abi::kAbiVersion,
                                                    &pixpath::cuda::create_engine,
                                                    &pixpath::cuda::describe_devices};
  return &entry;
}
