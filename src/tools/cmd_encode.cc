// `pixpath encode INPUT -o OUTPUT --coding C [--quality Q] [--subsampling S] [--restart N]
// [--compression none|zlib|lz4] [--size WxH --rgb-format F [--rowstride N]]`: one picture
// (codecs::read_image_file) through a CPU encoder of the registry, converted first to the
// closest format the encoder takes; the encoded bytes are written as they would travel in a
// draw packet. CLI11 checks every value (option_values.h).
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "option_values.h"
#include "pixpath/codecs/encoder.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::tools {
namespace {

struct EncodeArgs {
  std::string input, output, coding;
  codecs::EncodeParams params;
  RawInputOptions raw;
};

std::vector<std::string> encodable_codings() {
  std::vector<std::string> codings;
  for (const auto& d : codecs::CodecRegistry::builtin().describe())
    if (d.encode) codings.push_back(d.coding);
  return codings;
}

// The picture in a format `encoder` takes: as it is, or converted to the closest one.
Result<Picture> encodable(Picture picture, const codecs::Encoder& encoder, const std::string& coding) {
  if (encoder.can_read(picture.format())) return picture;
  const bool alpha = info(picture.format()).has_alpha || coding == "jpega";
  PixelFormat want = alpha ? PixelFormat::RGBA : PixelFormat::RGB;
  if (coding == "rgb32" && !alpha) want = PixelFormat::RGBX;
  if (coding == "png/L") want = PixelFormat::GRAY8;
  if (!encoder.can_read(want)) {
    return Error(ErrorCode::Unsupported, coding, "encode",
                 "cannot encode a " + std::string(name(picture.format())) + " picture");
  }
  PIXPATH_TRY(Picture converted, Picture::allocate(want, picture.width(), picture.height()));
  PIXPATH_TRY(ConstPictureView src, picture.read());
  PIXPATH_TRY(PictureView dst, converted.write());
  PIXPATH_CHECK(convert_pixels(src, dst));
  return converted;
}

Result<codecs::EncodedPicture> encode_file(const EncodeArgs& a) {
  const codecs::Encoder* encoder = codecs::CodecRegistry::builtin().encoder(a.coding);
  if (!encoder) {  // --coding is checked while parsing; this is the registry changing under us
    return Error(ErrorCode::Unsupported, a.coding, "encode", "no encoder for this coding");
  }
  PIXPATH_TRY(Picture picture, codecs::read_image_file(a.input, a.raw.spec()));
  PIXPATH_TRY(picture, encodable(std::move(picture), *encoder, a.coding));
  PIXPATH_TRY(ConstPictureView view, picture.read());
  PIXPATH_TRY(codecs::EncodedPicture encoded, encoder->encode(view, a.params));
  PIXPATH_CHECK(codecs::write_file(a.output, encoded.data));
  return encoded;
}

// "encoded IN -> OUT: jpeg 33x17, 1234 bytes[, alpha-offset N][, rgb_format F, rowstride N]..."
void print_encoded(const EncodeArgs& a, const codecs::EncodedPicture& e) {
  std::cout << "encoded " << a.input << " -> " << a.output << ": " << a.coding << " " << e.width
            << "x" << e.height << ", " << e.data.size() << " bytes";
  if (e.options.alpha_offset) std::cout << ", alpha-offset " << *e.options.alpha_offset;
  if (!e.options.rgb_format.empty())
    std::cout << ", rgb_format " << e.options.rgb_format << ", rowstride " << e.rowstride;
  if (e.options.zlib) std::cout << ", zlib " << e.options.zlib;
  if (e.options.lz4) std::cout << ", lz4 " << e.options.lz4;
  std::cout << "\n";
}

}  // namespace

void add_encode_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "encode", "Encode a picture file (png, ppm, jpeg, webp or raw rgb) as an xpra coding");
  auto a = std::make_shared<EncodeArgs>();
  const std::vector<std::string> codings = encodable_codings();
  cmd->add_option("INPUT", a->input, "Picture to encode")->required();
  cmd->add_option("-o,--output", a->output, "Where to write the encoded data")->required();
  cmd->add_option("--coding", a->coding, one_of_text(codings))
      ->required()
      ->check(CLI::Validator(
          [codings](std::string& coding) -> std::string {
            for (const auto& c : codings)
              if (c == coding) return {};
            return "no encoder for coding '" + coding + "' (have: " + one_of_text(codings) + ")";
          },
          ""));
  cmd->add_option("--quality", a->params.quality, "1..100 (lossy codings)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--subsampling", a->params.subsampling, "jpeg chroma subsampling")
      ->transform(named_value<codecs::Subsampling>({{"444", codecs::Subsampling::S444},
                                                    {"422", codecs::Subsampling::S422},
                                                    {"420", codecs::Subsampling::S420},
                                                    {"gray", codecs::Subsampling::Gray}}))
      ->default_str("420");
  cmd->add_option("--restart", a->params.restart_interval,
                  "jpeg restart interval in MCU rows (0: none)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--compression", a->params.compression, "rgb24/rgb32 compression")
      ->transform(named_value<codecs::RgbCompression>({{"none", codecs::RgbCompression::None},
                                                       {"zlib", codecs::RgbCompression::Zlib},
                                                       {"lz4", codecs::RgbCompression::Lz4}}))
      ->default_str("none");
  add_raw_input_options(*cmd, a->raw);
  cmd->callback([a, &exit_code] {
    auto encoded = encode_file(*a);
    if (!encoded.ok()) {
      std::cerr << "pixpath encode: " << encoded.error().message() << "\n";
      exit_code = 1;
      return;
    }
    print_encoded(*a, *encoded);
    exit_code = 0;
  });
}

}  // namespace pixpath::tools
