// Picture: a handle to pixels — format, size and, per plane, a reference to a storage with an
// offset and a stride.
//
// Ownership. A Picture owns references to its storages, never the bytes directly. Crops,
// single planes and sub-pictures are new Pictures that share (and keep alive) the same
// storages: a slice can never outlive what it points into. Copying a Picture is cheap (it
// copies references, never pixels).
//
// Writability lives in the storages, not in `const`: a Picture is writable when none of its
// storages is read-only and none is shared (with another Picture, a bucket, a backing, or an
// outside owner). write() refuses anything else with ErrorCode::ReadOnly; make_writable()
// returns a writable Picture, copying only when needed and into the same memory kind. A
// "writable" answer goes stale as soon as someone else takes a reference (as in FFmpeg).
//
// Views. read() and write() hand out non-owning views for loops; host memory only (device and
// GL memory are reached through their backends). Every write() bumps the storages'
// generation.
//
// Threading: a Picture object is a value, not synchronised; Pictures sharing storages may be
// used on different threads as long as nobody writes (and nobody can: shared = not writable).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "pixpath/core/limits.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/result.h"
#include "pixpath/core/storage.h"

namespace pixpath {

class StoragePool;

struct PlaneRef {
  StorageRef storage;
  size_t offset = 0;  // byte offset of the plane's first row in the storage
  size_t stride = 0;  // bytes from one row to the next (>= the row's bytes)
};

struct AllocateOptions {
  size_t row_alignment = 64;     // each plane's stride is a multiple of this (power of two)
  size_t stride = 0;             // packed formats: exact stride to use (0 = aligned minimum)
  StoragePool* pool = nullptr;   // take the storage from this pool (host pools only)
  PictureLimits limits = PictureLimits::defaults();
};

class Picture {
 public:
  Picture() = default;  // empty: no pixels

  // A new picture in one host storage (all planes, 64-byte aligned), contents uninitialised.
  static Result<Picture> allocate(PixelFormat format, int width, int height,
                                  const AllocateOptions& options = {});

  // A picture over existing storages; every plane must lie inside its storage.
  static Result<Picture> wrap(PixelFormat format, int width, int height,
                              std::span<const PlaneRef> planes,
                              const PictureLimits& limits = PictureLimits::defaults());
  // Packed (single plane) convenience.
  static Result<Picture> wrap(PixelFormat format, int width, int height, StorageRef storage,
                              size_t offset, size_t stride,
                              const PictureLimits& limits = PictureLimits::defaults());

  bool empty() const { return plane_count_ == 0; }
  PixelFormat format() const { return format_; }
  int width() const { return width_; }
  int height() const { return height_; }
  int plane_count() const { return plane_count_; }
  const PlaneRef& plane(int i) const { return planes_[static_cast<size_t>(i)]; }
  // Where plane 0 lives (every plane of one picture lives in the same kind of memory).
  const MemoryLocation& location() const;
  // Bytes of one row of plane i (without padding).
  size_t row_bytes(int plane) const;

  bool read_only() const;
  bool shared() const;
  bool writable() const { return !empty() && !read_only() && !shared(); }

  // Non-owning views; host memory only. Lifetime: valid while this Picture (or another
  // holder of its storages) is alive.
  Result<ConstPictureView> read() const;
  // Refuses read-only and shared storage; bumps the storages' generation.
  Result<PictureView> write();

  // Sub-rectangle sharing the storages. For sub-sampled formats x, y, w, h must be multiples
  // of the chroma sub-sampling (except w/h reaching the right/bottom edge).
  Result<Picture> crop(int x, int y, int width, int height) const;
  // One plane as its own picture (GRAY8, or RG8 for NV12's UV plane), sharing the storage.
  Result<Picture> plane_picture(int plane) const;
  // Same pixels with the given stride (packed formats): shares when the stride already
  // matches, copies otherwise.
  Result<Picture> restride(size_t stride) const;
  // A writable picture with the same pixels: this one when it already is writable (no
  // copy), else a copy in the same memory kind (host; other kinds need their backend's
  // MemoryKindCopier, see below). Consumes this picture: on success it is left empty and
  // holds no storage (so the other holders are no longer shared with it); on failure it is
  // left unchanged.
  Result<Picture> make_writable() &&;

  // (storage id, generation) of plane 0: changes whenever the pixels may have changed.
  struct ContentId {
    uint64_t storage = 0, generation = 0;
    bool operator==(const ContentId&) const = default;
  };
  ContentId content_id() const;

 private:
  PixelFormat format_ = PixelFormat::GRAY8;
  int width_ = 0, height_ = 0;
  int plane_count_ = 0;
  std::array<PlaneRef, kMaxPlanes> planes_{};
};

// Copies pictures in memory kinds core cannot touch (CUDA, GL); backends register one.
// allocate_like: a new writable picture of the same format and size in `location`'s kind;
// copy: src -> dst, same format and size.
struct MemoryKindCopier {
  Result<Picture> (*allocate_like)(const Picture& like) = nullptr;
  Result<void> (*copy)(const Picture& src, Picture& dst) = nullptr;
};
void register_memory_kind_copier(MemoryKind kind, MemoryKindCopier copier);

}  // namespace pixpath
