#include "pixpath/gl/gl_context.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "internal/context_impl.h"
#include "internal/gl_window_error.h"
#include "internal/glfw_x11.h"

namespace pixpath::gl {
namespace {

using internal::hex;

Error unavailable(std::string stage, std::string reason) {
  return Error(ErrorCode::Unavailable, "gl", std::move(stage), std::move(reason));
}

bool client_ext(const char* name) { return epoxy_has_egl_extension(EGL_NO_DISPLAY, name); }

struct EglDevice {
  EGLDeviceEXT device = nullptr;
  int index = -1;
  int cuda = -1;
  std::string description;
};

std::vector<EglDevice> list_devices() {
  std::vector<EglDevice> out;
  if (!client_ext("EGL_EXT_device_enumeration") && !client_ext("EGL_EXT_device_base")) return out;
  EGLint n = 0;
  if (!eglQueryDevicesEXT(0, nullptr, &n) || n <= 0) return out;
  std::vector<EGLDeviceEXT> devices(static_cast<size_t>(n));
  if (!eglQueryDevicesEXT(n, devices.data(), &n)) return out;
  for (EGLint i = 0; i < n; ++i) {
    EglDevice d;
    d.device = devices[static_cast<size_t>(i)];
    d.index = i;
    const char* exts = eglQueryDeviceStringEXT(d.device, EGL_EXTENSIONS);
    d.description = exts ? exts : "";
    if (exts && strstr(exts, "EGL_NV_device_cuda")) {
      EGLAttrib cuda = -1;
      if (eglQueryDeviceAttribEXT(d.device, EGL_CUDA_DEVICE_NV, &cuda)) d.cuda = static_cast<int>(cuda);
    }
    if (exts && strstr(exts, "EGL_EXT_device_drm")) {
      const char* file = eglQueryDeviceStringEXT(d.device, EGL_DRM_DEVICE_FILE_EXT);
      if (file) d.description = std::string(file) + " " + d.description;
    }
    out.push_back(d);
  }
  return out;
}

Result<EglDevice> choose_device(GlContextOptions o) {
  if (o.cuda_device < 0 && o.egl_device_index < 0) {
    if (const char* e = std::getenv("PIXPATH_GL_CUDA_DEVICE")) o.cuda_device = std::atoi(e);
  }
  auto devices = list_devices();
  if (devices.empty()) return unavailable("choose EGL device", "no EGL devices (EGL_EXT_device_enumeration)");
  if (o.egl_device_index >= 0) {
    if (o.egl_device_index >= static_cast<int>(devices.size())) {
      return unavailable("choose EGL device", "EGL device " + std::to_string(o.egl_device_index) +
                                                  " asked, " + std::to_string(devices.size()) + " exist");
    }
    return devices[static_cast<size_t>(o.egl_device_index)];
  }
  if (o.cuda_device >= 0) {
    for (auto& d : devices) {
      if (d.cuda == o.cuda_device) return d;
    }
    return unavailable("choose EGL device",
                       "no EGL device reports CUDA device " + std::to_string(o.cuda_device));
  }
  for (auto& d : devices) {
    if (d.cuda >= 0) return d;
  }
  return devices.front();
}

GlPlatform platform_from_env() {
  const char* e = std::getenv("PIXPATH_GL_PLATFORM");
  if (!e) return GlPlatform::Auto;
  std::string s = e;
  if (s == "surfaceless") return GlPlatform::Surfaceless;
  if (s == "device") return GlPlatform::Device;
  if (s == "x11") return GlPlatform::X11;
  return GlPlatform::Auto;
}

GlPlatform resolve_platform(const GlContextOptions& o) {
  if (o.platform != GlPlatform::Auto) return o.platform;
  GlPlatform env = platform_from_env();
  if (env != GlPlatform::Auto) return env;
  for (auto& d : list_devices()) {
    if (d.cuda >= 0) return GlPlatform::Device;
  }
  if (client_ext("EGL_MESA_platform_surfaceless")) return GlPlatform::Surfaceless;
  return GlPlatform::Device;
}

Result<EGLDisplay> open_display(GlContext::Impl& impl, GlPlatform platform) {
  if (!client_ext("EGL_EXT_platform_base") && epoxy_egl_version(EGL_NO_DISPLAY) < 15) {
    return unavailable("open EGL display", "EGL_EXT_platform_base is missing");
  }
  EGLDisplay display = EGL_NO_DISPLAY;
  switch (platform) {
    case GlPlatform::Surfaceless:
      if (!client_ext("EGL_MESA_platform_surfaceless")) {
        return unavailable("open EGL display", "EGL_MESA_platform_surfaceless is missing");
      }
      display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
      break;
    case GlPlatform::Device: {
      if (!client_ext("EGL_EXT_platform_device")) {
        return unavailable("open EGL display", "EGL_EXT_platform_device is missing");
      }
      PIXPATH_TRY(EglDevice d, choose_device(impl.options));
      impl.info.egl_device_index = d.index;
      impl.info.cuda_device = d.cuda;
      display = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, d.device, nullptr);
      break;
    }
    case GlPlatform::X11: {
      if (!client_ext("EGL_KHR_platform_x11") && !client_ext("EGL_EXT_platform_x11")) {
        return unavailable("open EGL display", "EGL_KHR_platform_x11 is missing");
      }
      PIXPATH_TRY(void* xdpy, internal::glfw_acquire());
      impl.uses_glfw = true;
      impl.x11_display = xdpy;
      display = eglGetPlatformDisplayEXT(EGL_PLATFORM_X11_KHR, xdpy, nullptr);
      break;
    }
    case GlPlatform::Auto:
      break;
  }
  if (display == EGL_NO_DISPLAY) {
    return unavailable("open EGL display", std::string(to_string(platform)) + " platform: eglGetPlatformDisplay failed (" +
                                               hex(eglGetError()) + ")");
  }
  EGLint major = 0, minor = 0;
  if (!eglInitialize(display, &major, &minor)) {
    return unavailable("open EGL display", std::string(to_string(platform)) + " platform: eglInitialize failed (" +
                                               hex(eglGetError()) + ")");
  }
  return display;
}

Result<void> create_context(GlContext::Impl& impl, GlPlatform platform) {
  EGLDisplay dpy = impl.display;
  const bool want_window = platform == GlPlatform::X11;
  std::string why;
  for (int es = impl.options.force_gles ? 1 : 0; es <= 1; ++es) {
    if (!eglBindAPI(es ? EGL_OPENGL_ES_API : EGL_OPENGL_API)) {
      why += es ? " no OpenGL ES API;" : " no OpenGL API;";
      continue;
    }
    const EGLint config_attribs[] = {
        EGL_SURFACE_TYPE, want_window ? (EGL_WINDOW_BIT | EGL_PBUFFER_BIT) : EGL_PBUFFER_BIT,
        EGL_RENDERABLE_TYPE, es ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_BIT,
        EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
        EGL_NONE};
    EGLint count = 0;
    std::vector<EGLConfig> configs(64);
    if (!eglChooseConfig(dpy, config_attribs, configs.data(), 64, &count) || count == 0) {
      why += es ? " no GLES3 config;" : " no GL config;";
      continue;
    }
    // Prefer exactly 8-bit RGB with no alpha (matches a 24-bit X visual), else the first.
    EGLConfig config = configs[0];
    for (EGLint i = 0; i < count; ++i) {
      EGLint r, g, b, a;
      eglGetConfigAttrib(dpy, configs[static_cast<size_t>(i)], EGL_RED_SIZE, &r);
      eglGetConfigAttrib(dpy, configs[static_cast<size_t>(i)], EGL_GREEN_SIZE, &g);
      eglGetConfigAttrib(dpy, configs[static_cast<size_t>(i)], EGL_BLUE_SIZE, &b);
      eglGetConfigAttrib(dpy, configs[static_cast<size_t>(i)], EGL_ALPHA_SIZE, &a);
      if (r == 8 && g == 8 && b == 8 && a == 0) {
        config = configs[static_cast<size_t>(i)];
        break;
      }
    }
    const EGLint gl_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                 EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                 EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    const EGLint es_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, es ? es_attribs : gl_attribs);
    if (ctx == EGL_NO_CONTEXT) {
      why += std::string(es ? " GLES 3 context failed (" : " GL 3.3 core context failed (") +
             hex(eglGetError()) + ");";
      continue;
    }
    impl.context = ctx;
    impl.config = config;
    break;
  }
  if (impl.context == EGL_NO_CONTEXT) return unavailable("create context", why);
  if (!epoxy_has_egl_extension(dpy, "EGL_KHR_surfaceless_context")) {
    const EGLint pb[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    impl.idle_surface = eglCreatePbufferSurface(dpy, impl.config, pb);
    if (impl.idle_surface == EGL_NO_SURFACE) {
      return unavailable("create context", "no surfaceless contexts and no pbuffer (" + hex(eglGetError()) + ")");
    }
  }
  return impl.make_current();
}

}  // namespace

