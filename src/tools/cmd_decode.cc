// `pixpath decode INPUT -o OUTPUT [--size WxH --rgb-format F [--rowstride N]]`: one picture
// through the CPU decoders (codecs::run_decode does the work and checks the values).
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "pixpath/codecs/codec_commands.h"

namespace pixpath::tools {

void add_decode_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "decode",
      "Decode a picture file (jpeg, png, webp, or raw rgb bytes with --size and --rgb-format) "
      "and write it as PNG/PPM (by OUTPUT's extension)");
  struct Args {
    std::string input, output, size, rgb_format, rowstride;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("INPUT", a->input, "Picture to decode")->required();
  cmd->add_option("-o,--output", a->output, "Where to write the decoded picture")->required();
  cmd->add_option("--size", a->size, "Raw input: WxH");
  cmd->add_option("--rgb-format", a->rgb_format, "Raw input: byte order (BGRX, RGBA, RGB, ...)");
  cmd->add_option("--rowstride", a->rowstride, "Raw input: bytes per row (default: packed)");
  cmd->callback([a, &exit_code] {
    std::vector<std::string> args{a->input, "-o", a->output};
    if (!a->size.empty()) args.insert(args.end(), {"--size", a->size});
    if (!a->rgb_format.empty()) args.insert(args.end(), {"--rgb-format", a->rgb_format});
    if (!a->rowstride.empty()) args.insert(args.end(), {"--rowstride", a->rowstride});
    std::ostringstream err;
    exit_code = codecs::run_decode(args, std::cout, err);
    if (exit_code != 0) std::cerr << "pixpath decode: " << err.str();
  });
}

}  // namespace pixpath::tools
