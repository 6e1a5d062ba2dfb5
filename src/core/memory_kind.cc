#include "pixpath/core/memory_kind.h"

namespace pixpath {

std::string_view to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Host: return "host";
    case MemoryKind::PinnedHost: return "pinned host";
    case MemoryKind::CudaDevice: return "cuda device";
    case MemoryKind::GlBuffer: return "gl buffer";
    case MemoryKind::GlTexture: return "gl texture";
  }
  return "unknown";
}

}  // namespace pixpath