std::string_view to_string(GlPlatform platform) {
  switch (platform) {
    case GlPlatform::Auto: return "auto";
    case GlPlatform::Surfaceless: return "surfaceless";
    case GlPlatform::Device: return "device";
    case GlPlatform::X11: return "x11";
  }
  return "?";
}

// ---- ScopedCurrent ---------------------------------------------------------------------

ScopedCurrent::ScopedCurrent(GlContext::Impl& impl)
    : display_(eglGetCurrentDisplay()),
      context_(eglGetCurrentContext()),
      draw_(eglGetCurrentSurface(EGL_DRAW)),
      read_(eglGetCurrentSurface(EGL_READ)) {
  if (context_ != impl.context) {
    switched_ = impl.make_current().ok();
  }
}

ScopedCurrent::~ScopedCurrent() {
  if (!switched_) return;
  if (context_ != EGL_NO_CONTEXT) {
    eglMakeCurrent(display_, draw_, read_, context_);
  }
}

// ---- Impl ------------------------------------------------------------------------------

Result<void> GlContext::Impl::make_current() {
  if (eglGetCurrentContext() == context && eglGetCurrentSurface(EGL_DRAW) == idle_surface) return ok();
  if (!eglMakeCurrent(display, idle_surface, idle_surface, context)) {
    return Error(ErrorCode::Internal, "gl", "make current", "eglMakeCurrent failed (" + hex(eglGetError()) + ")");
  }
  return ok();
}

