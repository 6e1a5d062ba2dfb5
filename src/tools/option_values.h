// Option values that several `pixpath` subcommands take, checked by CLI11 while it parses: a
// bad value is a parse error that names the option (main.cc: one line, exit status 2), so a
// subcommand's callback only ever sees good values.
//   - picture sizes "WxH" (decode/encode --size, attach/record --max-picture-size);
//   - names mapped onto values (--subsampling 444, --compression lz4, --rgb-format BGRX);
//   - raw rgb input (--size, --rgb-format, --rowstride) for decode and encode.
//
// Threading: the validators are plain values; CLI11 runs them on the parsing thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixpath/codecs/image_io.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/result.h"

namespace pixpath::tools {

struct PictureSize {
  int width = 0, height = 0;
};

// "WxH" (or "WXH"), each side 1..65535; the error says what was expected.
Result<PictureSize> parse_picture_size(std::string_view text);

// Checks an option's text with parse_picture_size ("expected WxH, e.g. 8192x8192, not 'big'").
CLI::Validator picture_size_check();

// "a, b or c".
std::string one_of_text(const std::vector<std::string>& names);

// A CLI11 transform: each of `names` becomes its value, for an option of an enum or integer
// type; anything else is refused with "wants a, b or c, not 'x'". Names match exactly. --help
// shows "{a,b,c}".
template <class T>
CLI::Validator named_value(std::vector<std::pair<std::string, T>> names) {
  std::vector<std::string> keys;
  std::string braces;  // "{a,b,c}", as CLI::IsMember shows its set in --help
  for (const auto& n : names) {
    keys.push_back(n.first);
    braces += (braces.empty() ? "{" : ",") + n.first;
  }
  braces += "}";
  const std::string list = one_of_text(keys);
  return CLI::Validator(
      [names = std::move(names), list](std::string& input) -> std::string {
        for (const auto& [name, value] : names) {
          if (name == input) {
            if constexpr (std::is_enum_v<T>)
              input = std::to_string(static_cast<long long>(static_cast<std::underlying_type_t<T>>(value)));
            else
              input = std::to_string(value);
            return {};
          }
        }
        return "wants " + list + ", not '" + input + "'";
      },
      braces);
}

// The packed rgb formats by name (RGB, BGR, RGBX, BGRX, ..., ABGR): --rgb-format's values.
std::vector<std::pair<std::string, PixelFormat>> rgb_format_names();

// Raw rgb input: --size WxH and --rgb-format F together (one without the other is a parse
// error), --rowstride N (bytes per row; 0 or absent: packed) only with them.
struct RawInputOptions {
  std::optional<PictureSize> size;
  PixelFormat format = PixelFormat::RGB;
  int rowstride = 0;

  // What to read the input as (codecs::read_image_file); nullopt: a picture file.
  std::optional<codecs::RawImageSpec> spec() const;
};

// Adds --size, --rgb-format and --rowstride to `cmd`; `raw` must outlive the parse. Returns
// the --size and --rgb-format options (for excludes()).
std::pair<CLI::Option*, CLI::Option*> add_raw_input_options(CLI::App& cmd, RawInputOptions& raw);

}  // namespace pixpath::tools
