// PictureStorage: the refcounted owner of one block of picture memory.
//
// Ownership. A storage owns its bytes through exactly one ReleaseAction, which runs exactly
// once: when the last StorageRef goes, or, for wrap(), immediately when wrapping fails. Host
// allocations are 64-byte aligned. A storage is never half-built: it comes from a factory that
// returns Result<StorageRef>.
//
// Writability. A storage is read-only when created so (decoder-owned memory: a reference
// frame, a library's internal buffer) and then never writable. It is *shared* when more than
// one reference exists or when someone outside pixpath also owns the memory
// (flags.externally_owned). Pictures may be written only through storages that are neither
// (see Picture::write()). As in FFmpeg, "not shared" goes stale the moment another thread
// takes a reference: check and write under the same ownership.
//
// Generation. Every write view bumps the storage's generation; (id(), generation()) names the
// content, so caches (GL textures, delta buckets) never serve stale pixels.
//
// Release domains. A storage created with a ReleaseDomain releases inside that domain only:
// if the last reference drops where the domain is not current, the release is queued to the
// domain (never a blocking hop) and runs when its owner drains it. See release_domain.h.
//
// Sync points. Memory written asynchronously (a CUDA kernel, a GL upload) carries the
// SyncPoint of that write; readers wait on it before reading, pools before reuse.
//
// Threading: the refcount is atomic; the bytes are not protected: a storage is either
// immutable (shared) or written by its single owner.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "pixpath/core/memory_kind.h"
#include "pixpath/core/release_action.h"
#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"

namespace pixpath {

class ReleaseDomain;
class StorageRef;

struct StorageFlags {
  bool read_only = false;         // never writable through pixpath
  bool externally_owned = false;  // someone else also owns the memory: always "shared"
};

// An asynchronous write's completion, e.g. a CUDA event or a GL fence. Implemented by the
// backend that made the write; core only stores and forwards it.
class SyncPoint {
 public:
  virtual ~SyncPoint() = default;
  // Blocks the calling thread until the write is complete.
  virtual Result<void> wait_host() const = 0;
  // Opaque native handle (cudaEvent_t, GLsync) for device-side waits by the same backend.
  virtual void* native() const = 0;
};

class PictureStorage {
 public:
  static constexpr size_t kHostAlignment = 64;

  // Allocates `bytes` of 64-byte-aligned host memory (contents uninitialised).
  static Result<StorageRef> allocate_host(size_t bytes);

  // Wraps memory pixpath did not allocate. On success the storage owns it and runs `release`
  // exactly once when the last reference goes (inside `domain`, when one is given).
  // On failure `release` has already run: the memory is given up either way, and the caller
  // must not free it. Fails on null data with non-zero size, on bytes == 0, and on a release
  // domain given for memory that needs none.
  static Result<StorageRef> wrap(MemoryLocation where, void* data, size_t bytes,
                                 StorageFlags flags, ReleaseAction release,
                                 std::shared_ptr<ReleaseDomain> domain = nullptr);

  PictureStorage(const PictureStorage&) = delete;
  PictureStorage& operator=(const PictureStorage&) = delete;

  const MemoryLocation& location() const { return location_; }
  MemoryKind kind() const { return location_.kind; }
  // The raw address (a device pointer for CudaDevice; null for GL objects). Prefer views.
  void* data() const { return data_; }
  size_t size() const { return size_; }
  const StorageFlags& flags() const { return flags_; }
  bool read_only() const { return flags_.read_only; }

  uint64_t id() const { return id_; }
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Records a write (called by write views and by backends writing device memory).
  void mark_written() { generation_.fetch_add(1, std::memory_order_acq_rel); }

  long use_count() const { return refs_.load(std::memory_order_acquire); }
  bool shared() const { return flags_.externally_owned || use_count() > 1; }

  const std::shared_ptr<ReleaseDomain>& release_domain() const { return domain_; }

  // The pending asynchronous write, if any (null = contents are ready).
  std::shared_ptr<const SyncPoint> sync_point() const PIXPATH_EXCLUDES(sync_mutex_);
  void set_sync_point(std::shared_ptr<const SyncPoint> sync) PIXPATH_EXCLUDES(sync_mutex_);
  // Waits for the pending write on the host and clears it.
  Result<void> wait_ready() PIXPATH_EXCLUDES(sync_mutex_);

 private:
  friend class StorageRef;
  friend class ReleaseDomain;
  PictureStorage(MemoryLocation where, void* data, size_t bytes, StorageFlags flags,
                 ReleaseAction release, std::shared_ptr<ReleaseDomain> domain);
  ~PictureStorage();

  void add_ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void drop_ref();
  // Runs the release action and deletes this. Called where the release domain is current.
  void release_now();
  // Deletes this without running the release (its domain shut down); counted as unreleased.
  void abandon();

  MemoryLocation location_;
  void* data_;
  size_t size_;
  StorageFlags flags_;
  ReleaseAction release_;
  std::shared_ptr<ReleaseDomain> domain_;
  uint64_t id_;
  std::atomic<long> refs_{1};
  std::atomic<uint64_t> generation_{1};
  mutable Mutex sync_mutex_;
  std::shared_ptr<const SyncPoint> sync_ PIXPATH_GUARDED_BY(sync_mutex_);
};

// An owning, counted reference to a PictureStorage (an intrusive pointer). Copying takes a
// reference; destroying the last one releases the storage (in its release domain).
// Threading: distinct StorageRefs to one storage may be copied and dropped on any threads
// concurrently; one StorageRef object is not itself synchronised.
class StorageRef {
 public:
  StorageRef() = default;
  StorageRef(const StorageRef& o) : s_(o.s_) {
    if (s_) s_->add_ref();
  }
  StorageRef(StorageRef&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  StorageRef& operator=(StorageRef o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~StorageRef() { reset(); }

  void reset() {
    if (auto* s = s_) {
      s_ = nullptr;
      s->drop_ref();
    }
  }

  PictureStorage* get() const { return s_; }
  PictureStorage* operator->() const { return s_; }
  PictureStorage& operator*() const { return *s_; }
  explicit operator bool() const { return s_ != nullptr; }
  bool operator==(const StorageRef& o) const { return s_ == o.s_; }

 private:
  friend class PictureStorage;
  explicit StorageRef(PictureStorage* adopted) : s_(adopted) {}
  PictureStorage* s_ = nullptr;
};

}  // namespace pixpath
