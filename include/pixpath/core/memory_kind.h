// Where a storage's bytes live. Host accessors refuse every kind but Host and PinnedHost;
// crossing kinds is always an explicit copy or map (see MemoryKindOps in storage.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace pixpath {

enum class MemoryKind : uint8_t {
  Host,        // ordinary host memory
  PinnedHost,  // page-locked host memory (cudaHostAlloc): host-readable, DMA-able
  CudaDevice,  // CUDA device memory: `device` and `context` say which
  GlBuffer,    // an OpenGL buffer object: `gl_name`, in the GL context `context`
  GlTexture,   // an OpenGL texture: `gl_name`, in the GL context `context`
};
inline constexpr int kMemoryKindCount = 5;

std::string_view to_string(MemoryKind kind);
inline bool host_accessible(MemoryKind kind) {
  return kind == MemoryKind::Host || kind == MemoryKind::PinnedHost;
}

struct MemoryLocation {
  MemoryKind kind = MemoryKind::Host;
  int device = -1;                // CUDA device ordinal, CudaDevice only
  const void* context = nullptr;  // CUcontext / EGLContext; opaque to core
  uint32_t gl_name = 0;           // GL buffer or texture name

  static MemoryLocation host() { return {}; }
  bool operator==(const MemoryLocation&) const = default;
};

}  // namespace pixpath
