#include "device_state.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cuda_errors.h"

namespace pixpath::cuda {

DeviceState::~DeviceState() {
  (void)cudaSetDevice(device);
  (void)cudaDeviceSynchronize();
  {
    MutexLock lock(textures_mu);
    for (auto& [name, reg] : textures) {
      if (reg.surface) (void)cudaDestroySurfaceObject(reg.surface);
      // Unregistering needs the GL context current; at teardown it may be gone. Leave it.
    }
  }
  for (auto& s : free_slots) destroy_slot(*s);
  for (auto e : free_events) (void)cudaEventDestroy(e);
  for (auto& bs : batch) {
    if (bs.state) {
      for (auto js : bs.streams) nvjpegJpegStreamDestroy(js);
      for (auto& p : bs.planes) p.buffer.release(bs.stream);
      nvjpegJpegStateDestroy(bs.state);
    }
    if (bs.stream) (void)cudaStreamDestroy(bs.stream);
    for (auto e : {bs.decoded, bs.converted, bs.pass_start, bs.pass_end})
      if (e) (void)cudaEventDestroy(e);
  }
  if (decoder_hybrid) nvjpegDecoderDestroy(decoder_hybrid);
  if (decoder_gpu) nvjpegDecoderDestroy(decoder_gpu);
  if (hw_handle) nvjpegDestroy(hw_handle);
  if (handle) nvjpegDestroy(handle);
  if (release_stream) (void)cudaStreamSynchronize(release_stream), (void)cudaStreamDestroy(release_stream);
  if (pool) (void)cudaMemPoolDestroy(pool);
}

void DeviceState::destroy_backend(BackendState& b) {
  if (b.state) nvjpegJpegStateDestroy(b.state);
  if (b.device_buffer) nvjpegBufferDeviceDestroy(b.device_buffer);
  for (auto p : b.pinned)
    if (p) nvjpegBufferPinnedDestroy(p);
}

void DeviceState::destroy_slot(Slot& s) {
  if (s.stream) (void)cudaStreamSynchronize(s.stream);
  s.own.reset();
  s.own_alpha.reset();
  if (s.hw_stream) nvjpegJpegStreamDestroy(s.hw_stream);
  if (s.hw_state) nvjpegJpegStateDestroy(s.hw_state);
  destroy_backend(s.hybrid);
  destroy_backend(s.gpu);
  for (auto js : s.jpeg_stream)
    if (js) nvjpegJpegStreamDestroy(js);
  for (auto e : {s.turn_done[0], s.turn_done[1], s.decoded, s.converted})
    if (e) (void)cudaEventDestroy(e);
  if (s.params) nvjpegDecodeParamsDestroy(s.params);
  s.color.buffer.release(s.stream);
  s.alpha.buffer.release(s.stream);
  s.scratch_rgba.release(s.stream);
  if (s.stream) (void)cudaStreamSynchronize(s.stream), (void)cudaStreamDestroy(s.stream);
}

Result<void> DeviceState::make_backend(BackendState& b, nvjpegJpegDecoder_t decoder) {
  NVJ_TRY("gpu init", nvjpegDecoderStateCreate(handle, decoder, &b.state));
  nvjpegDevAllocatorV2_t dev{pool_malloc, pool_free, pool};
  nvjpegPinnedAllocatorV2_t pin{pinned_malloc, pinned_free, nullptr};
  NVJ_TRY("gpu init", nvjpegBufferDeviceCreateV2(handle, &dev, &b.device_buffer));
  for (auto& p : b.pinned) NVJ_TRY("gpu init", nvjpegBufferPinnedCreateV2(handle, &pin, &p));
  NVJ_TRY("gpu init", nvjpegStateAttachDeviceBuffer(b.state, b.device_buffer));
  return ok();
}

Result<std::unique_ptr<Slot>> DeviceState::make_slot() {
  auto s = std::make_unique<Slot>();
  auto fail = [&](Error e) -> Result<std::unique_ptr<Slot>> {
    destroy_slot(*s);
    return e;
  };
  if (auto e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking); e != cudaSuccess)
    return fail(cuda_error("gpu init", "cudaStreamCreateWithFlags", e));
  if (auto r = make_backend(s->hybrid, decoder_hybrid); !r) return fail(r.error());
  if (auto r = make_backend(s->gpu, decoder_gpu); !r) return fail(r.error());
  for (int k = 0; k < 2; ++k) {
    if (auto st = nvjpegJpegStreamCreate(handle, &s->jpeg_stream[k]); st != NVJPEG_STATUS_SUCCESS)
      return fail(nvjpeg_error("gpu init", "nvjpegJpegStreamCreate", st));
    if (auto e = cudaEventCreateWithFlags(&s->turn_done[k], cudaEventDisableTiming); e != cudaSuccess)
      return fail(cuda_error("gpu init", "cudaEventCreateWithFlags", e));
  }
  for (auto* e : {&s->decoded, &s->converted})
    if (auto err = cudaEventCreateWithFlags(e, cudaEventDisableTiming); err != cudaSuccess)
      return fail(cuda_error("gpu init", "cudaEventCreateWithFlags", err));
  if (auto st = nvjpegDecodeParamsCreate(handle, &s->params); st != NVJPEG_STATUS_SUCCESS)
    return fail(nvjpeg_error("gpu init", "nvjpegDecodeParamsCreate", st));
  return s;
}

