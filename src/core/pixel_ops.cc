#include "pixpath/core/pixel_ops.h"

#include <atomic>
#include <cstring>
#include <string>

#include "internal/kernel_table.h"
#include "pixpath/core/counters.h"

namespace pixpath {
namespace internal {
#if defined(PIXPATH_HAVE_AVX2_KERNELS)
const KernelTable& avx2_kernels();
#endif

const KernelTable* avx2_kernels_if_supported() {
#if defined(PIXPATH_HAVE_AVX2_KERNELS)
  if (__builtin_cpu_supports("avx2")) return &avx2_kernels();
#endif
  return nullptr;
}

namespace {
std::atomic<const KernelTable*> g_kernel_override{nullptr};
}  // namespace

const KernelTable& active_kernels() {
  if (const KernelTable* t = g_kernel_override.load(std::memory_order_relaxed)) return *t;
  static const KernelTable& best = [&]() -> const KernelTable& {
    const KernelTable* avx2 = avx2_kernels_if_supported();
    return avx2 ? *avx2 : baseline_kernels();
  }();
  return best;
}

ScopedKernelTableForTesting::ScopedKernelTableForTesting(const KernelTable& table) {
  g_kernel_override.store(&table, std::memory_order_relaxed);
}
ScopedKernelTableForTesting::~ScopedKernelTableForTesting() {
  g_kernel_override.store(nullptr, std::memory_order_relaxed);
}
}  // namespace internal

namespace {

const internal::KernelTable& kernels() { return internal::active_kernels(); }

template <class A, class B>
std::optional<Error> same_size(const char* op, const A& a, const B& b) {
  if (a.width != b.width || a.height != b.height) {
    return Error(ErrorCode::InvalidArgument, "pixels", op,
                 "sizes differ: " + std::to_string(a.width) + "x" + std::to_string(a.height) +
                     " and " + std::to_string(b.width) + "x" + std::to_string(b.height));
  }
  if (a.plane_count == 0 || b.plane_count == 0) {
    return Error(ErrorCode::InvalidArgument, "pixels", op, "empty view");
  }
  return std::nullopt;
}

Error format_error(const char* op, PixelFormat a, PixelFormat b, const char* why) {
  return Error(ErrorCode::Unsupported, "pixels", op,
               std::string(name(a)) + " -> " + std::string(name(b)) + ": " + why);
}

int64_t view_bytes(const ConstPictureView& v) {
  int64_t n = 0;
  for (int i = 0; i < v.plane_count; ++i) {
    n += static_cast<int64_t>(v.planes[static_cast<size_t>(i)].row_bytes()) *
         v.planes[static_cast<size_t>(i)].height;
  }
  return n;
}

bool convertible(PixelFormat f) { return static_cast<int>(f) < internal::kConvertibleFormats; }

}  // namespace

Result<void> copy_pixels(const ConstPictureView& src, const PictureView& dst) {
  if (auto e = same_size("copy", src, dst)) return *e;
  if (src.format != dst.format) return format_error("copy", src.format, dst.format, "formats differ");
  for (int p = 0; p < src.plane_count; ++p) {
    const auto& s = src.planes[static_cast<size_t>(p)];
    const auto& d = dst.planes[static_cast<size_t>(p)];
    const size_t row = s.row_bytes();
    if (s.stride == row && d.stride == row) {
      std::memmove(d.data, s.data, row * static_cast<size_t>(s.height));
      continue;
    }
    for (int y = 0; y < s.height; ++y) std::memmove(d.unchecked_row(y), s.unchecked_row(y), row);
  }
  count_copy(view_bytes(src));
  return {};
}

Result<void> convert_pixels(const ConstPictureView& src, const PictureView& dst) {
  if (auto e = same_size("convert", src, dst)) return *e;
  if (!convertible(src.format) || !convertible(dst.format)) {
    return format_error("convert", src.format, dst.format,
                        "only packed RGB formats and GRAY8 convert");
  }
  const auto fn = kernels().convert[static_cast<size_t>(src.format) * internal::kConvertibleFormats +
                                    static_cast<size_t>(dst.format)];
  if (!fn) {
    return format_error("convert", src.format, dst.format,
                        "colour to gray needs a luma conversion pixpath does not guess");
  }
  const auto& s = src.planes[0];
  const auto& d = dst.planes[0];
  for (int y = 0; y < s.height; ++y) fn(s.unchecked_row(y), d.unchecked_row(y), s.width);
  count_copy(static_cast<int64_t>(d.row_bytes()) * d.height);
  return {};
}

Result<void> merge_alpha(const ConstPictureView& rgb, const ConstPictureView& alpha,
                         const PictureView& dst) {
  if (auto e = same_size("merge alpha", rgb, dst)) return *e;
  if (auto e = same_size("merge alpha", alpha, dst)) return *e;
  if (alpha.format != PixelFormat::GRAY8) {
    return format_error("merge alpha", alpha.format, dst.format, "the alpha plane must be GRAY8");
  }
  if (!info(rgb.format).packed_rgb || !info(dst.format).has_alpha) {
    return format_error("merge alpha", rgb.format, dst.format,
                        "needs packed RGB in and RGBA, BGRA, ARGB or ABGR out");
  }
  const auto fn = kernels().merge[static_cast<size_t>(rgb.format) * 4 +
                                  (static_cast<size_t>(dst.format) -
                                   static_cast<size_t>(PixelFormat::RGBA))];
  const auto& s = rgb.planes[0];
  const auto& a = alpha.planes[0];
  const auto& d = dst.planes[0];
  for (int y = 0; y < s.height; ++y) {
    fn(s.unchecked_row(y), a.unchecked_row(y), d.unchecked_row(y), s.width);
  }
  count_copy(static_cast<int64_t>(d.row_bytes()) * d.height);
  return {};
}

Result<void> xor_into(const PictureView& dst, const ConstPictureView& src) {
  if (auto e = same_size("xor", src, dst)) return *e;
  if (src.format != dst.format) return format_error("xor", src.format, dst.format, "formats differ");
  const auto fn = kernels().xor_row;
  for (int p = 0; p < src.plane_count; ++p) {
    const auto& s = src.planes[static_cast<size_t>(p)];
    const auto& d = dst.planes[static_cast<size_t>(p)];
    const size_t row = s.row_bytes();
    if (s.stride == row && d.stride == row) {
      fn(d.data, s.data, row * static_cast<size_t>(s.height));
      continue;
    }
    for (int y = 0; y < s.height; ++y) fn(d.unchecked_row(y), s.unchecked_row(y), row);
  }
  return {};
}

Result<Picture> xor_pictures(Picture target, const ConstPictureView& src) {
  PIXPATH_TRY(Picture out, std::move(target).make_writable());
  PIXPATH_TRY(PictureView dst, out.write());
  PIXPATH_CHECK(xor_into(dst, src));
  return out;
}

Result<void> scale_pixels(const ConstPictureView& src, const PictureView& dst) {
  if (src.format != dst.format) return format_error("scale", src.format, dst.format, "formats differ");
  if (src.plane_count == 0 || dst.plane_count == 0) {
    return Error(ErrorCode::InvalidArgument, "pixels", "scale", "empty view");
  }
  const auto& fi = info(src.format);
  if (fi.planes != 1) {
    return format_error("scale", src.format, dst.format, "planar formats scale per plane");
  }
  const int bpp = fi.bytes_per_pixel[0];
  const auto& s = src.planes[0];
  const auto& d = dst.planes[0];
  // Bilinear with 16.16 fixed point, pixel centres aligned.
  const int64_t fx = (static_cast<int64_t>(s.width) << 16) / d.width;
  const int64_t fy = (static_cast<int64_t>(s.height) << 16) / d.height;
  for (int y = 0; y < d.height; ++y) {
    int64_t sy = (y * fy) + fy / 2 - (1 << 15);
    if (sy < 0) sy = 0;
    int y0 = static_cast<int>(sy >> 16);
    if (y0 > s.height - 1) y0 = s.height - 1;
    const int y1 = y0 + 1 < s.height ? y0 + 1 : y0;
    const uint32_t wy = static_cast<uint32_t>(sy & 0xFFFF) >> 8;
    const uint8_t* r0 = s.unchecked_row(y0);
    const uint8_t* r1 = s.unchecked_row(y1);
    uint8_t* out = d.unchecked_row(y);
    for (int x = 0; x < d.width; ++x) {
      int64_t sx = (x * fx) + fx / 2 - (1 << 15);
      if (sx < 0) sx = 0;
      int x0 = static_cast<int>(sx >> 16);
      if (x0 > s.width - 1) x0 = s.width - 1;
      const int x1 = x0 + 1 < s.width ? x0 + 1 : x0;
      const uint32_t wx = static_cast<uint32_t>(sx & 0xFFFF) >> 8;
      for (int c = 0; c < bpp; ++c) {
        const uint32_t top = r0[x0 * bpp + c] * (256 - wx) + r0[x1 * bpp + c] * wx;
        const uint32_t bot = r1[x0 * bpp + c] * (256 - wx) + r1[x1 * bpp + c] * wx;
        out[x * bpp + c] = static_cast<uint8_t>((top * (256 - wy) + bot * wy + (1 << 15)) >> 16);
      }
    }
  }
  count_copy(static_cast<int64_t>(d.row_bytes()) * d.height);
  return {};
}

}  // namespace pixpath
