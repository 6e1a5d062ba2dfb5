// UploadRing: the pixel-unpack buffers that decoders write into and textures are uploaded
// from, shared by every window of one context.
//
// Each reservation is one buffer object, picked from the free ones (their last upload's fence
// has signalled: polled with timeout 0, never glFinish) or created within a byte budget. With
// ARB/EXT_buffer_storage the buffers are created once with MAP_PERSISTENT|MAP_COHERENT and stay
// mapped for their whole life; without it each reservation maps the buffer (glMapBufferRange,
// invalidating) and the upload unmaps it first. Only when every buffer is busy and the budget
// is spent does reserve() block, on the oldest buffer's fence (counted in GlStats::upload_waits).
//
// Threading: GL thread only, context current. The mapped bytes of a reservation may be written
// from any thread until the reservation is handed back with submit() or cancel().
#pragma once

#include <epoxy/gl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/gl/gl_context.h"

namespace pixpath::gl::internal {

class UploadRing {
 public:
  UploadRing(bool persistent, bool gles, size_t budget_bytes, int max_buffers, GlStats* stats);
  ~UploadRing();  // context current: deletes the buffers
  UploadRing(const UploadRing&) = delete;
  UploadRing& operator=(const UploadRing&) = delete;

  // A buffer with at least `bytes`, mapped for writing; returns its index.
  Result<int> reserve(size_t bytes);
  uint8_t* data(int index) const { return buffers_[static_cast<size_t>(index)].mapped; }
  size_t capacity(int index) const { return buffers_[static_cast<size_t>(index)].capacity; }
  // Binds the buffer to GL_PIXEL_UNPACK_BUFFER, ready for GL to read (unmaps in fallback mode).
  void bind_for_upload(int index);
  // The GL commands reading the buffer are issued: fence it and make it reusable.
  void submit(int index);
  // The reservation was never used by GL: free it at once.
  void cancel(int index);

  bool persistent() const { return persistent_; }
  size_t allocated_bytes() const { return allocated_; }
  int buffer_count() const { return live_buffers(); }

 private:
  struct Buffer {
    GLuint name = 0;
    size_t capacity = 0;
    uint8_t* mapped = nullptr;
    GLsync fence = nullptr;
    bool reserved = false;
    uint64_t last_use = 0;
  };
  bool idle(Buffer& b);  // fence signalled (or none); deletes a signalled fence
  Result<int> create(size_t bytes);
  void destroy(size_t index);
  int live_buffers() const;
  Result<void> map(Buffer& b, size_t bytes);

  bool persistent_;
  bool gles_;
  size_t budget_;
  int max_buffers_;
  GlStats* stats_;
  std::vector<Buffer> buffers_;
  size_t allocated_ = 0;
  uint64_t use_clock_ = 0;
};

}  // namespace pixpath::gl::internal
