#include "pixpath/core/storage.h"

#include <cstdlib>
#include <new>
#include <string>

#include "internal/counters_internal.h"
#include "internal/host_memory.h"
#include "pixpath/core/release_domain.h"

namespace pixpath {
namespace {
std::atomic<uint64_t> g_next_id{1};
}

PictureStorage::PictureStorage(MemoryLocation where, void* data, size_t bytes, StorageFlags flags,
                               ReleaseAction release, std::shared_ptr<ReleaseDomain> domain)
    : location_(where),
      data_(data),
      size_(bytes),
      flags_(flags),
      release_(std::move(release)),
      domain_(std::move(domain)),
      id_(g_next_id.fetch_add(1, std::memory_order_relaxed)) {
  internal::count_storage_created(location_.kind, static_cast<int64_t>(size_));
}

PictureStorage::~PictureStorage() = default;

Result<StorageRef> PictureStorage::allocate_host(size_t bytes) {
  if (bytes == 0) {
    return Error(ErrorCode::InvalidArgument, "storage", "allocate", "zero bytes requested");
  }
  const size_t rounded = (bytes + kHostAlignment - 1) & ~(kHostAlignment - 1);
  if (rounded < bytes) {
    return Error(ErrorCode::LimitExceeded, "storage", "allocate",
                 std::to_string(bytes) + " bytes overflow the address space");
  }
  void* p = internal::allocate_host_block(rounded);
  if (!p) {
    return Error(ErrorCode::OutOfMemory, "storage", "allocate",
                 "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  return StorageRef(new PictureStorage(MemoryLocation::host(), p, bytes, {},
                                       ReleaseAction([p] { std::free(p); }), nullptr));
}

Result<StorageRef> PictureStorage::wrap(MemoryLocation where, void* data, size_t bytes,
                                        StorageFlags flags, ReleaseAction release,
                                        std::shared_ptr<ReleaseDomain> domain) {
  const bool gl = where.kind == MemoryKind::GlBuffer || where.kind == MemoryKind::GlTexture;
  std::string reason;
  if (bytes == 0) {
    reason = "zero bytes";
  } else if (!gl && data == nullptr) {
    reason = "null data";
  } else if (gl && where.gl_name == 0) {
    reason = "GL memory without a GL name";
  } else if (domain && domain->closed()) {
    reason = "release domain '" + domain->name() + "' is shut down";
  }
  if (!reason.empty()) {
    release.run();  // documented: on failure the memory is given up
    return Error(ErrorCode::InvalidArgument, "storage", "wrap", reason);
  }
  return StorageRef(
      new PictureStorage(where, data, bytes, flags, std::move(release), std::move(domain)));
}

void PictureStorage::drop_ref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // After shutdown nothing is released, not even where the domain is current (its context
  // may be gone): enqueue() abandons the storage and counts it.
  if (domain_ && (!domain_->is_current() || domain_->closed())) {
    auto domain = domain_;  // enqueue may release (and delete) this storage
    domain->enqueue(this);
    return;
  }
  release_now();
}

void PictureStorage::release_now() {
  // Never free (or hand back to a pool) memory an asynchronous write may still be writing.
  if (sync_point()) (void)wait_ready();
  release_.run();
  internal::count_storage_released(location_.kind, static_cast<int64_t>(size_));
  delete this;
}

void PictureStorage::abandon() {
  internal::count_unreleased();
  internal::count_storage_released(location_.kind, static_cast<int64_t>(size_));
  release_ = ReleaseAction();  // destroyed without running
  delete this;
}

std::shared_ptr<const SyncPoint> PictureStorage::sync_point() const {
  MutexLock lock(sync_mutex_);
  return sync_;
}

void PictureStorage::set_sync_point(std::shared_ptr<const SyncPoint> sync) {
  MutexLock lock(sync_mutex_);
  sync_ = std::move(sync);
}

Result<void> PictureStorage::wait_ready() {
  auto sync = sync_point();
  if (!sync) return {};
  PIXPATH_CHECK(sync->wait_host());
  MutexLock lock(sync_mutex_);
  if (sync_ == sync) sync_.reset();
  return {};
}

}  // namespace pixpath
