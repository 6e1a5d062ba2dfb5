// libjpeg(-turbo) plumbing for the tests of pixpath's own baseline JPEG decoder: encode with
// any sampling factors, restart interval and coding options, and read the quantised
// coefficients back with jpeg_read_coefficients (the reference). Not part of the library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pixpath::codecs::testing {

struct LibjpegEncodeOptions {
  int quality = 75;
  bool force_baseline = true;  // false: quality < 25 may write 16-bit tables (then SOF1)
  // Sampling factors per component (h, v); components = 1 (gray) or 3.
  int components = 3;
  int h[3] = {2, 1, 1}, v[3] = {2, 1, 1};
  int restart_interval = 0;  // MCUs
  bool optimize_coding = false;
  bool progressive = false;
  bool arithmetic = false;
  bool rgb = false;  // 3 components stored as RGB (Adobe transform 0), not YCbCr
  bool separate_scans = false;  // one sequential scan per component
};

// `pixels`: width x height x components bytes (RGB or gray). Empty on a libjpeg error
// (`error` says which).
std::vector<uint8_t> libjpeg_encode(const uint8_t* pixels, int width, int height,
                                    const LibjpegEncodeOptions& options, std::string* error);

struct LibjpegCoefficients {
  int components = 0;
  // Per component: real blocks (width_in_blocks x height_in_blocks), 64 coefficients each,
  // natural order.
  std::vector<int> width_in_blocks, height_in_blocks;
  std::vector<std::vector<int16_t>> planes;
};

// False on a libjpeg error (`error` says which).
bool libjpeg_read_coefficients(const std::vector<uint8_t>& jpeg, LibjpegCoefficients* out,
                               std::string* error);

// The samples of each component straight from the IDCT (jpeg_read_raw_data: no upsampling, no
// colour conversion), `dct int`. Per component a raster of width_in_blocks * 8 columns by
// height_in_blocks * 8 rows.
struct LibjpegRawPlanes {
  int components = 0;
  std::vector<int> width, height;  // in samples: blocks * 8
  std::vector<std::vector<uint8_t>> planes;
};
bool libjpeg_read_raw_planes(const std::vector<uint8_t>& jpeg, LibjpegRawPlanes* out,
                             std::string* error);

// A one-component (gray) baseline JPEG of `blocks_w` x 1 blocks holding exactly `coefs`
// (64 per block, natural order) with every quantisation step `q` (jpeg_write_coefficients).
std::vector<uint8_t> libjpeg_write_gray_coefficients(const std::vector<int16_t>& coefs,
                                                     int blocks_w, int q, std::string* error);

}  // namespace pixpath::codecs::testing
