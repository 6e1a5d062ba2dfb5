#include "option_values.h"

#include <charconv>

namespace pixpath::tools {
namespace {

constexpr int kMaxPictureSide = 65535;

std::optional<int> side(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1 || v > kMaxPictureSide) return std::nullopt;
  return v;
}

}  // namespace

Result<PictureSize> parse_picture_size(std::string_view text) {
  const auto x = text.find_first_of("xX");
  std::optional<int> w, h;
  if (x != std::string_view::npos) {
    w = side(text.substr(0, x));
    h = side(text.substr(x + 1));
  }
  if (!w || !h) {
    return Error(ErrorCode::InvalidArgument, "picture size", "parse",
                 "expected WxH, e.g. 8192x8192 (each side 1.." + std::to_string(kMaxPictureSide) +
                     "), not '" + std::string(text) + "'");
  }
  return PictureSize{*w, *h};
}

CLI::Validator picture_size_check() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        auto size = parse_picture_size(input);
        return size.ok() ? std::string() : size.error().reason();
      },
      "WxH");
}

std::string one_of_text(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

std::vector<std::pair<std::string, PixelFormat>> rgb_format_names() {
  std::vector<std::pair<std::string, PixelFormat>> names;
  for (int i = 0; i < kPixelFormatCount; ++i) {
    const auto f = static_cast<PixelFormat>(i);
    if (info(f).packed_rgb) names.emplace_back(std::string(name(f)), f);
  }
  return names;
}

std::optional<codecs::RawImageSpec> RawInputOptions::spec() const {
  if (!size) return std::nullopt;
  return codecs::RawImageSpec{size->width, size->height, format, rowstride};
}

std::pair<CLI::Option*, CLI::Option*> add_raw_input_options(CLI::App& cmd, RawInputOptions& raw) {
  auto* size = cmd.add_option_function<std::string>(
                      "--size",
                      [&raw](const std::string& text) { raw.size = *parse_picture_size(text); },
                      "Raw input: WxH")
                   ->check(picture_size_check());
  std::vector<std::string> formats;
  for (const auto& f : rgb_format_names()) formats.push_back(f.first);
  auto* format = cmd.add_option("--rgb-format", raw.format,
                                "Raw input: byte order, " + one_of_text(formats))
                     ->transform(named_value(rgb_format_names()).description(""))
                     ->type_name("FORMAT");
  auto* rowstride = cmd.add_option("--rowstride", raw.rowstride,
                                   "Raw input: bytes per row (default: packed)")
                        ->check(CLI::NonNegativeNumber);
  size->needs(format);
  format->needs(size);
  rowstride->needs(size);
  return {size, format};
}

}  // namespace pixpath::tools