Result<DeviceState::SlotGuard> DeviceState::acquire_slot() {
  {
    MutexLock lock(slots_mu);
    if (!free_slots.empty()) {
      auto s = std::move(free_slots.back());
      free_slots.pop_back();
      return SlotGuard(this, std::move(s));
    }
  }
  PIXPATH_TRY(auto s, make_slot());
  {
    MutexLock lock(slots_mu);
    ++slots_created;
  }
  return SlotGuard(this, std::move(s));
}

Result<cudaEvent_t> DeviceState::acquire_event() {
  {
    MutexLock lock(events_mu);
    if (!free_events.empty()) {
      auto e = free_events.back();
      free_events.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  CUDA_TRY("gpu init", cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void DeviceState::recycle_event(cudaEvent_t e) {
  MutexLock lock(events_mu);
  free_events.push_back(e);
}

Result<void> DeviceState::init(int dev) {
  device = dev;
  CUDA_TRY("gpu device", cudaSetDevice(dev));
  CUDA_TRY("gpu device", cudaFree(nullptr));  // creates/binds the primary context
  if (cuCtxGetCurrent(&context) != CUDA_SUCCESS || !context)
    return gpu_error(ErrorCode::Unavailable, "gpu device", "no current CUDA context after cudaSetDevice");
  CUDA_TRY("gpu device", cudaGetDeviceProperties(&props, dev));
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) pci_bus_id = bus;
  driver = read_driver_facts();

  cudaMemPoolProps pp{};
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = cudaMemHandleTypeNone;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = dev;
  CUDA_TRY("gpu init", cudaMemPoolCreate(&pool, &pp));
  uint64_t keep = UINT64_MAX;  // never give reserved memory back: flat device memory
  CUDA_TRY("gpu init", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  CUDA_TRY("gpu init", cudaStreamCreateWithFlags(&release_stream, cudaStreamNonBlocking));

  nvjpegDevAllocatorV2_t dev_alloc{pool_malloc, pool_free, pool};
  nvjpegPinnedAllocatorV2_t pin_alloc{pinned_malloc, pinned_free, nullptr};
  NVJ_TRY("gpu init", nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, &dev_alloc, &pin_alloc,
                                       NVJPEG_FLAGS_DEFAULT, &handle));
  NVJ_TRY("gpu init", nvjpegSetDeviceMemoryPadding(size_t{4} << 20, handle));
  NVJ_TRY("gpu init", nvjpegSetPinnedMemoryPadding(size_t{1} << 20, handle));
  NVJ_TRY("gpu init", nvjpegDecoderCreate(handle, NVJPEG_BACKEND_HYBRID, &decoder_hybrid));
  NVJ_TRY("gpu init", nvjpegDecoderCreate(handle, NVJPEG_BACKEND_GPU_HYBRID, &decoder_gpu));

  // The hardware JPEG engines (A100/A30/H100/H200...): batched API only.
  const nvjpegStatus_t hs = nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, &dev_alloc, &pin_alloc,
                                             NVJPEG_FLAGS_DEFAULT, &hw_handle);
  if (hs == NVJPEG_STATUS_SUCCESS) {
    (void)nvjpegGetHardwareDecoderInfo(hw_handle, &hw_engines, &hw_cores);
    (void)nvjpegSetDeviceMemoryPadding(size_t{4} << 20, hw_handle);
    (void)nvjpegSetPinnedMemoryPadding(size_t{1} << 20, hw_handle);
    hw_status = "available";
  } else {
    hw_handle = nullptr;
    hw_status = std::string("not available (") + nvjpeg_status_name(hs) + ")";
  }
  return ok();
}

nlohmann::ordered_json DeviceState::describe() const {
  std::string batch_error, batch_last;
  int64_t batches = 0, batch_failures = 0;
  {
    MutexLock lock(batch_mu);
    batch_error = hw_batch_error;
    batch_last = hw_batch_last_failure;
    batches = hw_batches;
    batch_failures = hw_batch_failures;
  }
  nlohmann::ordered_json j;
  j["index"] = device;
  j["name"] = std::string(props.name);
  j["pci_bus_id"] = pci_bus_id;
  j["compute_capability"] = std::to_string(props.major) + "." + std::to_string(props.minor);
  j["multiprocessors"] = props.multiProcessorCount;
  j["memory_bytes"] = props.totalGlobalMem;
  j["nvidia_driver"] = driver.nvidia_version;
  j["cuda_driver_api"] = driver.cuda_driver_version;
  j["nvjpeg"] = std::to_string(driver.nvjpeg_major) + "." + std::to_string(driver.nvjpeg_minor) +
                "." + std::to_string(driver.nvjpeg_patch);
  j["nvjpeg_leak_check"] = driver.leak_status;
  j["hardware_decoder"] = hw_status;
  j["hardware_batch_error"] = batch_error;
  j["hardware_batches"] = batches;
  j["hardware_batch_failures"] = batch_failures;
  j["hardware_batch_last_failure"] = batch_last;
  j["hardware_engines"] = hw_engines;
  j["hardware_cores_per_engine"] = hw_cores;
  j["hybrid_below_pixels"] = kHybridBelowPixels;
  if (const int64_t n = phase_count.load()) {
    auto& per = j["host_us_per_decode"];
    const char* names[5] = {"wait_turn", "parse", "decode_host", "transfer_enqueue", "decode_device_enqueue"};
    for (int i = 0; i < 5; ++i) per[names[i]] = double(phase_ns[i].load()) / 1000.0 / double(n);
    per["decodes"] = n;
  }
  if (const int64_t n = hw_single_count.load())
    j["hardware_single"] = {{"decodes", n},
                            {"host_us_per_decode", double(hw_single_ns.load()) / 1000.0 / double(n)}};
  j["route_costs_ms_per_mpixel"] = {{"own", own_cost.per_mpixel()},
                                     {"own_samples", own_cost.samples()},
                                     {"engine_pass", engine_pass_cost.per_mpixel()},
                                     {"engine_pass_samples", engine_pass_cost.samples()}};
  if (self_test.ran) {
    j["self_test"] = {{"passed", self_test.passed},
                      {"decodes", self_test.decodes},
                      {"free_before", self_test.free_before},
                      {"free_after", self_test.free_after},
                      {"mean_rgb", nlohmann::ordered_json::array(
                                       {self_test.mean_rgb[0], self_test.mean_rgb[1], self_test.mean_rgb[2]})},
                      {"detail", self_test.detail}};
  }
  return j;
}

std::string json_text(const nlohmann::ordered_json& j) {
  // Invalid UTF-8 (a driver's string) is replaced, not thrown on.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {
Mutex g_devices_mu;
std::map<int, std::weak_ptr<DeviceState>> g_devices PIXPATH_GUARDED_BY(g_devices_mu);
}  // namespace

Result<int> select_device(std::string spec) {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return gpu_error(ErrorCode::Unavailable, "gpu device",
                     std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
  if (count == 0) return gpu_error(ErrorCode::Unavailable, "gpu device", "no CUDA device");
  if (spec.empty())
    if (const char* env = std::getenv("PIXPATH_CUDA_DEVICE")) spec = env;
  if (spec.rfind("cuda:", 0) == 0) spec = spec.substr(5);
  if (spec.empty()) return 0;
  if (std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const int i = std::atoi(spec.c_str());
    if (i >= count)
      return gpu_error(ErrorCode::InvalidArgument, "gpu device",
                       "device " + spec + " asked for, " + std::to_string(count) + " present");
    return i;
  }
  if (spec.find(':') != std::string::npos) {
    int i = -1;
    if (cudaDeviceGetByPCIBusId(&i, spec.c_str()) == cudaSuccess) return i;
    return gpu_error(ErrorCode::InvalidArgument, "gpu device", "no CUDA device at PCI bus id " + spec);
  }
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess &&
        lower(p.name).find(lower(spec)) != std::string::npos)
      return i;
  }
  return gpu_error(ErrorCode::InvalidArgument, "gpu device", "no CUDA device named like '" + spec + "'");
}

Result<std::shared_ptr<DeviceState>> device_state(int dev) {
  MutexLock lock(g_devices_mu);
  if (auto s = g_devices[dev].lock()) return s;
  auto s = std::make_shared<DeviceState>();
  PIXPATH_CHECK(s->init(dev));
  g_devices[dev] = s;
  return s;
}

}  // namespace pixpath::cuda
