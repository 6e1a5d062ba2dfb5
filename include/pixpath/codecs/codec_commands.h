// The codec pieces of the pixpath command line, as library functions (src/tools wires them):
//   pixpath decode INPUT -o OUTPUT [--size WxH --rgb-format F [--rowstride N]]
//   pixpath encode INPUT -o OUTPUT --coding jpeg|jpega|png|png/L|webp|rgb24|rgb32
//                  [--quality Q] [--subsampling 444|422|420|gray] [--restart N]
//                  [--compression none|zlib|lz4] [--size WxH --rgb-format F]
//   pixpath info --json   (registry_info_json)
// The int-returning run_* parse the arguments (without the sub-command name), run, and print a
// one-line reason to `err` on failure: exit status 0 ok, 1 failed, 2 bad arguments.
#pragma once

#include <iosfwd>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "pixpath/codecs/encoder.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs {

struct DecodeCommand {
  std::string input, output;
  std::optional<RawImageSpec> raw;  // --size and --rgb-format: the input is raw rgb bytes
};

struct EncodeCommand {
  std::string input, output;
  std::string coding;
  EncodeParams params;
  std::optional<RawImageSpec> raw;
};

Result<DecodeCommand> parse_decode_args(std::span<const std::string> args);
Result<EncodeCommand> parse_encode_args(std::span<const std::string> args);

Result<void> run_decode(const DecodeCommand& command);
// Returns what was written (data size, draw options such as alpha-offset).
Result<EncodedPicture> run_encode(const EncodeCommand& command);

int run_decode(std::span<const std::string> args, std::ostream& out, std::ostream& err);
int run_encode(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// {"codecs": [{coding, decode, encode, library, outputs, options}...],
//  "libraries": [{name, version}...], "decodable": [...]}
nlohmann::json registry_info_json(const CodecRegistry& registry = CodecRegistry::builtin());

}  // namespace pixpath::codecs
