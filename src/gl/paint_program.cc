// The paint program, staging textures and timer queries shared by the windows of a context.
#include <algorithm>
#include <string>

#include "internal/context_impl.h"

namespace pixpath::gl::internal {
namespace {

// A quad covering the viewport (set to the destination rectangle), no vertex buffers.
constexpr const char* kVertex = R"(
void main() {
  vec2 p = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
)";

// Everything is in texture space: framebuffer row 0 is window row 0 (the top), so no flips.
// p: the source pixel this fragment samples (pixel centres at .5), scaled when the
// destination size differs from the source size. Chroma planes are sampled at p divided by
// the sub-sampling: with NEAREST filtering (unscaled paints) that is chroma pixel
// (x >> shift, y >> shift), i.e. replicated chroma; scaled paints filter linearly.
constexpr const char* kFragment = R"(
uniform int u_mode;            // 0 packed bytes in tex0, 1 planar Y/U/V, 2 Y + interleaved UV
uniform vec2 u_dst_origin;     // destination rectangle in the framebuffer
uniform vec2 u_dst_size;
uniform vec2 u_src_size;       // source picture size (luma)
uniform vec2 u_tex_size;       // size of the texture holding tex0 (the picture is top-left)
uniform vec2 u_chroma_shift;   // chroma sub-sampling divisor per axis (1 or 2)
uniform vec2 u_chroma_tex_size;
uniform ivec4 u_swizzle;       // packed: source channel of r, g, b, a; 4 = constant 1.0
uniform vec3 u_offset;
uniform mat3 u_matrix;
uniform sampler2D u_tex0;
uniform sampler2D u_tex1;
uniform sampler2D u_tex2;
out vec4 frag;

float pick(vec4 t, int i) {
  if (i == 0) return t.r;
  if (i == 1) return t.g;
  if (i == 2) return t.b;
  if (i == 3) return t.a;
  return 1.0;
}

void main() {
  vec2 p = (gl_FragCoord.xy - u_dst_origin) * u_src_size / u_dst_size;
  p = clamp(p, vec2(0.5), u_src_size - vec2(0.5));
  vec4 t = texture(u_tex0, p / u_tex_size);
  if (u_mode == 0) {
    frag = vec4(pick(t, u_swizzle.x), pick(t, u_swizzle.y), pick(t, u_swizzle.z), pick(t, u_swizzle.w));
    return;
  }
  vec2 csize = ceil(u_src_size / u_chroma_shift);
  vec2 pc = clamp(p / u_chroma_shift, vec2(0.5), csize - vec2(0.5)) / u_chroma_tex_size;
  vec2 uv;
  if (u_mode == 1) {
    uv = vec2(texture(u_tex1, pc).r, texture(u_tex2, pc).r);
  } else {
    uv = texture(u_tex1, pc).rg;
  }
  vec3 rgb = u_matrix * (vec3(t.r, uv) - u_offset);
  frag = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
)";

Result<GLuint> compile(GLenum type, const std::string& source) {
  GLuint s = glCreateShader(type);
  const char* src = source.c_str();
  glShaderSource(s, 1, &src, nullptr);
  glCompileShader(s);
  GLint okay = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &okay);
  if (!okay) {
    char log[2048] = {};
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    return Error(ErrorCode::Internal, "gl", "compile shader", log);
  }
  return s;
}

}  // namespace

Result<void> build_paint_program(bool gles, PaintProgram& out) {
  const std::string header = gles ? "#version 300 es\nprecision highp float;\nprecision highp int;\n"
                                  : "#version 330 core\n";
  PIXPATH_TRY(GLuint vs, compile(GL_VERTEX_SHADER, header + kVertex));
  auto fs_or = compile(GL_FRAGMENT_SHADER, header + kFragment);
  if (!fs_or.ok()) {
    glDeleteShader(vs);
    return fs_or.error();
  }
  GLuint fs = *fs_or;
  GLuint prog = glCreateProgram();
  glAttachShader(prog, vs);
  glAttachShader(prog, fs);
  glLinkProgram(prog);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint okay = 0;
  glGetProgramiv(prog, GL_LINK_STATUS, &okay);
  if (!okay) {
    char log[2048] = {};
    glGetProgramInfoLog(prog, sizeof log, nullptr, log);
    glDeleteProgram(prog);
    return Error(ErrorCode::Internal, "gl", "link paint program", log);
  }
  out.program = prog;
  out.u_mode = glGetUniformLocation(prog, "u_mode");
  out.u_dst_origin = glGetUniformLocation(prog, "u_dst_origin");
  out.u_dst_size = glGetUniformLocation(prog, "u_dst_size");
  out.u_src_size = glGetUniformLocation(prog, "u_src_size");
  out.u_tex_size = glGetUniformLocation(prog, "u_tex_size");
  out.u_chroma_shift = glGetUniformLocation(prog, "u_chroma_shift");
  out.u_chroma_tex_size = glGetUniformLocation(prog, "u_chroma_tex_size");
  out.u_swizzle = glGetUniformLocation(prog, "u_swizzle");
  out.u_offset = glGetUniformLocation(prog, "u_offset");
  out.u_matrix = glGetUniformLocation(prog, "u_matrix");
  out.u_tex0 = glGetUniformLocation(prog, "u_tex0");
  out.u_tex1 = glGetUniformLocation(prog, "u_tex1");
  out.u_tex2 = glGetUniformLocation(prog, "u_tex2");
  glUseProgram(prog);
  glUniform1i(out.u_tex0, 0);
  glUniform1i(out.u_tex1, 1);
  glUniform1i(out.u_tex2, 2);
  glUseProgram(0);
  return ok();
}