GlContext::Impl::~Impl() {
  if (context != EGL_NO_CONTEXT) {
    if (make_current().ok()) {
      if (domain) (void)domain->shutdown();
      ring.reset();
      timer.destroy();
      for (auto& t : staging_r8) t.destroy();
      staging_rg8.destroy();
      staging_rgba8.destroy();
      staging_rgb8.destroy();
      scroll_temp.destroy();
      if (paint_program.program) glDeleteProgram(paint_program.program);
      if (vao) glDeleteVertexArrays(1, &vao);
      if (read_fbo) glDeleteFramebuffers(1, &read_fbo);
      if (draw_fbo) glDeleteFramebuffers(1, &draw_fbo);
    }
    alive.reset();
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (idle_surface != EGL_NO_SURFACE) eglDestroySurface(display, idle_surface);
    eglDestroyContext(display, context);
  }
  if (display != EGL_NO_DISPLAY) eglTerminate(display);
  if (uses_glfw) internal::glfw_release();
}

void GlContext::Impl::copy_texture(GLuint src, int sx, int sy, GLuint dst, int dx, int dy, int w,
                                   int h) {
  if (w <= 0 || h <= 0) return;
  if (caps.copy_image) {
    glCopyImageSubData(src, GL_TEXTURE_2D, 0, sx, sy, 0, dst, GL_TEXTURE_2D, 0, dx, dy, 0, w, h, 1);
    return;
  }
  glBindFramebuffer(GL_READ_FRAMEBUFFER, read_fbo);
  glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, src, 0);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, draw_fbo);
  glFramebufferTexture2D(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, dst, 0);
  glBlitFramebuffer(sx, sy, sx + w, sy + h, dx, dy, dx + w, dy + h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, 0, 0);
  glFramebufferTexture2D(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, 0, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

Result<void> GlContext::Impl::init_gl() {
  const int v = epoxy_gl_version();
  caps.gles = !epoxy_is_desktop_gl();
  caps.version = v;
  if (caps.gles) {
    if (v < 30) return unavailable("init", "OpenGL ES " + std::to_string(v / 10) + "." + std::to_string(v % 10) + " < 3.0");
    caps.buffer_storage = epoxy_has_gl_extension("GL_EXT_buffer_storage");
    caps.copy_image = v >= 32;
    caps.timer_query = epoxy_has_gl_extension("GL_EXT_disjoint_timer_query");
    caps.bgra_upload = false;  // GL_BGRA needs a BGRA internal format on ES: swizzled in a shader instead
  } else {
    if (v < 33) return unavailable("init", "OpenGL " + std::to_string(v / 10) + "." + std::to_string(v % 10) + " < 3.3");
    caps.buffer_storage = v >= 44 || epoxy_has_gl_extension("GL_ARB_buffer_storage");
    caps.copy_image = v >= 43 || epoxy_has_gl_extension("GL_ARB_copy_image");
    caps.timer_query = true;  // core in 3.3
    caps.bgra_upload = true;
  }
  caps.buffer_storage &= !options.disable_buffer_storage;
  caps.copy_image &= !options.disable_copy_image;
  caps.timer_query &= !options.disable_timer_query;
  caps.bgra_upload &= !options.disable_bgra;

  auto str = [](GLenum e) {
    const GLubyte* s = glGetString(e);
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string();
  };
  info.gl_vendor = str(GL_VENDOR);
  info.renderer = str(GL_RENDERER);
  info.version = str(GL_VERSION);
  const char* ev = eglQueryString(display, EGL_VENDOR);
  info.egl_vendor += ev ? ev : "";
  // On a GPU, glTexSubImage2D from client memory is slow (the driver copies it on the CPU,
  // and on NVIDIA waits ~3 ms when the texture was drawn into since): staging wins there. On
  // llvmpipe the client upload is itself a CPU copy and staging only adds one.
  const bool software = info.renderer.find("llvmpipe") != std::string::npos ||
                        info.renderer.find("softpipe") != std::string::npos;
  using Uploads = GlContextOptions::ClientUploads;
  Uploads uploads = options.client_uploads;
  if (uploads == Uploads::Auto) {  // PIXPATH_GL_CLIENT_UPLOADS=staged|direct: for A/B runs
    const char* e = std::getenv("PIXPATH_GL_CLIENT_UPLOADS");
    const std::string env = e ? e : "";
    uploads = env == "staged" ? Uploads::Staged : env == "direct" ? Uploads::Direct : Uploads::Auto;
  }
  caps.staged_client_uploads = uploads == Uploads::Staged || (uploads == Uploads::Auto && !software);

  glGenVertexArrays(1, &vao);
  glGenFramebuffers(1, &read_fbo);
  glGenFramebuffers(1, &draw_fbo);
  PIXPATH_CHECK(internal::build_paint_program(caps.gles, paint_program));
  ring = std::make_unique<internal::UploadRing>(caps.buffer_storage, caps.gles,
                                                options.upload_budget_bytes,
                                                options.max_upload_buffers, &stats);
  staging_r8[0].internal_format = staging_r8[1].internal_format = staging_r8[2].internal_format = GL_R8;
  staging_rg8.internal_format = GL_RG8;
  staging_rgba8.internal_format = GL_RGBA8;
  staging_rgb8.internal_format = GL_RGB8;
  scroll_temp.internal_format = GL_RGBA8;
  timer.init(caps.timer_query);
  domain = ReleaseDomain::for_current_thread("gl");
  return ok();
}

// ---- GlContext -------------------------------------------------------------------------

GlContext::GlContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GlContext::~GlContext() = default;

Result<std::shared_ptr<GlContext>> GlContext::create(const GlContextOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  GlPlatform platform = resolve_platform(options);
  impl->info.platform = platform;
  auto display = open_display(*impl, platform);
  if (!display.ok() && options.platform == GlPlatform::Auto && platform_from_env() == GlPlatform::Auto) {
    // Auto, and neither a CUDA EGL device nor Mesa's surfaceless platform could be opened: the
    // EGL default display. Seen on the H200 device machine, where Debian's glvnd libEGL offers
    // no device enumeration but NVIDIA's default display is the (headless) GPU.
    EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (d != EGL_NO_DISPLAY && eglInitialize(d, nullptr, nullptr)) {
      display = d;
      impl->info.platform = platform = GlPlatform::Device;
      impl->info.egl_device_index = -1;
      impl->info.egl_vendor = "(EGL default display) ";
    }
  }
  if (!display.ok()) return display.error();
  impl->display = *display;
  PIXPATH_CHECK(create_context(*impl, platform));
  PIXPATH_CHECK(impl->init_gl());
  return std::shared_ptr<GlContext>(new GlContext(std::move(impl)));
}

std::vector<std::string> GlContext::probe() {
  std::vector<std::string> out;
  const char* ce = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  out.push_back(std::string("client extensions: ") + (ce ? ce : "(none: EGL 1.4 without EGL_EXT_client_extensions)"));
  auto try_display = [&](const char* label, EGLenum platform, void* native) {
    EGLDisplay d = eglGetPlatformDisplayEXT(platform, native, nullptr);
    EGLint maj = 0, min = 0;
    if (d == EGL_NO_DISPLAY || !eglInitialize(d, &maj, &min)) {
      out.push_back(std::string(label) + ": cannot be opened");
      return;
    }
    const char* vendor = eglQueryString(d, EGL_VENDOR);
    const char* apis = eglQueryString(d, EGL_CLIENT_APIS);
    out.push_back(std::string(label) + ": EGL " + std::to_string(maj) + "." + std::to_string(min) +
                  ", vendor " + (vendor ? vendor : "?") + ", APIs " + (apis ? apis : "?"));
    eglTerminate(d);
  };
  if (client_ext("EGL_MESA_platform_surfaceless")) {
    try_display("surfaceless", EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY);
  }
  if (client_ext("EGL_EXT_platform_device")) {
    for (auto& d : list_devices()) {
      std::string label = "device " + std::to_string(d.index) +
                          (d.cuda >= 0 ? " (CUDA " + std::to_string(d.cuda) + ")" : "") + " [" +
                          d.description + "]";
      try_display(label.c_str(), EGL_PLATFORM_DEVICE_EXT, d.device);
    }
  }
  return out;
}

Result<void> GlContext::make_current() { return impl_->make_current(); }
Result<void> GlContext::wait_idle() {
  ScopedCurrent current(*impl_);
  glFinish();
  return ok();
}
const GlCaps& GlContext::caps() const { return impl_->caps; }
const GlDeviceInfo& GlContext::info() const { return impl_->info; }
const GlContextOptions& GlContext::options() const { return impl_->options; }
GlStats GlContext::stats() {
  ScopedCurrent current(*impl_);
  impl_->timer.collect(impl_->stats);
  return impl_->stats;
}
const std::shared_ptr<ReleaseDomain>& GlContext::release_domain() const { return impl_->domain; }
Result<int64_t> GlContext::drain_releases() {
  ScopedCurrent current(*impl_);
  return impl_->domain->drain();
}
void* GlContext::egl_display() const { return impl_->display; }
void* GlContext::egl_context() const { return impl_->context; }

}  // namespace pixpath::gl
