#include "internal/upload_ring.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace pixpath::gl::internal {
namespace {
constexpr size_t kMinBuffer = size_t{256} << 10;
// A blocked reserve() waits at most this long for a fence before it gives up.
constexpr GLuint64 kWaitStepNs = 100'000'000;  // 100 ms
constexpr int kWaitSteps = 50;                 // 5 s in all

size_t round_up_pow2(size_t n) {
  size_t p = kMinBuffer;
  while (p < n) p <<= 1;
  return p;
}
}  // namespace

UploadRing::UploadRing(bool persistent, bool gles, size_t budget_bytes, int max_buffers,
                       GlStats* stats)
    : persistent_(persistent),
      gles_(gles),
      budget_(budget_bytes),
      max_buffers_(std::max(1, max_buffers)),
      stats_(stats) {}

UploadRing::~UploadRing() {
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].name) destroy(i);
  }
}

bool UploadRing::idle(Buffer& b) {
  if (!b.fence) return true;
  GLenum r = glClientWaitSync(b.fence, GL_SYNC_FLUSH_COMMANDS_BIT, 0);
  if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) {
    glDeleteSync(b.fence);
    b.fence = nullptr;
    return true;
  }
  return false;
}

void UploadRing::destroy(size_t index) {
  Buffer& b = buffers_[index];
  if (b.fence) glDeleteSync(b.fence);
  // Deleting a buffer that queued uploads still read is safe: GL keeps it until they ran.
  // A persistent mapping goes with the buffer.
  if (!persistent_ && b.mapped) {
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, b.name);
    glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  }
  glDeleteBuffers(1, &b.name);
  allocated_ -= b.capacity;
  b = Buffer{};  // the slot stays (indices of live reservations must not move)
}

int UploadRing::live_buffers() const {
  int n = 0;
  for (const Buffer& b : buffers_) n += b.name != 0;
  return n;
}

Result<int> UploadRing::create(size_t bytes) {
  Buffer b;
  b.capacity = round_up_pow2(bytes);
  glGenBuffers(1, &b.name);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, b.name);
  while (glGetError() != GL_NO_ERROR) {
  }
  if (persistent_) {
    const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    if (gles_) {
      glBufferStorageEXT(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(b.capacity), nullptr,
                         flags);
    } else {
      glBufferStorage(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(b.capacity), nullptr,
                      flags);
    }
    b.mapped = static_cast<uint8_t*>(
        glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, static_cast<GLsizeiptr>(b.capacity), flags));
  } else {
    glBufferData(GL_PIXEL_UNPACK_BUFFER, static_cast<GLsizeiptr>(b.capacity), nullptr,
                 GL_STREAM_DRAW);
  }
  GLenum err = glGetError();
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  if (err != GL_NO_ERROR || (persistent_ && !b.mapped)) {
    glDeleteBuffers(1, &b.name);
    return Error(ErrorCode::OutOfMemory, "gl", "create upload buffer",
                 "could not create a " + std::to_string(b.capacity) + "-byte pixel buffer (GL error 0x" +
                     [&] {
                       char s[16];
                       snprintf(s, sizeof s, "%x", err);
                       return std::string(s);
                     }() + ")");
  }
  allocated_ += b.capacity;
  if (stats_) ++stats_->upload_buffers_created;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].name == 0) {
      buffers_[i] = b;
      return static_cast<int>(i);
    }
  }
  buffers_.push_back(b);
  return static_cast<int>(buffers_.size() - 1);
}

Result<void> UploadRing::map(Buffer& b, size_t bytes) {
  if (persistent_) return ok();
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, b.name);
  // The buffer's last upload has completed (its fence signalled), so nothing is in flight.
  b.mapped = static_cast<uint8_t*>(glMapBufferRange(
      GL_PIXEL_UNPACK_BUFFER, 0, static_cast<GLsizeiptr>(bytes),
      GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT));
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  if (!b.mapped) {
    return Error(ErrorCode::Internal, "gl", "map upload buffer", "glMapBufferRange failed");
  }
  return ok();
}

Result<int> UploadRing::reserve(size_t bytes) {
  if (bytes == 0 || bytes > budget_) {
    return Error(ErrorCode::LimitExceeded, "gl", "reserve upload buffer",
                 std::to_string(bytes) + " bytes asked, upload budget is " +
                     std::to_string(budget_));
  }
  for (int attempt = 0;; ++attempt) {
    // 1. The smallest idle buffer that is big enough.
    int best = -1;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      Buffer& b = buffers_[i];
      if (b.name == 0 || b.reserved || b.capacity < bytes || !idle(b)) continue;
      if (best < 0 || b.capacity < buffers_[static_cast<size_t>(best)].capacity) {
        best = static_cast<int>(i);
      }
    }
    // 2. A new buffer within the budget; to make room, drop idle buffers that are too small.
    if (best < 0) {
      const size_t want = round_up_pow2(bytes);
      auto room = [&] { return live_buffers() < max_buffers_ && allocated_ + want <= budget_; };
      for (size_t i = 0; i < buffers_.size() && !room(); ++i) {
        Buffer& b = buffers_[i];
        if (b.name && !b.reserved && b.capacity < bytes && idle(b)) destroy(i);
      }
      if (room()) {
        PIXPATH_TRY(best, create(bytes));
      }
    }
    if (best >= 0) {
      Buffer& b = buffers_[static_cast<size_t>(best)];
      PIXPATH_CHECK(map(b, bytes));
      b.reserved = true;
      b.last_use = ++use_clock_;
      return best;
    }
    // 3. Everything is busy: block on the oldest fence (never glFinish).
    Buffer* oldest = nullptr;
    for (Buffer& b : buffers_) {
      if (b.name && !b.reserved && b.fence && (!oldest || b.last_use < oldest->last_use)) oldest = &b;
    }
    if (!oldest || attempt > max_buffers_ + 1) {
      return Error(ErrorCode::LimitExceeded, "gl", "reserve upload buffer",
                   "every upload buffer is reserved and not yet painted (" +
                       std::to_string(live_buffers()) + " buffers, " +
                       std::to_string(allocated_) + " bytes)");
    }
    if (stats_) ++stats_->upload_waits;
    GLenum r = GL_TIMEOUT_EXPIRED;
    for (int step = 0; step < kWaitSteps && r == GL_TIMEOUT_EXPIRED; ++step) {
      r = glClientWaitSync(oldest->fence, GL_SYNC_FLUSH_COMMANDS_BIT, kWaitStepNs);
    }
    if (r == GL_TIMEOUT_EXPIRED || r == GL_WAIT_FAILED) {
      return Error(ErrorCode::Unavailable, "gl", "reserve upload buffer",
                   "an upload did not complete within 5 s");
    }
    glDeleteSync(oldest->fence);
    oldest->fence = nullptr;
  }
}

void UploadRing::bind_for_upload(int index) {
  Buffer& b = buffers_[static_cast<size_t>(index)];
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, b.name);
  if (!persistent_ && b.mapped) {
    glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    b.mapped = nullptr;
  }
}

void UploadRing::submit(int index) {
  Buffer& b = buffers_[static_cast<size_t>(index)];
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  if (b.fence) glDeleteSync(b.fence);
  b.fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  b.reserved = false;
  b.last_use = ++use_clock_;
}

void UploadRing::cancel(int index) {
  Buffer& b = buffers_[static_cast<size_t>(index)];
  if (!persistent_ && b.mapped) {
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, b.name);
    glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    b.mapped = nullptr;
  }
  b.reserved = false;
}

}  // namespace pixpath::gl::internal
