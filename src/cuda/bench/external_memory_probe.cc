// Probe: can a window texture whose memory CUDA and GL share without a per-frame map take
// nvJPEG's output with less than the map path's 0.25-0.34 ms over nvJPEG alone?
//
// The texture's memory is a Vulkan image (optimal tiling, RGBA8) exported as an opaque file
// descriptor and imported twice: into GL (GL_EXT_memory_object_fd, glTexStorageMem2DEXT) and
// into CUDA (cudaImportExternalMemory, a mipmapped array). Two Vulkan binary semaphores, also
// imported into both, order the two APIs on the GPU. Vulkan itself never submits work.
//
// Rows: interop alone (p50/p10/p90 of --iters host wall times): plain CUDA copies, the map path,
// the shared texture with each kind of wait. Then per JPEG of that size, an A/B interleaved in 5
// rounds: nvJPEG alone, decode_to_device, decode_to_texture (map path), and decode_to_device +
// a copy into the shared texture, each ended at CUDA (stream, event) and at GL (+ a GL fence),
// back to back and in a client's cadence (GL work, 2 ms idle, then the update).
//
// Usage: cuda_external_memory_probe [--iters N] FILE.jpg...   (a GPU, EGL and libvulkan.so.1)
#define VK_NO_PROTOTYPES
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvjpeg.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "cuda/testing/bench_timing.h"
#include "cuda/testing/headless_gl.h"
#include "pixpath/cuda/gpu_jpeg.h"

using namespace pixpath;
using namespace pixpath::cuda;
using Clock = std::chrono::steady_clock;

extern "C" cudaError_t CUDARTAPI cudaGraphicsGLRegisterImage(cudaGraphicsResource** resource, unsigned int image,
                                                             unsigned int target, unsigned int flags);

