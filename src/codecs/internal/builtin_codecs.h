// Factories for the built-in CPU codecs, one per file; registry.cc registers them.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "pixpath/codecs/decoder.h"
#include "pixpath/codecs/encoder.h"

namespace pixpath::codecs::internal {

std::unique_ptr<Decoder> make_jpeg_decoder();   // jpeg_decoder.cc
std::unique_ptr<Decoder> make_jpega_decoder();  // jpega_decoder.cc
// png_decoder.cc: "png", "png/L", "png/P" (the same decoder; the coding names the error subject)
std::unique_ptr<Decoder> make_png_decoder(std::string_view coding);
// The png decoder's fast path (libdeflate + own unfiltering, png_decoder.cc) on or off for every
// png decoder, from now on (default: on, unless PIXPATH_PNG_LIBSPNG=1 is set at the first
// decode); for tests and benchmarks comparing it with libspng. png_fast_path_decodes(): how many
// decodes it has completed in this process.
void set_png_fast_path(bool on);
bool png_fast_path();
uint64_t png_fast_path_decodes();
std::unique_ptr<Decoder> make_webp_decoder();   // webp_decoder.cc
// rgb_decoder.cc: "rgb24", "rgb32"
std::unique_ptr<Decoder> make_rgb_decoder(std::string_view coding);

std::unique_ptr<Encoder> make_jpeg_encoder();   // jpeg_encoder.cc
std::unique_ptr<Encoder> make_jpega_encoder();  // jpeg_encoder.cc
std::unique_ptr<Encoder> make_png_encoder(std::string_view coding);  // png_encoder.cc: png, png/L
std::unique_ptr<Encoder> make_webp_encoder();   // webp_encoder.cc
std::unique_ptr<Encoder> make_rgb_encoder(std::string_view coding);  // rgb_encoder.cc

}  // namespace pixpath::codecs::internal
