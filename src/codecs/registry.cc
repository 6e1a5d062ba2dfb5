// The built-in CPU codecs, one registration line per coding.
#include "pixpath/codecs/registry.h"

#include <lz4.h>
#include <libdeflate.h>
#include <spng.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <zlib.h>

#include <cstdio>
#include <jpeglib.h>

#include "internal/builtin_codecs.h"

namespace pixpath::codecs {

struct CodecRegistry::Entry {
  std::unique_ptr<Decoder> decoder;
  std::unique_ptr<Encoder> encoder;
  CodecDescription description;
};

namespace {

using Strings = std::vector<std::string>;

CodecDescription describe_as(std::string coding, std::string library, Strings outputs,
                             Strings options) {
  CodecDescription d;
  d.coding = std::move(coding);
  d.library = std::move(library);
  d.outputs = std::move(outputs);
  d.options = std::move(options);
  return d;
}

}  // namespace

CodecRegistry::CodecRegistry() {
  using namespace internal;
  auto add = [this](std::unique_ptr<Decoder> dec, std::unique_ptr<Encoder> enc,
                    CodecDescription d) {
    d.decode = dec != nullptr;
    d.encode = enc != nullptr;
    entries_.push_back(Entry{std::move(dec), std::move(enc), std::move(d)});
  };
  const Strings packed = {"RGB", "BGR", "RGBX", "BGRX", "XRGB", "XBGR",
                          "RGBA", "BGRA", "ARGB", "ABGR"};
  Strings jpeg_out = packed;
  jpeg_out.insert(jpeg_out.end(), {"GRAY8", "YUV420P", "YUV422P", "YUV444P"});
  // In preference order (what a client would advertise first).
  add(make_rgb_decoder("rgb32"), make_rgb_encoder("rgb32"),
      describe_as("rgb32", "zlib, lz4", packed, {"rgb_format", "rowstride", "zlib", "lz4"}));
  add(make_rgb_decoder("rgb24"), make_rgb_encoder("rgb24"),
      describe_as("rgb24", "zlib, lz4", packed, {"rgb_format", "rowstride", "zlib", "lz4"}));
  add(make_jpeg_decoder(), make_jpeg_encoder(),
      describe_as("jpeg", "libjpeg-turbo (TurboJPEG 2 API)", jpeg_out,
                  {"quality", "subsampling", "restart_interval"}));
  add(make_jpega_decoder(), make_jpega_encoder(),
      describe_as("jpega", "libjpeg-turbo (TurboJPEG 2 API)", {"RGBA", "BGRA", "ARGB", "ABGR"},
                  {"alpha-offset", "quality", "subsampling"}));
  add(make_webp_decoder(), make_webp_encoder(),
      describe_as("webp", "libwebp", {"RGB", "BGR", "RGBA", "BGRA", "ARGB", "RGBX", "BGRX", "XRGB"},
                  {"quality (100 = lossless)"}));
  add(make_png_decoder("png"), make_png_encoder("png"),
      describe_as("png", "libspng; libdeflate + own unfiltering for 8-bit RGB/RGBA", {"RGBA", "RGBX", "RGB", "GRAY8 (grayscale PNGs)"}, {"level"}));
  add(make_png_decoder("png/L"), make_png_encoder("png/L"),
      describe_as("png/L", "libspng", {"RGBA", "RGBX", "RGB", "GRAY8"}, {"level"}));
  add(make_png_decoder("png/P"), nullptr,
      describe_as("png/P", "libspng", {"RGBA", "RGBX", "RGB"}, {}));
}

CodecRegistry::~CodecRegistry() = default;

const CodecRegistry& CodecRegistry::builtin() {
  static const CodecRegistry* registry = new CodecRegistry();  // never destroyed: used at exit
  return *registry;
}

const Decoder* CodecRegistry::decoder(std::string_view coding) const {
  for (const auto& e : entries_) {
    if (e.description.coding == coding) return e.decoder.get();
  }
  return nullptr;
}

const Encoder* CodecRegistry::encoder(std::string_view coding) const {
  for (const auto& e : entries_) {
    if (e.description.coding == coding) return e.encoder.get();
  }
  return nullptr;
}

std::vector<std::string> CodecRegistry::decodable_codings() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) {
    if (e.decoder) out.push_back(e.description.coding);
  }
  return out;
}

std::vector<CodecDescription> CodecRegistry::describe() const {
  std::vector<CodecDescription> out;
  for (const auto& e : entries_) out.push_back(e.description);
  return out;
}

std::vector<LibraryVersion> CodecRegistry::library_versions() const {
  auto dotted = [](int v) {  // libwebp: 0xMMmmpp
    return std::to_string((v >> 16) & 0xff) + "." + std::to_string((v >> 8) & 0xff) + "." +
           std::to_string(v & 0xff);
  };
  // libjpeg-turbo has no run-time version call in the TurboJPEG 2 API: the compile-time
  // version, with the libjpeg API version it emulates.
  constexpr int v = LIBJPEG_TURBO_VERSION_NUMBER;  // 2001005 = 2.1.5
  const std::string jpeg = std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) +
                           "." + std::to_string(v % 1000);
  return {
      {"libjpeg-turbo", jpeg + " (built against; libjpeg API " + std::to_string(JPEG_LIB_VERSION) + ")"},
      {"libspng", spng_version_string()},
      {"libdeflate", LIBDEFLATE_VERSION_STRING " (built against; png's fast path)"},
      {"libwebp", "decoder " + dotted(WebPGetDecoderVersion()) + ", encoder " +
                      dotted(WebPGetEncoderVersion())},
      {"lz4", LZ4_versionString()},
      {"zlib", zlibVersion()},
  };
}

}  // namespace pixpath::codecs