namespace {

using testing::fence_poll;
using testing::percentiles;
using testing::read_file;
using testing::Stats;
using testing::time_it;

void line(const std::string& what, const std::string& size, const Stats& s) {
  std::printf("| %s | %s | %.3f | %.3f | %.3f |\n", what.c_str(), size.c_str(), s.p50, s.p10, s.p90);
  std::fflush(stdout);
}

#define CK(x)                                                                   \
  do {                                                                          \
    if (!(x)) {                                                                 \
      std::fprintf(stderr, "probe: %s failed (line %d)\n", #x, __LINE__);       \
      std::exit(3);                                                             \
    }                                                                           \
  } while (0)

// The few Vulkan entry points the probe needs, loaded from libvulkan.so.1.
struct Vk {
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  PFN_vkCreateImage create_image = nullptr;
  PFN_vkGetImageMemoryRequirements image_requirements = nullptr;
  PFN_vkAllocateMemory allocate = nullptr;
  PFN_vkBindImageMemory bind = nullptr;
  PFN_vkGetMemoryFdKHR memory_fd = nullptr;
  PFN_vkCreateSemaphore create_semaphore = nullptr;
  PFN_vkGetSemaphoreFdKHR semaphore_fd = nullptr;
  VkPhysicalDeviceMemoryProperties memory_properties{};

  bool init(const uint8_t cuda_uuid[16]) {
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return std::fprintf(stderr, "vulkan: %s\n", dlerror()), false;
    gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    auto create_instance = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "pixpath-probe";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    if (VkResult r = create_instance(&ici, nullptr, &instance); r != VK_SUCCESS)
      return std::fprintf(stderr, "vkCreateInstance: %d\n", r), false;
#define VKI(name) reinterpret_cast<PFN_##name>(gipa(instance, #name))
    uint32_t n = 0;
    VKI(vkEnumeratePhysicalDevices)(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> all(n);
    VKI(vkEnumeratePhysicalDevices)(instance, &n, all.data());
    for (auto p : all) {
      VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
      VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
      VKI(vkGetPhysicalDeviceProperties2)(p, &props);
      std::printf("vulkan device: %s (api %u.%u)%s\n", props.properties.deviceName,
                  VK_API_VERSION_MAJOR(props.properties.apiVersion),
                  VK_API_VERSION_MINOR(props.properties.apiVersion),
                  std::memcmp(id.deviceUUID, cuda_uuid, 16) == 0 ? " = the CUDA device" : "");
      if (std::memcmp(id.deviceUUID, cuda_uuid, 16) == 0) physical = p;
    }
    if (!physical) return std::fprintf(stderr, "vulkan: no device with the CUDA device's UUID\n"), false;
    VKI(vkGetPhysicalDeviceMemoryProperties)(physical, &memory_properties);
    const float priority = 1.f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = 0;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    const char* exts[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &q;
    dci.enabledExtensionCount = 2;
    dci.ppEnabledExtensionNames = exts;
    if (VkResult r = VKI(vkCreateDevice)(physical, &dci, nullptr, &device); r != VK_SUCCESS)
      return std::fprintf(stderr, "vkCreateDevice: %d\n", r), false;
    auto gdpa = VKI(vkGetDeviceProcAddr);
#define VKD(name) reinterpret_cast<PFN_##name>(gdpa(device, #name))
    create_image = VKD(vkCreateImage);
    image_requirements = VKD(vkGetImageMemoryRequirements);
    allocate = VKD(vkAllocateMemory);
    bind = VKD(vkBindImageMemory);
    memory_fd = VKD(vkGetMemoryFdKHR);
    create_semaphore = VKD(vkCreateSemaphore);
    semaphore_fd = VKD(vkGetSemaphoreFdKHR);
    return create_image && allocate && memory_fd && create_semaphore && semaphore_fd;
  }
};

// A window texture whose memory GL and CUDA share (see the top of the file).
struct SharedTexture {
  int w = 0, h = 0;
  GLuint gl_texture = 0, gl_memory = 0;
  cudaExternalMemory_t cuda_memory = nullptr;
  cudaMipmappedArray_t mipmapped = nullptr;
  cudaArray_t array = nullptr;
  GLuint gl_cuda_done = 0, gl_gl_done = 0;  // GL's view of the two semaphores
  cudaExternalSemaphore_t cuda_cuda_done = nullptr, cuda_gl_done = nullptr;

  bool create(Vk& vk, int width, int height) {
    w = width;
    h = height;
    VkExternalMemoryImageCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, &ext};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = VK_FORMAT_R8G8B8A8_UNORM;
    ii.extent = {uint32_t(w), uint32_t(h), 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
               VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image = VK_NULL_HANDLE;
    if (vk.create_image(vk.device, &ii, nullptr, &image) != VK_SUCCESS) return false;
    VkMemoryRequirements req{};
    vk.image_requirements(vk.device, image, &req);
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < vk.memory_properties.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) &&
          (vk.memory_properties.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
        type = i;
        break;
      }
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.image = image;
    VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, &dedicated};
    export_info.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &export_info};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    if (vk.allocate(vk.device, &ai, nullptr, &memory) != VK_SUCCESS) return false;
    if (vk.bind(vk.device, image, memory, 0) != VK_SUCCESS) return false;
    VkMemoryGetFdInfoKHR gfi{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    gfi.memory = memory;
    gfi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd_gl = -1, fd_cuda = -1;
    if (vk.memory_fd(vk.device, &gfi, &fd_gl) != VK_SUCCESS || vk.memory_fd(vk.device, &gfi, &fd_cuda) != VK_SUCCESS)
      return false;

    // GL: a texture over the memory, with the image's format, size and tiling.
    glCreateMemoryObjectsEXT(1, &gl_memory);
    const GLint yes = GL_TRUE;
    glMemoryObjectParameterivEXT(gl_memory, GL_DEDICATED_MEMORY_OBJECT_EXT, &yes);
    glImportMemoryFdEXT(gl_memory, req.size, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd_gl);
    glGenTextures(1, &gl_texture);
    glBindTexture(GL_TEXTURE_2D, gl_texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_TILING_EXT, GL_OPTIMAL_TILING_EXT);
    glTexStorageMem2DEXT(GL_TEXTURE_2D, 1, GL_RGBA8, w, h, gl_memory, 0);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    if (GLenum e = glGetError(); e != GL_NO_ERROR) return std::fprintf(stderr, "GL import: 0x%x\n", e), false;

    // CUDA: the same memory as a 1-level mipmapped array.
    cudaExternalMemoryHandleDesc md{};
    md.type = cudaExternalMemoryHandleTypeOpaqueFd;
    md.handle.fd = fd_cuda;
    md.size = req.size;
    md.flags = cudaExternalMemoryDedicated;
    if (cudaImportExternalMemory(&cuda_memory, &md) != cudaSuccess) return std::fprintf(stderr, "cuda import memory\n"), false;
    cudaExternalMemoryMipmappedArrayDesc ad{};
    ad.offset = 0;
    ad.formatDesc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    ad.extent = cudaExtent{size_t(w), size_t(h), 0};
    ad.flags = cudaArraySurfaceLoadStore | cudaArrayColorAttachment;
    ad.numLevels = 1;
    if (cudaExternalMemoryGetMappedMipmappedArray(&mipmapped, cuda_memory, &ad) != cudaSuccess)
      return std::fprintf(stderr, "cuda mipmapped array\n"), false;
    if (cudaGetMipmappedArrayLevel(&array, mipmapped, 0) != cudaSuccess) return false;

    // Two binary semaphores: CUDA signals cuda_done, GL waits on it; GL signals gl_done, CUDA waits.
    auto semaphore = [&](GLuint* gl, cudaExternalSemaphore_t* cu) {
      VkExportSemaphoreCreateInfo es{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
      es.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
      VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &es};
      VkSemaphore s = VK_NULL_HANDLE;
      if (vk.create_semaphore(vk.device, &sci, nullptr, &s) != VK_SUCCESS) return false;
      VkSemaphoreGetFdInfoKHR sfi{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
      sfi.semaphore = s;
      sfi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
      int a = -1, b = -1;
      if (vk.semaphore_fd(vk.device, &sfi, &a) != VK_SUCCESS || vk.semaphore_fd(vk.device, &sfi, &b) != VK_SUCCESS)
        return false;
      glGenSemaphoresEXT(1, gl);
      glImportSemaphoreFdEXT(*gl, GL_HANDLE_TYPE_OPAQUE_FD_EXT, a);
      cudaExternalSemaphoreHandleDesc sd{};
      sd.type = cudaExternalSemaphoreHandleTypeOpaqueFd;
      sd.handle.fd = b;
      return cudaImportExternalSemaphore(cu, &sd) == cudaSuccess && glGetError() == GL_NO_ERROR;
    };
    return semaphore(&gl_cuda_done, &cuda_cuda_done) && semaphore(&gl_gl_done, &cuda_gl_done);
  }

  bool cuda_signal(cudaStream_t s) {
    cudaExternalSemaphoreSignalParams p{};
    return cudaSignalExternalSemaphoresAsync(&cuda_cuda_done, &p, 1, s) == cudaSuccess;
  }
  bool cuda_wait_gl(cudaStream_t s) {
    cudaExternalSemaphoreWaitParams p{};
    return cudaWaitExternalSemaphoresAsync(&cuda_gl_done, &p, 1, s) == cudaSuccess;
  }
  void gl_wait_cuda() {
    const GLenum layout = GL_LAYOUT_SHADER_READ_ONLY_EXT;
    glWaitSemaphoreEXT(gl_cuda_done, 0, nullptr, 1, &gl_texture, &layout);
  }
  void gl_signal_done() {
    const GLenum layout = GL_LAYOUT_SHADER_READ_ONLY_EXT;
    glSignalSemaphoreEXT(gl_gl_done, 0, nullptr, 1, &gl_texture, &layout);
    glFlush();
  }
};

}  // namespace

int main(int argc, char** argv) {
  int iters = 100;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else files.push_back(argv[i]);
  }
  testing::HeadlessGl gl;
  if (!gl.ok()) return std::fprintf(stderr, "headless GL: %s\n", gl.error().c_str()), 2;
  std::printf("GL: %s\n", gl.renderer().c_str());
  const char* gl_ext_needed[] = {"GL_EXT_memory_object_fd", "GL_EXT_semaphore_fd"};
  for (const char* e : gl_ext_needed)
    if (!epoxy_has_gl_extension(e)) return std::fprintf(stderr, "GL lacks %s\n", e), 2;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  uint8_t uuid[16];
  std::memcpy(uuid, &prop.uuid, 16);
  uint8_t gl_uuid[16] = {};
  glGetUnsignedBytei_vEXT(GL_DEVICE_UUID_EXT, 0, gl_uuid);
  std::printf("CUDA device 0: %s; GL device UUID %s the CUDA device's\n", prop.name,
              std::memcmp(uuid, gl_uuid, 16) == 0 ? "equals" : "DIFFERS FROM");
  Vk vk;
  if (!vk.init(uuid)) return 2;
  auto created = GpuJpegDecoder::create();
  if (!created.ok()) return std::fprintf(stderr, "GPU decoder: %s\n", created.error().message().c_str()), 2;
  auto& dec = **created;

  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t block_ev = nullptr;
  cudaEventCreateWithFlags(&block_ev, cudaEventDisableTiming | cudaEventBlockingSync);
  std::printf("\n| what | size | p50 ms | p10 ms | p90 ms |\n|---|---|---|---|---|\n");

  for (auto [w, h] : {std::pair{3840, 2160}, std::pair{1920, 1080}}) {
    const std::string size = std::to_string(w) + "x" + std::to_string(h);
    SharedTexture st;
    if (!st.create(vk, w, h)) return std::fprintf(stderr, "shared texture %s failed\n", size.c_str()), 2;
    const size_t pitch = size_t(w) * 4;
    void *src = nullptr, *dst = nullptr;
    CK(cudaMalloc(&src, pitch * h) == cudaSuccess && cudaMalloc(&dst, pitch * h) == cudaSuccess);
    // Correctness: a CUDA write is what GL reads back (after the semaphore), and a GL write
    // (after GL's semaphore) is what CUDA reads.
    {
      std::vector<uint8_t> pattern(pitch * h);
      for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(i * 7 + i / pitch);
      CK(cudaMemcpy(src, pattern.data(), pattern.size(), cudaMemcpyHostToDevice) == cudaSuccess);
      CK(cudaMemcpy2DToArrayAsync(st.array, 0, 0, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess);
      CK(st.cuda_signal(stream));
      st.gl_wait_cuda();
      const auto back = testing::HeadlessGl::read_texture(st.gl_texture, w, h);
      std::printf("correctness %s: GL reads CUDA's write: %s\n", size.c_str(), back == pattern ? "identical" : "DIFFERENT");
      testing::HeadlessGl::fill_texture(st.gl_texture, w, h, 0x5a);
      st.gl_signal_done();
      CK(st.cuda_wait_gl(stream));
      std::vector<uint8_t> cu(pitch * h);
      CK(cudaMemcpy2DFromArrayAsync(dst, pitch, st.array, 0, 0, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess);
      CK(cudaStreamSynchronize(stream) == cudaSuccess);
      CK(cudaMemcpy(cu.data(), dst, cu.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
      std::printf("correctness %s: CUDA reads GL's write: %s\n", size.c_str(),
                  std::all_of(cu.begin(), cu.end(), [](uint8_t v) { return v == 0x5a; }) ? "identical" : "DIFFERENT");
    }
    // Baseline: the map path on an ordinary texture.
    GLuint tex = testing::HeadlessGl::make_texture(w, h);
    cudaGraphicsResource_t res = nullptr;
    CK(cudaGraphicsGLRegisterImage(&res, tex, GL_TEXTURE_2D, cudaGraphicsRegisterFlagsSurfaceLoadStore) == cudaSuccess);
    auto copy_plain = [&] {
      return cudaMemcpy2DAsync(dst, pitch, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
    };
    auto copy_mapped = [&] {
      cudaArray_t a = nullptr;
      return cudaGraphicsMapResources(1, &res, stream) == cudaSuccess &&
             cudaGraphicsSubResourceGetMappedArray(&a, res, 0, 0) == cudaSuccess &&
             cudaMemcpy2DToArrayAsync(a, 0, 0, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess &&
             cudaGraphicsUnmapResources(1, &res, stream) == cudaSuccess;
    };
    auto copy_shared = [&] {
      return cudaMemcpy2DToArrayAsync(st.array, 0, 0, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
    };
    auto sync = [&] { return cudaStreamSynchronize(stream) == cudaSuccess; };
    auto sync_blocking = [&] {
      return cudaEventRecord(block_ev, stream) == cudaSuccess && cudaEventSynchronize(block_ev) == cudaSuccess;
    };
    line("2-D copy in CUDA memory + stream sync", size, time_it(iters, 10, [&] { return copy_plain() && sync(); }));
    line("2-D copy in CUDA memory + stream sync + GL fence", size,
         time_it(iters, 10, [&] { return copy_plain() && sync() && fence_poll(); }));
    line("map path: map + copy + unmap + stream sync", size, time_it(iters, 10, [&] { return copy_mapped() && sync(); }));
    line("map path: map + copy + unmap + GL fence", size, time_it(iters, 10, [&] { return copy_mapped() && fence_poll(); }));
    line("shared: copy + stream sync", size, time_it(iters, 10, [&] { return copy_shared() && sync(); }));
    line("shared: copy + blocking-sync event", size, time_it(iters, 10, [&] { return copy_shared() && sync_blocking(); }));
    line("shared: copy + CUDA signal, GL waits + GL fence", size, time_it(iters, 10, [&] {
           if (!copy_shared() || !st.cuda_signal(stream)) return false;
           st.gl_wait_cuda();
           return fence_poll();
         }));
    line("shared: GL wait queued first, then copy + CUDA signal, GL fence", size, time_it(iters, 10, [&] {
           st.gl_wait_cuda();
           glFlush();
           if (!copy_shared() || !st.cuda_signal(stream)) return false;
           return fence_poll();
         }));
    line("shared: copy + stream sync + GL fence (host order, no semaphore)", size,
         time_it(iters, 10, [&] { return copy_shared() && sync() && fence_poll(); }));
    // GL to CUDA: GL signals (GL idle) and CUDA waits before its write, as a paint after a
    // composite would; and the full round: CUDA write, GL waits and signals, next CUDA write.
    line("shared: GL signal, CUDA waits + copy + stream sync", size, time_it(iters, 10, [&] {
           st.gl_signal_done();
           return st.cuda_wait_gl(stream) && copy_shared() && sync();
         }));
    line("shared: GL signal, fence; then CUDA waits + copy + stream sync (timed after the fence)", size, [&] {
      std::vector<double> v;
      for (int i = 0; i < iters + 10; ++i) {
        st.gl_signal_done();
        fence_poll();
        const auto t0 = Clock::now();
        if (!st.cuda_wait_gl(stream) || !copy_shared() || !sync()) return Stats{-1, -1, -1};
        if (i >= 10) v.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      return percentiles(std::move(v));
    }());
    cudaStreamSynchronize(stream);
    cudaGraphicsUnregisterResource(res);
    glDeleteTextures(1, &tex);

    // Pictures of this size, A/B: every way of getting the picture somewhere, interleaved in
    // rounds (this machine drifts by 0.1-0.3 ms between runs), each ended two ways: when CUDA
    // is done (stream or event) and when GL can use the result (a GL fence afterwards; for the
    // shared texture after GL waited on CUDA's semaphore). Two cadences: back to back, and as
    // a client runs (GL did some work, then 2 ms idle, then the update; only the update timed).
    for (const char* path : files) {
      const auto data = read_file(path);
      GpuDecodeParams params;
      auto info = dec.inspect(data, params);
      if (!info.ok() || info->width != w || info->height != h) continue;
      std::string name = path;
      name = name.substr(name.rfind('/') + 1);
      nvjpegHandle_t nvj = nullptr;
      nvjpegJpegState_t nvj_state = nullptr;
      nvjpegCreateSimple(&nvj);
      nvjpegJpegStateCreate(nvj, &nvj_state);
      void* rgbi = nullptr;
      cudaMalloc(&rgbi, size_t(w) * h * 3);
      nvjpegImage_t out{};
      out.channel[0] = static_cast<unsigned char*>(rgbi);
      out.pitch[0] = size_t(w) * 3;
      GLuint t2 = testing::HeadlessGl::make_texture(w, h);
      const GlTextureRegion region{t2, w, h, 0, 0};
      auto nvjpeg_alone = [&] {
        return nvjpegDecode(nvj, nvj_state, data.data(), data.size(), NVJPEG_OUTPUT_RGBI, &out, stream) ==
                   NVJPEG_STATUS_SUCCESS && sync();
      };
      auto device = [&] {
        auto pic = dec.decode_to_device(data, params);
        return pic.ok() && pic->plane(0).storage->wait_ready().ok();
      };
      auto texture = [&] { return dec.decode_to_texture(data, params, region).ok() && cudaDeviceSynchronize() == cudaSuccess; };
      auto texture_gl = [&] { return dec.decode_to_texture(data, params, region).ok() && fence_poll(); };
      // decode_to_device, a host wait on its event, a copy into the shared texture: an upper
      // bound for a kernel that would write the shared texture directly.
      auto shared = [&](bool gl_end) {
        auto pic = dec.decode_to_device(data, params);
        if (!pic.ok()) return false;
        const auto& plane = pic->plane(0);
        if (!plane.storage->wait_ready().ok()) return false;
        if (cudaMemcpy2DToArrayAsync(st.array, 0, 0, static_cast<const uint8_t*>(plane.storage->data()) + plane.offset,
                                     plane.stride, size_t(w) * 4, h, cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
          return false;
        if (!gl_end) return sync();
        if (!st.cuda_signal(stream)) return false;
        st.gl_wait_cuda();
        return fence_poll();
      };
      struct Variant {
        const char* what;
        std::function<bool()> fn;
      };
      const std::vector<Variant> variants = {
          {"nvJPEG alone (nvjpegDecode RGBI) + stream sync", nvjpeg_alone},
          {"nvJPEG alone + stream sync + GL fence", [&] { return nvjpeg_alone() && fence_poll(); }},
          {"decode_to_device + its event", device},
          {"decode_to_device + its event + GL fence", [&] { return device() && fence_poll(); }},
          {"decode_to_texture (map path) + cudaDeviceSynchronize", texture},
          {"decode_to_texture (map path) + GL fence", texture_gl},
          {"shared texture: decode_to_device, copy + stream sync", [&] { return shared(false); }},
          {"shared texture: decode_to_device, copy, semaphore + GL fence", [&] { return shared(true); }},
      };
      const int rounds = 5, per_round = std::max(10, iters / rounds);
      // [cadence][variant][round] = p50 of the round
      std::vector<std::vector<std::vector<double>>> p50(2, std::vector<std::vector<double>>(variants.size()));
      for (const auto& v : variants)  // warm-up
        for (int i = 0; i < 5; ++i) CK(v.fn());
      for (int r = 0; r < rounds; ++r)
        for (int cadence = 0; cadence < 2; ++cadence)
          for (size_t k = 0; k < variants.size(); ++k) {
            std::vector<double> ms;
            for (int i = 0; i < per_round; ++i) {
              if (cadence == 1) {
                fence_poll();
                const auto idle_end = Clock::now() + std::chrono::milliseconds(2);
                while (Clock::now() < idle_end) {
                }
              }
              const auto t0 = Clock::now();
              CK(variants[k].fn());
              ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            }
            p50[cadence][k].push_back(percentiles(std::move(ms)).p50);
          }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      for (int cadence = 0; cadence < 2; ++cadence) {
        std::printf("\n%s, %s, %d rounds of %d (median of the rounds' p50s; min-max of them; "
                    "differences: median of the per-round differences, same cadence and same end)\n\n"
                    "| what | ms | rounds min-max | minus nvJPEG alone, same end | minus decode_to_device, same end |\n"
                    "|---|---|---|---|---|\n",
                    name.c_str(), cadence ? "after GL work + 2 ms idle" : "back to back", rounds, per_round);
        for (size_t k = 0; k < variants.size(); ++k) {
          const auto& v = p50[cadence][k];
          const size_t same_end_nvjpeg = k % 2, same_end_device = 2 + k % 2;
          auto diff = [&](size_t base) {
            std::vector<double> d;
            for (int r = 0; r < rounds; ++r) d.push_back(v[r] - p50[cadence][base][r]);
            return median(d);
          };
          std::printf("| %s | %.3f | %.3f-%.3f | %+.3f | %+.3f |\n", variants[k].what, median(v),
                      *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()),
                      diff(same_end_nvjpeg), diff(same_end_device));
        }
      }
      std::fflush(stdout);
      dec.forget_texture(t2);
      glDeleteTextures(1, &t2);
      cudaFree(rgbi);
      nvjpegJpegStateDestroy(nvj_state);
      nvjpegDestroy(nvj);
    }
    cudaFree(src);
    cudaFree(dst);
  }
  std::printf("decoder after: %s\n", dec.info_json().c_str());
  return 0;
}
