// GlContext: the one OpenGL context (EGL) that every GL window backing of a process paints
// with, and the GL resources the windows share (upload buffers, shader programs, staging
// textures, timer queries).
//
// Platforms. Headless contexts come from EGL: Mesa's surfaceless platform
// (EGL_MESA_platform_surfaceless; software rendering with llvmpipe where there is no GPU) or
// the EGL device platform (EGL_EXT_device_enumeration + EGL_EXT_platform_device; on NVIDIA the
// device whose EGL_CUDA_DEVICE_NV matches the CUDA device given, so CUDA-GL interop works).
// Windowed contexts use EGL on X11 (the DISPLAY environment variable) and present each window
// through its own EGL window surface made current with the same context. Auto picks, in
// order: the PIXPATH_GL_PLATFORM environment variable (surfaceless, device or x11), then the
// device platform when an EGL device reports a CUDA device (NVIDIA), then surfaceless, then
// the device platform. Desktop GL 3.3+ core is asked for first, then OpenGL ES 3.0+.
//
// Threading. A GlContext is bound to the thread that created it (its GL thread): every method
// of it and of the GlWindows made from it runs there. GL names are freed there too: storages
// that wrap GL objects carry release_domain(), which queues releases dropped on other threads
// until drain_releases() runs on the GL thread.
//
// Lifetime. Windows hold a shared_ptr to their context; the context (EGL display, context,
// shared GL objects) is destroyed after the last window and the last holder let go.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pixpath/core/release_domain.h"
#include "pixpath/core/result.h"

namespace pixpath::gl {

enum class GlPlatform { Auto, Surfaceless, Device, X11 };
std::string_view to_string(GlPlatform platform);

struct GlContextOptions {
  GlPlatform platform = GlPlatform::Auto;
  // Device platform: choose the EGL device whose EGL_CUDA_DEVICE_NV is this CUDA ordinal
  // (-1: the environment variable PIXPATH_GL_CUDA_DEVICE when set, else the first device
  // that has a CUDA ordinal, else the first device).
  int cuda_device = -1;
  // Device platform: choose this EGL device index (overrides cuda_device when >= 0).
  int egl_device_index = -1;
  // Ask only for OpenGL ES 3 (tests the ES code paths on a desktop driver).
  bool force_gles = false;
  // Pretend these extensions are missing, to exercise fallbacks in tests: buffer_storage
  // (persistent mapping), copy_image (glCopyImageSubData), timer_query, bgra (GL_BGRA upload).
  bool disable_buffer_storage = false;
  bool disable_copy_image = false;
  bool disable_timer_query = false;
  bool disable_bgra = false;
  // Budget for the upload buffers shared by all windows.
  size_t upload_budget_bytes = size_t{256} << 20;
  int max_upload_buffers = 16;
  // Pictures painted from host memory (GlWindow::paint(Picture/view)): copied into an upload
  // buffer first (X bytes made opaque on the way) and uploaded from there, or handed to
  // glTexSubImage2D as client memory. Auto stages on a hardware GPU and not on a software
  // renderer (llvmpipe), where each is the faster (docs/performance.md, "OpenGL backing");
  // the environment variable PIXPATH_GL_CLIENT_UPLOADS=staged|direct overrides Auto.
  enum class ClientUploads { Auto, Staged, Direct };
  ClientUploads client_uploads = ClientUploads::Auto;
};

// What the context can do; decides the code paths.
struct GlCaps {
  bool gles = false;
  int version = 0;  // major * 10 + minor, e.g. 45
  bool buffer_storage = false;   // persistent, coherent mapped upload buffers
  bool copy_image = false;       // glCopyImageSubData (scroll, resize)
  bool timer_query = false;      // GL_TIME_ELAPSED
  bool bgra_upload = false;      // glTexSubImage2D with GL_BGRA / GL_BGR / packed 8_8_8_8
  bool staged_client_uploads = false;  // host pictures go through an upload buffer (options)
};

struct GlDeviceInfo {
  GlPlatform platform = GlPlatform::Auto;
  std::string egl_vendor;   // EGL_VENDOR
  std::string gl_vendor;    // GL_VENDOR
  std::string renderer;     // GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string version;      // GL_VERSION
  int egl_device_index = -1;  // device platform only
  int cuda_device = -1;       // device platform on NVIDIA only
};

// Counters of the GL paint path, summed over every window of one context.
struct GlStats {
  int64_t paints = 0;           // paint calls that reached the GL
  int64_t bytes_uploaded = 0;   // pixel bytes handed to glTexSubImage2D
  int64_t mapped_uploads = 0;   // uploads from a mapped upload buffer (decoder wrote there)
  int64_t client_uploads = 0;   // uploads straight from host pictures (client memory)
  int64_t staged_uploads = 0;   // host pictures copied into an upload buffer, then uploaded
  int64_t shader_paints = 0;    // paints converted/scaled in a fragment shader (YUV, scaled)
  // Pixel copies on the host made by the backing: one per staged upload (it replaces the copy
  // the driver makes of client memory); 0 for pictures decoded into upload buffers.
  int64_t host_copies = 0;
  int64_t upload_waits = 0;     // times an upload buffer was not free and we blocked on a fence
  int64_t upload_buffers_created = 0;
  int64_t external_writes = 0;  // texture writes by other APIs (CUDA; GlBacking::texture_written)
  int64_t scrolls = 0;
  int64_t resizes = 0;
  int64_t readbacks = 0;
  int64_t gpu_timed_paints = 0;  // paints whose GL_TIME_ELAPSED result has come back
  int64_t gpu_time_ns = 0;       // sum of those results
};

class GlContext {
 public:
  // Creates the context and makes it current on the calling thread. Fails with
  // ErrorCode::Unavailable when no EGL display or context can be had.
  [[nodiscard]] static Result<std::shared_ptr<GlContext>> create(const GlContextOptions& options = {});

  // Lists the EGL platforms and devices this process can open, one line each, without
  // creating a context (an eglinfo-like probe for tests and `pixpath` diagnostics).
  static std::vector<std::string> probe();

  ~GlContext();
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;

  // Makes the context current (without a surface) on the calling thread.
  Result<void> make_current();

  // Blocks until the GPU finished everything issued (glFinish). For tests and benchmarks
  // only: the paint path never waits like this.
  Result<void> wait_idle();

  const GlCaps& caps() const;
  const GlDeviceInfo& info() const;
  const GlContextOptions& options() const;
  GlStats stats();  // also collects timer results that have arrived

  // Where GL storages of this context release (current while the context is current on its
  // thread). drain_releases() runs releases queued from other threads.
  const std::shared_ptr<ReleaseDomain>& release_domain() const;
  Result<int64_t> drain_releases();

  // Native handles (EGLDisplay, EGLContext), for CUDA interop and the GL backing internals.
  void* egl_display() const;
  void* egl_context() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  explicit GlContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pixpath::gl
