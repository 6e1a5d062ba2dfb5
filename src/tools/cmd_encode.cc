// `pixpath encode INPUT -o OUTPUT --coding C [--quality Q] [--subsampling S] [--restart N]
// [--compression none|zlib|lz4] [--size WxH --rgb-format F]`: one picture through the CPU
// encoders (codecs::run_encode does the work and checks the values).
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "pixpath/codecs/codec_commands.h"

namespace pixpath::tools {

void add_encode_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "encode", "Encode a picture file (png, ppm, jpeg, webp or raw rgb) as an xpra coding");
  struct Args {
    std::string input, output, coding, quality, subsampling, restart, compression, size,
        rgb_format, rowstride;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("INPUT", a->input, "Picture to encode")->required();
  cmd->add_option("-o,--output", a->output, "Where to write the encoded data")->required();
  cmd->add_option("--coding", a->coding, "jpeg, jpega, png, png/L, webp, rgb24 or rgb32")->required();
  cmd->add_option("--quality", a->quality, "1..100 (lossy codings)");
  cmd->add_option("--subsampling", a->subsampling, "jpeg chroma: 444, 422, 420 or gray");
  cmd->add_option("--restart", a->restart, "jpeg restart interval in MCU rows (0: none)");
  cmd->add_option("--compression", a->compression, "rgb24/rgb32: none, zlib or lz4");
  cmd->add_option("--size", a->size, "Raw input: WxH");
  cmd->add_option("--rgb-format", a->rgb_format, "Raw input: byte order (BGRX, RGBA, RGB, ...)");
  cmd->add_option("--rowstride", a->rowstride, "Raw input: bytes per row (default: packed)");
  cmd->callback([a, &exit_code] {
    std::vector<std::string> args{a->input, "-o", a->output, "--coding", a->coding};
    auto opt = [&](const char* name, const std::string& v) {
      if (!v.empty()) args.insert(args.end(), {name, v});
    };
    opt("--quality", a->quality);
    opt("--subsampling", a->subsampling);
    opt("--restart", a->restart);
    opt("--compression", a->compression);
    opt("--size", a->size);
    opt("--rgb-format", a->rgb_format);
    opt("--rowstride", a->rowstride);
    std::ostringstream err;
    exit_code = codecs::run_encode(args, std::cout, err);
    if (exit_code != 0) std::cerr << "pixpath encode: " << err.str();
  });
}

}  // namespace pixpath::tools
