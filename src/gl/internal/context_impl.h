// GlContext::Impl: the EGL objects and the GL objects every window of one context shares.
// GL thread only.
#pragma once

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "internal/upload_ring.h"
#include "pixpath/gl/gl_context.h"

namespace pixpath::gl {

namespace internal {

// A growable texture of one internal format: re-created (never re-specified) when a larger
// size is needed; uploads go into its top-left corner.
struct ScratchTexture {
  GLuint name = 0;
  GLenum internal_format = 0;
  int width = 0, height = 0;
  // Ensures at least w x h; returns true when (re)created.
  bool ensure(int w, int h);
  void destroy();
};

// The shader that converts YUV planes or swizzles packed bytes into RGBA, drawing into the
// window texture's framebuffer (optionally scaled).
struct PaintProgram {
  GLuint program = 0;
  GLint u_mode = -1, u_dst_origin = -1, u_dst_size = -1, u_src_size = -1, u_tex_size = -1,
        u_chroma_shift = -1, u_chroma_tex_size = -1, u_swizzle = -1, u_offset = -1,
        u_matrix = -1, u_tex0 = -1, u_tex1 = -1, u_tex2 = -1;
};

// Compiles and links the paint program (GLSL 330 core or 300 es).
Result<void> build_paint_program(bool gles, PaintProgram& out);

// YUV -> RGB for the paint program: the matrix (column-major, for glUniformMatrix3fv) and the
// offsets subtracted from normalised (Y, U, V) first.
struct YuvCoefficients {
  float matrix[9];
  float offset[3];
};
YuvCoefficients yuv_coefficients(bool bt709, bool full_range);

// Ring of GL_TIME_ELAPSED queries, read back asynchronously.
class PaintTimer {
 public:
  void init(bool available);
  void destroy();
  bool begin();  // false: no free query (or no timer queries): this paint goes untimed
  void end();
  void collect(GlStats& stats);  // reads the results that are available, never waits

 private:
  struct Query {
    GLuint name = 0;
    bool in_flight = false;
  };
  bool available_ = false;
  std::vector<Query> queries_;
  size_t next_ = 0;
  int active_ = -1;
};

}  // namespace internal

struct GlContext::Impl {
  GlContextOptions options;
  GlCaps caps;
  GlDeviceInfo info;
  GlStats stats;

  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  EGLConfig config = nullptr;
  EGLSurface idle_surface = EGL_NO_SURFACE;  // a 1x1 pbuffer where surfaceless is missing
  bool uses_glfw = false;                    // X11 platform: windows come from GLFW
  void* x11_display = nullptr;

  std::shared_ptr<ReleaseDomain> domain;
  // Expires when the context is destroyed: releases of GL storages check it.
  std::shared_ptr<int> alive = std::make_shared<int>(0);

  std::unique_ptr<internal::UploadRing> ring;
  internal::PaintProgram paint_program;
  GLuint vao = 0;
  GLuint read_fbo = 0, draw_fbo = 0;  // for blits between arbitrary textures
  // Staging textures for the shader path, by role.
  internal::ScratchTexture staging_r8[3];  // Y, U, V planes or GRAY8
  internal::ScratchTexture staging_rg8;    // NV12's UV plane
  internal::ScratchTexture staging_rgba8;  // 4-byte packed pixels (scaled or swizzled)
  internal::ScratchTexture staging_rgb8;   // 3-byte packed pixels
  internal::ScratchTexture scroll_temp;    // scroll sources, RGBA8
  internal::PaintTimer timer;

  ~Impl();
  // Makes this context current (with its idle surface) when it is not.
  Result<void> make_current();
  Result<void> init_gl();  // after the context is current: caps, programs, ring
  // Copies a rectangle between two RGBA8 textures (glCopyImageSubData or an FBO blit).
  // The regions must not overlap when src == dst.
  void copy_texture(GLuint src, int sx, int sy, GLuint dst, int dx, int dy, int w, int h);
};

// Makes `impl`'s context current for its lifetime and restores the previous one.
class ScopedCurrent {
 public:
  explicit ScopedCurrent(GlContext::Impl& impl);
  ~ScopedCurrent();
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;

 private:
  EGLDisplay display_;
  EGLContext context_;
  EGLSurface draw_, read_;
  bool switched_ = false;
};

}  // namespace pixpath::gl
