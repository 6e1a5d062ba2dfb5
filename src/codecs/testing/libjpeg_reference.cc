#include "codecs/testing/libjpeg_reference.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// clang-format off
#include <jpeglib.h>
// clang-format on

namespace pixpath::codecs::testing {
namespace {

struct ErrorJump {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorJump*>(cinfo->err);
  cinfo->err->format_message(cinfo, err->message);
  std::longjmp(err->jump, 1);
}
void no_output(j_common_ptr) {}

// Plain C on purpose: setjmp/longjmp must not skip C++ destructors. *out is malloc'ed.
bool encode_c(const uint8_t* pixels, int width, int height, const LibjpegEncodeOptions* o,
              unsigned char** out, unsigned long* out_size, char* message) {
  jpeg_compress_struct c;
  ErrorJump err;
  c.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit;
  err.pub.output_message = no_output;
  if (setjmp(err.jump)) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", err.message);
    jpeg_destroy_compress(&c);
    return false;
  }
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, out, out_size);
  c.image_width = JDIMENSION(width);
  c.image_height = JDIMENSION(height);
  c.input_components = o->components;
  c.in_color_space = o->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  if (o->rgb) jpeg_set_colorspace(&c, JCS_RGB);
  jpeg_set_quality(&c, o->quality, o->force_baseline ? TRUE : FALSE);
  c.dct_method = JDCT_ISLOW;
  for (int i = 0; i < o->components; ++i) {
    c.comp_info[i].h_samp_factor = o->h[i];
    c.comp_info[i].v_samp_factor = o->v[i];
  }
  c.restart_interval = unsigned(o->restart_interval);
  c.optimize_coding = o->optimize_coding ? TRUE : FALSE;
  c.arith_code = o->arithmetic ? TRUE : FALSE;
  jpeg_scan_info scans[3];
  if (o->progressive) {
    jpeg_simple_progression(&c);
  } else if (o->separate_scans && o->components == 3) {
    for (int i = 0; i < 3; ++i) {
      scans[i].comps_in_scan = 1;
      scans[i].component_index[0] = i;
      scans[i].Ss = 0;
      scans[i].Se = 63;
      scans[i].Ah = 0;
      scans[i].Al = 0;
    }
    c.scan_info = scans;
    c.num_scans = 3;
  }
  jpeg_start_compress(&c, TRUE);
  const size_t row = size_t(width) * size_t(o->components);
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = const_cast<JSAMPROW>(pixels + row * c.next_scanline);
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  return true;
}

// *planes is malloc'ed: the components' blocks one after the other.
bool read_c(const unsigned char* data, unsigned long size, int* components, int* wib, int* hib,
            int16_t** planes, char* message) {
  jpeg_decompress_struct d;
  ErrorJump err;
  d.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit;
  err.pub.output_message = no_output;
  *planes = nullptr;
  if (setjmp(err.jump)) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", err.message);
    std::free(*planes);
    *planes = nullptr;
    jpeg_destroy_decompress(&d);
    return false;
  }
  jpeg_create_decompress(&d);
  jpeg_mem_src(&d, data, size);
  jpeg_read_header(&d, TRUE);
  jvirt_barray_ptr* arrays = jpeg_read_coefficients(&d);
  *components = d.num_components;
  size_t total = 0;
  for (int c = 0; c < d.num_components; ++c) {
    wib[c] = int(d.comp_info[c].width_in_blocks);
    hib[c] = int(d.comp_info[c].height_in_blocks);
    total += size_t(wib[c]) * size_t(hib[c]) * 64;
  }
  *planes = static_cast<int16_t*>(std::malloc(total * sizeof(int16_t) + 1));
  int16_t* at = *planes;
  for (int c = 0; c < d.num_components; ++c) {
    for (int by = 0; by < hib[c]; ++by) {
      JBLOCKARRAY rows = d.mem->access_virt_barray(reinterpret_cast<j_common_ptr>(&d), arrays[c],
                                                    JDIMENSION(by), 1, FALSE);
      for (int bx = 0; bx < wib[c]; ++bx) {
        for (int k = 0; k < 64; ++k) *at++ = rows[0][bx][k];
      }
    }
  }
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  return true;
}

// *planes is malloc'ed: the components' samples one after the other.
bool raw_c(const unsigned char* data, unsigned long size, int* components, int* width,
           int* height, uint8_t** planes, char* message) {
  jpeg_decompress_struct d;
  ErrorJump err;
  d.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit;
  err.pub.output_message = no_output;
  *planes = nullptr;
  if (setjmp(err.jump)) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", err.message);
    std::free(*planes);
    *planes = nullptr;
    jpeg_destroy_decompress(&d);
    return false;
  }
  jpeg_create_decompress(&d);
  jpeg_mem_src(&d, data, size);
  jpeg_read_header(&d, TRUE);
  d.raw_data_out = TRUE;
  d.dct_method = JDCT_ISLOW;
  jpeg_start_decompress(&d);
  *components = d.num_components;
  // Rows allocated: whole iMCU rows (the library writes v * 8 rows per component per call).
  size_t offsets[4] = {}, total = 0, alloc_rows[4] = {}, stride[4] = {};
  const int imcu_rows = int((d.output_height + JDIMENSION(d.max_v_samp_factor * 8) - 1) /
                            JDIMENSION(d.max_v_samp_factor * 8));
  for (int c = 0; c < d.num_components; ++c) {
    width[c] = int(d.comp_info[c].width_in_blocks) * 8;
    height[c] = int(d.comp_info[c].height_in_blocks) * 8;
    stride[c] = size_t(d.comp_info[c].width_in_blocks + JDIMENSION(d.comp_info[c].h_samp_factor)) * 8;
    alloc_rows[c] = size_t(imcu_rows) * size_t(d.comp_info[c].v_samp_factor) * 8;
    offsets[c] = total;
    total += stride[c] * alloc_rows[c];
  }
  *planes = static_cast<uint8_t*>(std::malloc(total + 1));
  JSAMPROW rows[4][32];
  JSAMPARRAY arrays[4];
  for (int imcu = 0; imcu < imcu_rows; ++imcu) {
    for (int c = 0; c < d.num_components; ++c) {
      const int v8 = d.comp_info[c].v_samp_factor * 8;
      for (int r = 0; r < v8; ++r) {
        rows[c][r] = *planes + offsets[c] + (size_t(imcu) * size_t(v8) + size_t(r)) * stride[c];
      }
      arrays[c] = rows[c];
    }
    jpeg_read_raw_data(&d, arrays, JDIMENSION(d.max_v_samp_factor * 8));
  }
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  // Repack to width[c] columns, height[c] rows.
  uint8_t* packed = static_cast<uint8_t*>(std::malloc(total + 1));
  size_t at = 0;
  for (int c = 0; c < *components; ++c) {
    for (int y = 0; y < height[c]; ++y) {
      std::memcpy(packed + at, *planes + offsets[c] + size_t(y) * stride[c], size_t(width[c]));
      at += size_t(width[c]);
    }
  }
  std::free(*planes);
  *planes = packed;
  return true;
}

