// The GPU route's refusals (gpu_draw_decoder.h): what the GPU path cannot decode exactly,
// decided from the headers.
#include <string>
#include <string_view>

#include "pixpath/codecs/jpeg_tables.h"
#include "pixpath/paint/gpu_draw_decoder.h"

namespace pixpath::paint {
namespace {

std::string sampling(const codecs::JpegTables& t) {
  const auto& y = t.components[0];
  for (int c = 1; c < 3; ++c)
    if (t.components[size_t(c)].h_samp != 1 || t.components[size_t(c)].v_samp != 1) return "unusual";
  if (y.h_samp == 1 && y.v_samp == 1) return "4:4:4";
  if (y.h_samp == 2 && y.v_samp == 1) return "4:2:2";
  if (y.h_samp == 2 && y.v_samp == 2) return "4:2:0";
  if (y.h_samp == 1 && y.v_samp == 2) return "4:4:0";
  return std::to_string(y.h_samp) + "x" + std::to_string(y.v_samp);
}

}  // namespace

std::optional<std::string> gpu_exactness_refusal(std::span<const uint8_t> data, bool exact_engines,
                                                 bool exactness, bool own_decoder) {
  auto t = codecs::scan_jpeg_tables(data);
  if (!t.ok()) return std::nullopt;  // the decoder says what is wrong
  return gpu_exactness_refusal(*t, exact_engines, exactness, own_decoder);
}

std::optional<std::string> gpu_exactness_refusal(const codecs::JpegTables& t, bool exact_engines,
                                                 bool exactness, bool own_decoder) {
  if (t.sof != 0xC0 && t.sof != 0xC1 && t.sof != 0xC2)
    return t.process() + " JPEG (nvJPEG decodes Huffman-coded DCT JPEGs only)";
  if (t.precision != 8) return std::to_string(t.precision) + "-bit samples (nvJPEG decodes 8-bit only)";
  if (t.component_count != 1 && t.component_count != 3)
    return std::to_string(t.component_count) + "-component JPEG (CMYK/YCCK): not decoded on the GPU";
  if (!t.has_eoi) return "the stream ends before its EOI marker (truncated?)";
  if (own_decoder && exactness) {
    const std::string s = t.component_count == 1 ? "gray" : sampling(t);
    if (t.sof != 0xC0) {
      const std::string process = t.process();
      const char* article = std::string_view("aeiou").find(process[0]) != std::string_view::npos ? "an " : "a ";
      return article + process + " " + s + " JPEG is not decoded on the GPU (pixpath's own GPU decoder, " +
             "which reports damaged data as the CPU path does, takes baseline JPEGs only)";
    }
    if (s != "gray" && s != "4:4:4" && s != "4:2:2" && s != "4:2:0")
      return "a colour " + s + " JPEG is not decoded on the GPU (its sampling: pixpath's own GPU decoder is " +
             "checked on gray, 4:4:4, 4:2:2 and 4:2:0)";
    return std::nullopt;
  }
  if (t.component_count == 1 || !exactness) return std::nullopt;
  const std::string s = sampling(t);
  const char* why = nullptr;
  if (!exact_engines)
    why = "no hardware JPEG engines for it on this GPU";
  else if (t.sof != 0xC0)
    why = t.sof == 0xC1 ? "extended sequential: the engines decode 16-bit-table pictures wrongly" : "progressive";
  else if (s != "4:4:4" && s != "4:2:2" && s != "4:2:0")
    why = "its sampling";
  if (!why) return std::nullopt;
  return "a colour " + t.process() + " " + s + " JPEG is not decoded by the hardware JPEG engines (" + why +
         "), and nvJPEG's other backends differ from libjpeg-turbo by up to 3 levels";
}

}  // namespace pixpath::paint