YuvCoefficients yuv_coefficients(bool bt709, bool full_range) {
  const double kr = bt709 ? 0.2126 : 0.299;
  const double kb = bt709 ? 0.0722 : 0.114;
  const double kg = 1.0 - kr - kb;
  const double ys = full_range ? 1.0 : 255.0 / 219.0;
  const double cs = full_range ? 1.0 : 255.0 / 224.0;
  YuvCoefficients c{};
  // Columns: the Y, U (Cb) and V (Cr) contributions to (R, G, B).
  c.matrix[0] = c.matrix[1] = c.matrix[2] = static_cast<float>(ys);
  c.matrix[3] = 0.0f;
  c.matrix[4] = static_cast<float>(-2.0 * kb * (1.0 - kb) / kg * cs);
  c.matrix[5] = static_cast<float>(2.0 * (1.0 - kb) * cs);
  c.matrix[6] = static_cast<float>(2.0 * (1.0 - kr) * cs);
  c.matrix[7] = static_cast<float>(-2.0 * kr * (1.0 - kr) / kg * cs);
  c.matrix[8] = 0.0f;
  c.offset[0] = full_range ? 0.0f : 16.0f / 255.0f;
  c.offset[1] = c.offset[2] = 128.0f / 255.0f;
  return c;
}

bool ScratchTexture::ensure(int w, int h) {
  if (name && w <= width && h <= height) return false;
  const int nw = std::max(width, (w + 255) / 256 * 256);
  const int nh = std::max(height, (h + 255) / 256 * 256);
  destroy();
  glGenTextures(1, &name);
  glBindTexture(GL_TEXTURE_2D, name);
  glTexStorage2D(GL_TEXTURE_2D, 1, internal_format, nw, nh);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  width = nw;
  height = nh;
  return true;
}

void ScratchTexture::destroy() {
  if (name) glDeleteTextures(1, &name);
  name = 0;
  width = height = 0;
}

void PaintTimer::init(bool available) {
  available_ = available;
  if (!available) return;
  queries_.resize(32);
  for (auto& q : queries_) glGenQueries(1, &q.name);
}

void PaintTimer::destroy() {
  for (auto& q : queries_) glDeleteQueries(1, &q.name);
  queries_.clear();
}

bool PaintTimer::begin() {
  if (!available_ || active_ >= 0) return false;
  Query& q = queries_[next_];
  if (q.in_flight) return false;  // every query still waits for its result: skip, never wait
  glBeginQuery(GL_TIME_ELAPSED, q.name);
  active_ = static_cast<int>(next_);
  next_ = (next_ + 1) % queries_.size();
  return true;
}

void PaintTimer::end() {
  if (active_ < 0) return;
  glEndQuery(GL_TIME_ELAPSED);
  queries_[static_cast<size_t>(active_)].in_flight = true;
  active_ = -1;
}

void PaintTimer::collect(GlStats& stats) {
  if (!available_) return;
  for (auto& q : queries_) {
    if (!q.in_flight) continue;
    GLuint ready = 0;
    glGetQueryObjectuiv(q.name, GL_QUERY_RESULT_AVAILABLE, &ready);
    if (!ready) continue;
    GLuint64 ns = 0;
    if (epoxy_is_desktop_gl()) {
      glGetQueryObjectui64v(q.name, GL_QUERY_RESULT, &ns);
    } else {
      glGetQueryObjectui64vEXT(q.name, GL_QUERY_RESULT, &ns);
    }
    q.in_flight = false;
    ++stats.gpu_timed_paints;
    stats.gpu_time_ns += static_cast<int64_t>(ns);
  }
}

}  // namespace pixpath::gl::internal