bool write_coefficients_c(const int16_t* coefs, int blocks_w, int q, unsigned char** out,
                          unsigned long* out_size, char* message) {
  jpeg_compress_struct c;
  ErrorJump err;
  c.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit;
  err.pub.output_message = no_output;
  if (setjmp(err.jump)) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", err.message);
    jpeg_destroy_compress(&c);
    return false;
  }
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, out, out_size);
  c.image_width = JDIMENSION(blocks_w * 8);
  c.image_height = 8;
  c.input_components = 1;
  c.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  unsigned int table[64];
  for (int i = 0; i < 64; ++i) table[i] = unsigned(q);
  jpeg_add_quant_table(&c, 0, table, 100, TRUE);
  c.optimize_coding = TRUE;  // any coefficient values, whatever the default tables hold
  jvirt_barray_ptr arrays[1];
  arrays[0] = c.mem->request_virt_barray(reinterpret_cast<j_common_ptr>(&c), JPOOL_IMAGE, TRUE,
                                         JDIMENSION(blocks_w), 1, 1);
  jpeg_write_coefficients(&c, arrays);
  JBLOCKARRAY row = c.mem->access_virt_barray(reinterpret_cast<j_common_ptr>(&c), arrays[0], 0, 1, TRUE);
  for (int b = 0; b < blocks_w; ++b) {
    for (int k = 0; k < 64; ++k) row[0][b][k] = coefs[b * 64 + k];
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  return true;
}

}  // namespace

bool libjpeg_read_raw_planes(const std::vector<uint8_t>& jpeg, LibjpegRawPlanes* out,
                             std::string* error) {
  int components = 0, width[4] = {}, height[4] = {};
  uint8_t* planes = nullptr;
  char message[JMSG_LENGTH_MAX] = {};
  if (!raw_c(jpeg.data(), jpeg.size(), &components, width, height, &planes, message)) {
    if (error) *error = message;
    return false;
  }
  out->components = components;
  out->width.assign(width, width + components);
  out->height.assign(height, height + components);
  out->planes.clear();
  const uint8_t* at = planes;
  for (int c = 0; c < components; ++c) {
    const size_t n = size_t(width[c]) * size_t(height[c]);
    out->planes.emplace_back(at, at + n);
    at += n;
  }
  std::free(planes);
  return true;
}

std::vector<uint8_t> libjpeg_write_gray_coefficients(const std::vector<int16_t>& coefs,
                                                     int blocks_w, int q, std::string* error) {
  unsigned char* out = nullptr;
  unsigned long size = 0;
  char message[JMSG_LENGTH_MAX] = {};
  if (!write_coefficients_c(coefs.data(), blocks_w, q, &out, &size, message)) {
    if (error) *error = message;
    std::free(out);
    return {};
  }
  std::vector<uint8_t> v(out, out + size);
  std::free(out);
  return v;
}

std::vector<uint8_t> libjpeg_encode(const uint8_t* pixels, int width, int height,
                                    const LibjpegEncodeOptions& options, std::string* error) {
  unsigned char* out = nullptr;
  unsigned long size = 0;
  char message[JMSG_LENGTH_MAX] = {};
  if (!encode_c(pixels, width, height, &options, &out, &size, message)) {
    if (error) *error = message;
    std::free(out);
    return {};
  }
  std::vector<uint8_t> v(out, out + size);
  std::free(out);
  return v;
}

bool libjpeg_read_coefficients(const std::vector<uint8_t>& jpeg, LibjpegCoefficients* out,
                               std::string* error) {
  int components = 0, wib[4] = {}, hib[4] = {};
  int16_t* planes = nullptr;
  char message[JMSG_LENGTH_MAX] = {};
  if (!read_c(jpeg.data(), jpeg.size(), &components, wib, hib, &planes, message)) {
    if (error) *error = message;
    return false;
  }
  out->components = components;
  out->width_in_blocks.assign(wib, wib + components);
  out->height_in_blocks.assign(hib, hib + components);
  out->planes.clear();
  const int16_t* at = planes;
  for (int c = 0; c < components; ++c) {
    const size_t n = size_t(wib[c]) * size_t(hib[c]) * 64;
    out->planes.emplace_back(at, at + n);
    at += n;
  }
  std::free(planes);
  return true;
}

}  // namespace pixpath::codecs::testing
