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

}  // namespace

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
