#include "codecs/testing/test_images.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs::testing {

Picture screen_picture(PixelFormat format, int width, int height, uint32_t seed) {
  // Build RGBA, then convert.
  auto rgba = Picture::allocate(PixelFormat::RGBA, width, height);
  if (!rgba.ok()) std::abort();
  auto v = rgba->write();
  std::mt19937 rng(seed);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = v->planes[0].unchecked_row(y);
    for (int x = 0; x < width; ++x) {
      uint8_t r, g, b;
      const int band = (x * 4 / std::max(width, 1)) + 4 * (y * 2 / std::max(height, 1));
      switch (band % 8) {
        case 0: r = 0xF0; g = 0xF0; b = 0xF0; break;  // flat panel
        case 1: r = uint8_t(x * 255 / std::max(width - 1, 1)); g = uint8_t(y * 255 / std::max(height - 1, 1)); b = 128; break;
        case 2: {  // text-like strokes: dark glyph bars on white
          const bool ink = ((x / 2) % 5 == 0 || (y % 9) == 3) && (x % 7) != 6;
          r = g = b = ink ? 0x20 : 0xFF;
          break;
        }
        case 3: r = uint8_t(rng()); g = uint8_t(rng()); b = uint8_t(rng()); break;  // noise
        case 4: r = 0x2E; g = 0x34; b = 0x40; break;  // dark title bar
        case 5: r = uint8_t(128 + 100 * std::sin(x * 0.3)); g = uint8_t(128 + 100 * std::cos(y * 0.2)); b = uint8_t(x ^ y); break;
        case 6: { const bool ink = ((x + y) % 6) < 2; r = ink ? 0x10 : 0x35; g = ink ? 0xA0 : 0x84; b = ink ? 0x10 : 0xE4; break; }
        default: r = uint8_t(x * 3); g = uint8_t(y * 5); b = uint8_t((x + y) * 2); break;
      }
      uint8_t a = 255;
      if (x < width / 4) a = 0;
      else if (x < width / 2) a = uint8_t((x * 7 + y * 3) & 0xFF);
      row[4 * x] = r;
      row[4 * x + 1] = g;
      row[4 * x + 2] = b;
      row[4 * x + 3] = a;
    }
  }
  if (format == PixelFormat::RGBA) return std::move(*rgba);
  auto out = Picture::allocate(format, width, height);
  if (!out.ok()) std::abort();
  auto ov = out->write();
  auto rv = rgba->read();
  if (format == PixelFormat::GRAY8) {
    for (int y = 0; y < height; ++y) {
      const uint8_t* s = rv->planes[0].unchecked_row(y);
      uint8_t* d = ov->planes[0].unchecked_row(y);
      for (int x = 0; x < width; ++x) d[x] = uint8_t((s[4 * x] * 77 + s[4 * x + 1] * 150 + s[4 * x + 2] * 29) >> 8);
    }
  } else if (!convert_pixels(*rv, *ov).ok()) {
    std::abort();
  }
  return std::move(*out);
}

std::vector<uint8_t> screen_pixels(int width, int height, int components, uint32_t seed) {
  Picture p = screen_picture(components == 1 ? PixelFormat::GRAY8 : PixelFormat::RGB, width,
                             height, seed);
  auto v = p.read();
  std::vector<uint8_t> out;
  for (int y = 0; y < height; ++y) {
    const uint8_t* r = v->planes[0].unchecked_row(y);
    out.insert(out.end(), r, r + size_t(width) * size_t(components));
  }
  return out;
}

std::vector<uint8_t> damage_scan(std::vector<uint8_t> file, size_t scan_begin, size_t scan_end,
                                 int trial, std::mt19937& rng) {
  const size_t span = scan_end - scan_begin;
  if (span == 0) return file;
  if (trial % 3 == 0) {
    file[scan_begin + rng() % span] ^= uint8_t(1u << (rng() % 8));
  } else if (trial % 3 == 1) {
    for (int k = 0; k < 1 + trial % 4; ++k) file[scan_begin + rng() % span] = uint8_t(rng());
  } else {
    file.resize(scan_begin + rng() % span);
  }
  return file;
}

GuardedDestination::GuardedDestination(PixelFormat format, int width, int height, int pad_x,
                                       int pad_y, size_t extra_stride) {
  const auto& fi = info(format);
  view_.format = format;
  view_.width = width;
  view_.height = height;
  view_.plane_count = fi.planes;
  planes_.resize(size_t(fi.planes));
  for (int i = 0; i < fi.planes; ++i) {
    Plane& p = planes_[size_t(i)];
    const int pw = plane_width(format, i, width), ph = plane_height(format, i, height);
    const size_t bpp = size_t(fi.bytes_per_pixel[i]);
    p.row_bytes = size_t(pw) * bpp;
    p.stride = p.row_bytes + 2 * size_t(pad_x) * bpp + extra_stride;
    p.rows = ph;
    p.first_row = pad_y;
    p.offset = size_t(pad_y) * p.stride + size_t(pad_x) * bpp;
    p.mem.assign(p.stride * size_t(ph + 2 * pad_y), 0xA5);
    view_.planes[size_t(i)] = {p.mem.data() + p.offset, p.stride, pw, ph, int(bpp)};
  }
}

bool GuardedDestination::guards_intact() const {
  for (const Plane& p : planes_) {
    for (size_t i = 0; i < p.mem.size(); ++i) {
      if (i >= p.offset) {
        const size_t rel = i - p.offset;
        const size_t row = rel / p.stride, col = rel % p.stride;
        if (row < size_t(p.rows) && col < p.row_bytes) continue;  // inside the view
      }
      if (p.mem[i] != 0xA5) return false;
    }
  }
  return true;
}

int max_difference(const ConstPictureView& a, const ConstPictureView& b) {
  if (a.format != b.format || a.width != b.width || a.height != b.height) return -1;
  int m = 0;
  for (int i = 0; i < a.plane_count; ++i) {
    const auto& pa = a.planes[size_t(i)];
    const auto& pb = b.planes[size_t(i)];
    for (int y = 0; y < pa.height; ++y) {
      const uint8_t* ra = pa.unchecked_row(y);
      const uint8_t* rb = pb.unchecked_row(y);
      for (size_t x = 0; x < pa.row_bytes(); ++x) m = std::max(m, std::abs(int(ra[x]) - int(rb[x])));
    }
  }
  return m;
}

bool same_pixels(const ConstPictureView& a, const ConstPictureView& b) {
  return max_difference(a, b) == 0;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "pixpath-codecs-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) std::abort();
  path_ = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool have_tool(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

int run_command(const std::string& command) {
  return std::system(("( " + command + " ) >/dev/null 2>&1").c_str());
}

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

}  // namespace pixpath::codecs::testing
