// Test and benchmark helpers for the codecs: synthetic screen-like pictures, guarded
// destination buffers, reference-tool plumbing. Not part of the library.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pixpath/core/picture.h"

namespace pixpath::codecs::testing {

// Screen-like content: flat UI panels, a gradient, text-like strokes, a noise (photo-like)
// region; alpha formats get an alpha ramp with fully transparent and opaque areas.
Picture screen_picture(PixelFormat format, int width, int height, uint32_t seed = 1);
// The same content as tightly packed bytes (RGB, or gray for components == 1), as libjpeg's
// encoder takes them.
std::vector<uint8_t> screen_pixels(int width, int height, int components, uint32_t seed);

// Damages a JPEG's entropy-coded data [scan_begin, scan_end) the way trial number `trial`
// asks: trial % 3 == 0 flips one bit, 1 overwrites 1 + trial % 4 bytes with random ones, 2 cuts
// the file inside the scan. Positions and values come from `rng`.
std::vector<uint8_t> damage_scan(std::vector<uint8_t> file, size_t scan_begin, size_t scan_end,
                                 int trial, std::mt19937& rng);

// A destination inside a larger buffer: every byte outside the view is a guard byte.
class GuardedDestination {
 public:
  // pad_x/pad_y pixels of guard around the picture, plus `extra_stride` bytes per row.
  GuardedDestination(PixelFormat format, int width, int height, int pad_x = 3, int pad_y = 2,
                     size_t extra_stride = 5);
  const PictureView& view() const { return view_; }
  bool guards_intact() const;  // no byte outside the view changed

 private:
  struct Plane {
    std::vector<uint8_t> mem;
    size_t stride = 0, offset = 0, row_bytes = 0;
    int rows = 0, first_row = 0;
  };
  std::vector<Plane> planes_;
  PictureView view_;
};

// Max |a - b| over all bytes of two same-format, same-size views (-1 if they differ in shape).
int max_difference(const ConstPictureView& a, const ConstPictureView& b);
bool same_pixels(const ConstPictureView& a, const ConstPictureView& b);

// A temporary directory removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

bool have_tool(const std::string& tool);
int run_command(const std::string& command);  // std::system, output to /dev/null on success
std::vector<uint8_t> slurp(const std::string& path);
void spit(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace pixpath::codecs::testing
