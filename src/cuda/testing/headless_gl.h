// A headless desktop-GL 4.5 core context on the EGL device platform (EGL_EXT_device_enumeration
// + EGL_EXT_platform_device, surfaceless), on the EGL device that has a CUDA device
// (EGL_NV_device_cuda). For the GPU tests and the benchmark only: the window system's GL
// backing lives in src/gl.
#pragma once

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cstring>
#include <string>
#include <vector>

namespace pixpath::cuda::testing {

class HeadlessGl {
 public:
  // Makes the context current on the calling thread; error() says why not.
  HeadlessGl() {
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    const std::string ext = client ? client : "";
    if (ext.find("EGL_EXT_device_enumeration") != std::string::npos &&
        ext.find("EGL_EXT_platform_device") != std::string::npos) {
      EGLint n = 0;
      eglQueryDevicesEXT(0, nullptr, &n);
      std::vector<EGLDeviceEXT> devices(static_cast<size_t>(n));
      eglQueryDevicesEXT(n, devices.data(), &n);
      EGLDeviceEXT chosen = EGL_NO_DEVICE_EXT;
      for (auto d : devices) {
        const char* dext = eglQueryDeviceStringEXT(d, EGL_EXTENSIONS);
        if (dext && std::strstr(dext, "EGL_NV_device_cuda")) {
          chosen = d;
          break;
        }
      }
      if (chosen != EGL_NO_DEVICE_EXT) {
        display_ = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, chosen, nullptr);
        platform_ = "EGL device platform (EGL_NV_device_cuda device)";
      } else {
        error_ = "no EGL device with EGL_NV_device_cuda among " + std::to_string(n) + "; ";
      }
    } else {
      error_ = "EGL client extensions lack device enumeration (" +
               (client ? ext : "eglQueryString failed, error " + std::to_string(eglGetError())) + "); ";
    }
    if (display_ == EGL_NO_DISPLAY) {  // NVIDIA's default display is the first GPU when headless
      display_ = eglGetDisplay(EGL_DEFAULT_DISPLAY);
      platform_ = "EGL default display";
    }
    if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, nullptr, nullptr)) {
      error_ += "eglInitialize failed (error " + std::to_string(eglGetError()) + ")";
      display_ = EGL_NO_DISPLAY;
      return;
    }
    error_.clear();
    eglBindAPI(EGL_OPENGL_API);
    const EGLint config_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                     EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config;
    EGLint count = 0;
    if (!eglChooseConfig(display_, config_attribs, &config, 1, &count) || count == 0) {
      error_ = "no EGL config for desktop OpenGL";
      return;
    }
    const EGLint ctx_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                  EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, ctx_attribs);
    if (context_ == EGL_NO_CONTEXT) {
      error_ = "eglCreateContext (GL 4.5 core) failed";
      return;
    }
    if (!eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) {
      error_ = "eglMakeCurrent (surfaceless) failed";
      return;
    }
    ok_ = true;
  }
  ~HeadlessGl() {
    if (display_ != EGL_NO_DISPLAY) {
      eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
      eglTerminate(display_);
    }
  }
  HeadlessGl(const HeadlessGl&) = delete;
  HeadlessGl& operator=(const HeadlessGl&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  std::string renderer() const {
    const auto* r = glGetString(GL_RENDERER);
    const auto* v = glGetString(GL_VERSION);
    return platform_ + ": " + std::string(r ? reinterpret_cast<const char*>(r) : "?") + " / " +
           (v ? reinterpret_cast<const char*>(v) : "?");
  }

  // An immutable RGBA8 texture (what a window backing uses).
  static GLuint make_texture(int w, int h) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, w, h);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
  }
  static std::vector<uint8_t> read_texture(GLuint t, int w, int h) {
    std::vector<uint8_t> px(static_cast<size_t>(w) * h * 4);
    glBindTexture(GL_TEXTURE_2D, t);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    return px;
  }
  static void fill_texture(GLuint t, int w, int h, uint8_t value) {
    std::vector<uint8_t> px(static_cast<size_t>(w) * h * 4, value);
    glBindTexture(GL_TEXTURE_2D, t);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    glBindTexture(GL_TEXTURE_2D, 0);
  }
  // Waits on the host until GL has done everything queued so far (a fence, not glFinish).
  static bool fence_wait() {
    GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    const GLenum r = glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 5'000'000'000ull);
    glDeleteSync(s);
    return r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED;
  }

 private:
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
  bool ok_ = false;
  std::string error_;
  std::string platform_;
};

}  // namespace pixpath::cuda::testing
