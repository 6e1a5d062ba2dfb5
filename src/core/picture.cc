#include "pixpath/core/picture.h"

#include <string>

#include "internal/checked_math.h"
#include "internal/picture_checks.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/core/storage_pool.h"

namespace pixpath {
namespace {

using internal::checked_add;
using internal::checked_mul;

MemoryKindCopier g_copiers[kMemoryKindCount];

Error picture_error(ErrorCode code, const char* stage, std::string reason) {
  return Error(code, "picture", stage, std::move(reason));
}

std::string describe(const Picture& p) {
  return std::string(name(p.format())) + " " + std::to_string(p.width()) + "x" +
         std::to_string(p.height());
}

}  // namespace

void register_memory_kind_copier(MemoryKind kind, MemoryKindCopier copier) {
  g_copiers[static_cast<size_t>(kind)] = copier;
}

Result<Picture> Picture::allocate(PixelFormat format, int width, int height,
                                  const AllocateOptions& options) {
  if (auto e = internal::check_dimensions("picture", "allocate", format, width, height,
                                          options.limits)) {
    return *e;
  }
  const auto& fi = info(format);
  const size_t align = options.row_alignment ? options.row_alignment : 1;
  if (align & (align - 1)) {
    return picture_error(ErrorCode::InvalidArgument, "allocate",
                         "row alignment " + std::to_string(align) + " is not a power of two");
  }
  size_t strides[kMaxPlanes] = {}, offsets[kMaxPlanes] = {};
  size_t total = 0;
  for (int i = 0; i < fi.planes; ++i) {
    const size_t row = static_cast<size_t>(plane_width(format, i, width)) *
                       static_cast<size_t>(fi.bytes_per_pixel[i]);
    size_t stride = internal::align_up(row, align);
    if (options.stride && fi.planes == 1) {
      if (options.stride < row) {
        return picture_error(ErrorCode::InvalidArgument, "allocate",
                             "stride " + std::to_string(options.stride) +
                                 " is less than a row of " + std::to_string(row) + " bytes");
      }
      stride = options.stride;
    }
    auto bytes = checked_mul(stride, static_cast<size_t>(plane_height(format, i, height)));
    auto end = bytes ? checked_add(internal::align_up(total, 64), *bytes) : std::nullopt;
    if (!end) return picture_error(ErrorCode::LimitExceeded, "allocate", "size overflows");
    strides[i] = stride;
    offsets[i] = internal::align_up(total, 64);
    total = *end;
  }
  if (total > options.limits.max_bytes) {
    return picture_error(ErrorCode::LimitExceeded, "allocate",
                         std::string(fi.name) + " " + std::to_string(width) + "x" +
                             std::to_string(height) + " needs " + std::to_string(total) +
                             " bytes, over the limit of " +
                             std::to_string(options.limits.max_bytes));
  }
  Result<StorageRef> storage = options.pool ? options.pool->acquire(total)
                                            : PictureStorage::allocate_host(total);
  if (!storage.ok()) return storage.error().within("picture", "allocate");
  if (!host_accessible((*storage)->kind())) {
    return picture_error(ErrorCode::WrongMemoryKind, "allocate",
                         "the pool gives " + std::string(to_string((*storage)->kind())) +
                             " memory; allocate() needs host memory");
  }
  Picture p;
  p.format_ = format;
  p.width_ = width;
  p.height_ = height;
  p.plane_count_ = fi.planes;
  for (int i = 0; i < fi.planes; ++i) p.planes_[static_cast<size_t>(i)] = {*storage, offsets[i], strides[i]};
  return p;
}

Result<Picture> Picture::wrap(PixelFormat format, int width, int height,
                              std::span<const PlaneRef> planes, const PictureLimits& limits) {
  if (auto e = internal::check_dimensions("picture", "wrap", format, width, height, limits)) {
    return *e;
  }
  const auto& fi = info(format);
  if (planes.size() != static_cast<size_t>(fi.planes)) {
    return picture_error(ErrorCode::InvalidArgument, "wrap",
                         std::string(fi.name) + " needs " + std::to_string(fi.planes) +
                             " plane(s), got " + std::to_string(planes.size()));
  }
  Picture p;
  p.format_ = format;
  p.width_ = width;
  p.height_ = height;
  p.plane_count_ = fi.planes;
  for (int i = 0; i < fi.planes; ++i) {
    const PlaneRef& pr = planes[static_cast<size_t>(i)];
    const std::string which = "plane " + std::to_string(i);
    if (!pr.storage) return picture_error(ErrorCode::InvalidArgument, "wrap", which + " has no storage");
    if (pr.storage->kind() != planes[0].storage->kind()) {
      return picture_error(ErrorCode::InvalidArgument, "wrap",
                           which + " lives in another kind of memory than plane 0");
    }
    const size_t row = static_cast<size_t>(plane_width(format, i, width)) *
                       static_cast<size_t>(fi.bytes_per_pixel[i]);
    if (pr.stride < row) {
      return picture_error(ErrorCode::InvalidArgument, "wrap",
                           which + " stride " + std::to_string(pr.stride) +
                               " is less than its row of " + std::to_string(row) + " bytes");
    }
    const auto rows = static_cast<size_t>(plane_height(format, i, height));
    auto span = checked_mul(pr.stride, rows - 1);
    auto end = span ? checked_add(*span, row) : std::nullopt;
    end = end ? checked_add(*end, pr.offset) : std::nullopt;
    if (!end || *end > pr.storage->size()) {
      return picture_error(ErrorCode::OutOfRange, "wrap",
                           which + " (offset " + std::to_string(pr.offset) + ", stride " +
                               std::to_string(pr.stride) + ", " + std::to_string(rows) +
                               " rows) does not fit in a storage of " +
                               std::to_string(pr.storage->size()) + " bytes");
    }
    p.planes_[static_cast<size_t>(i)] = pr;
  }
  return p;
}

Result<Picture> Picture::wrap(PixelFormat format, int width, int height, StorageRef storage,
                              size_t offset, size_t stride, const PictureLimits& limits) {
  if (info(format).planes != 1) {
    return picture_error(ErrorCode::InvalidArgument, "wrap",
                         std::string(name(format)) + " is planar: give one PlaneRef per plane");
  }
  PlaneRef pr{std::move(storage), offset, stride};
  return wrap(format, width, height, std::span<const PlaneRef>(&pr, 1), limits);
}

const MemoryLocation& Picture::location() const {
  static const MemoryLocation kHost = MemoryLocation::host();
  return empty() ? kHost : planes_[0].storage->location();
}

size_t Picture::row_bytes(int plane) const {
  return static_cast<size_t>(plane_width(format_, plane, width_)) *
         static_cast<size_t>(info(format_).bytes_per_pixel[plane]);
}

bool Picture::read_only() const {
  for (int i = 0; i < plane_count_; ++i) {
    if (planes_[static_cast<size_t>(i)].storage->read_only()) return true;
  }
  return false;
}

bool Picture::shared() const {
  for (int i = 0; i < plane_count_; ++i) {
    const auto& s = planes_[static_cast<size_t>(i)].storage;
    long own = 0;  // references this picture itself holds to s
    for (int j = 0; j < plane_count_; ++j) own += planes_[static_cast<size_t>(j)].storage == s;
    if (s->flags().externally_owned || s->use_count() > own) return true;
  }
  return false;
}

Result<ConstPictureView> Picture::read() const {
  if (empty()) return picture_error(ErrorCode::InvalidArgument, "read", "empty picture");
  if (!host_accessible(location().kind)) {
    return picture_error(ErrorCode::WrongMemoryKind, "read",
                         describe(*this) + " lives in " +
                             std::string(to_string(location().kind)) +
                             " memory; host views need host memory");
  }
  ConstPictureView v;
  v.format = format_;
  v.width = width_;
  v.height = height_;
  v.plane_count = plane_count_;
  const auto& fi = info(format_);
  for (int i = 0; i < plane_count_; ++i) {
    const auto& pr = planes_[static_cast<size_t>(i)];
    if (auto r = pr.storage->wait_ready(); !r.ok()) return r.error().within("picture", "read");
    v.planes[static_cast<size_t>(i)] = {static_cast<const uint8_t*>(pr.storage->data()) + pr.offset,
                                        pr.stride, plane_width(format_, i, width_),
                                        plane_height(format_, i, height_), fi.bytes_per_pixel[i]};
  }
  return v;
}

Result<PictureView> Picture::write() {
  if (empty()) return picture_error(ErrorCode::InvalidArgument, "write", "empty picture");
  if (read_only()) {
    return picture_error(ErrorCode::ReadOnly, "write",
                         describe(*this) + " is read-only (decoder-owned memory)");
  }
  if (shared()) {
    return picture_error(ErrorCode::ReadOnly, "write",
                         describe(*this) +
                             " shares its storage with another holder; call make_writable()");
  }
  PIXPATH_TRY(ConstPictureView cv, read());
  PictureView v;
  v.format = cv.format;
  v.width = cv.width;
  v.height = cv.height;
  v.plane_count = cv.plane_count;
  for (int i = 0; i < plane_count_; ++i) {
    const auto& c = cv.planes[static_cast<size_t>(i)];
    v.planes[static_cast<size_t>(i)] = {const_cast<uint8_t*>(c.data), c.stride, c.width, c.height,
                                        c.bytes_per_pixel};
    const auto& s = planes_[static_cast<size_t>(i)].storage;
    bool first = true;  // bump each distinct storage once
    for (int j = 0; j < i; ++j) first &= !(planes_[static_cast<size_t>(j)].storage == s);
    if (first) s->mark_written();
  }
  return v;
}

Result<Picture> Picture::crop(int x, int y, int w, int h) const {
  if (empty()) return picture_error(ErrorCode::InvalidArgument, "crop", "empty picture");
  if (auto e = internal::check_crop("picture", format_, width_, height_, x, y, w, h)) return *e;
  Picture p = *this;
  p.width_ = w;
  p.height_ = h;
  const auto& fi = info(format_);
  for (int i = 0; i < plane_count_; ++i) {
    auto& pr = p.planes_[static_cast<size_t>(i)];
    const int sx = i == 0 ? 0 : fi.chroma_shift_x;
    const int sy = i == 0 ? 0 : fi.chroma_shift_y;
    pr.offset += static_cast<size_t>(y >> sy) * pr.stride +
                 static_cast<size_t>(x >> sx) * static_cast<size_t>(fi.bytes_per_pixel[i]);
  }
  return p;
}

Result<Picture> Picture::plane_picture(int plane) const {
  if (empty()) return picture_error(ErrorCode::InvalidArgument, "plane", "empty picture");
  if (plane < 0 || plane >= plane_count_) {
    return picture_error(ErrorCode::OutOfRange, "plane",
                         describe(*this) + " has no plane " + std::to_string(plane));
  }
  if (plane_count_ == 1) return *this;
  const PixelFormat pf = info(format_).bytes_per_pixel[plane] == 2 ? PixelFormat::RG8
                                                                    : PixelFormat::GRAY8;
  Picture p;
  p.format_ = pf;
  p.width_ = plane_width(format_, plane, width_);
  p.height_ = plane_height(format_, plane, height_);
  p.plane_count_ = 1;
  p.planes_[0] = planes_[static_cast<size_t>(plane)];
  return p;
}

Result<Picture> Picture::restride(size_t stride) const {
  if (empty()) return picture_error(ErrorCode::InvalidArgument, "restride", "empty picture");
  if (plane_count_ != 1) {
    return picture_error(ErrorCode::Unsupported, "restride",
                         describe(*this) + " is planar; restride one plane_picture() at a time");
  }
  if (stride < row_bytes(0)) {
    return picture_error(ErrorCode::InvalidArgument, "restride",
                         "stride " + std::to_string(stride) + " is less than a row of " +
                             std::to_string(row_bytes(0)) + " bytes");
  }
  if (stride == planes_[0].stride || height_ == 1) {
    Picture p = *this;  // metadata only (a single row has no stride to speak of)
    p.planes_[0].stride = stride;
    return p;
  }
  AllocateOptions opts;
  opts.stride = stride;
  PIXPATH_TRY(Picture out, allocate(format_, width_, height_, opts));
  PIXPATH_TRY(ConstPictureView src, read());
  PIXPATH_TRY(PictureView dst, out.write());
  PIXPATH_CHECK(copy_pixels(src, dst));
  return out;
}

Result<Picture> Picture::make_writable() && {
  if (empty()) return picture_error(ErrorCode::InvalidArgument, "make writable", "empty picture");
  if (writable()) return std::move(*this);
  const MemoryKind kind = location().kind;
  if (kind != MemoryKind::Host) {
    const auto& c = g_copiers[static_cast<size_t>(kind)];
    if (!c.allocate_like || !c.copy) {
      return picture_error(ErrorCode::Unsupported, "make writable",
                           "no copier is registered for " + std::string(to_string(kind)) +
                               " memory");
    }
    PIXPATH_TRY(Picture out, c.allocate_like(*this));
    PIXPATH_CHECK(c.copy(*this, out));
    *this = Picture();  // consumed: let go of the shared storage
    return out;
  }
  PIXPATH_TRY(Picture out, allocate(format_, width_, height_));
  PIXPATH_TRY(ConstPictureView src, read());
  PIXPATH_TRY(PictureView dst, out.write());
  PIXPATH_CHECK(copy_pixels(src, dst));
  *this = Picture();  // consumed: the other holders must not stay shared with a dead handle
  return out;
}

Picture::ContentId Picture::content_id() const {
  if (empty()) return {};
  return {planes_[0].storage->id(), planes_[0].storage->generation()};
}

}  // namespace pixpath
