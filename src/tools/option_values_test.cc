#include "option_values.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "pixpath/codecs/encoder.h"

namespace pixpath::tools {
namespace {

// Parses `args` (without the program name) with `app`; returns the parse error's text, or ""
// when it parsed.
std::string parse(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "x");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

TEST(PictureSize, ParsesWxH) {
  auto s = parse_picture_size("640x480");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->width, 640);
  EXPECT_EQ(s->height, 480);
  EXPECT_EQ(parse_picture_size("1X65535")->height, 65535);
}

TEST(PictureSize, RefusesAnythingElseSayingWhatItWants) {
  for (const char* bad : {"", "big", "640", "640x", "x480", "0x5", "5x0", "-1x5", "65536x1",
                          "640x480x2", "640 x 480", "6.5x4", "0x10x"}) {
    auto s = parse_picture_size(bad);
    ASSERT_FALSE(s.ok()) << "'" << bad << "'";
    EXPECT_EQ(s.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(s.error().reason().find("expected WxH"), std::string::npos) << s.error().reason();
    EXPECT_NE(s.error().reason().find("'" + std::string(bad) + "'"), std::string::npos)
        << s.error().reason();
  }
}

TEST(OptionValues, PictureSizeCheckNamesTheOption) {
  CLI::App app;
  std::string size;
  app.add_option("--size", size)->check(picture_size_check());
  EXPECT_EQ(parse(app, {"--size", "8x4"}), "");
  EXPECT_EQ(size, "8x4");
  const std::string err = parse(app, {"--size", "8by4"});
  EXPECT_NE(err.find("--size"), std::string::npos) << err;
  EXPECT_NE(err.find("expected WxH"), std::string::npos) << err;
}

TEST(OptionValues, NamedValueMapsNamesOntoAnEnum) {
  CLI::App app;
  codecs::Subsampling s = codecs::Subsampling::S420;
  app.add_option("--subsampling", s)
      ->transform(named_value<codecs::Subsampling>({{"444", codecs::Subsampling::S444},
                                                    {"422", codecs::Subsampling::S422},
                                                    {"gray", codecs::Subsampling::Gray}}));
  EXPECT_EQ(parse(app, {"--subsampling", "gray"}), "");
  EXPECT_EQ(s, codecs::Subsampling::Gray);
  EXPECT_EQ(parse(app, {"--subsampling", "422"}), "");
  EXPECT_EQ(s, codecs::Subsampling::S422);
  const std::string err = parse(app, {"--subsampling", "411"});
  EXPECT_NE(err.find("--subsampling"), std::string::npos) << err;
  EXPECT_NE(err.find("wants 444, 422 or gray, not '411'"), std::string::npos) << err;
  EXPECT_NE(parse(app, {"--subsampling", "1"}), "") << "the value's number is not a name";
}

TEST(OptionValues, RgbFormatsArePackedRgbOnly) {
  std::vector<std::string> names;
  for (const auto& [n, f] : rgb_format_names()) {
    names.push_back(n);
    EXPECT_TRUE(info(f).packed_rgb) << n;
    EXPECT_EQ(parse_pixel_format(n), f);
  }
  EXPECT_EQ(names.size(), 10u);
  for (const char* want : {"RGB", "BGR", "BGRX", "RGBA", "ABGR"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const char* not_rgb : {"GRAY8", "NV12", "YUV420P"})
    EXPECT_EQ(std::find(names.begin(), names.end(), not_rgb), names.end()) << not_rgb;
}

TEST(OptionValues, RawInput) {
  CLI::App app;
  RawInputOptions raw;
  add_raw_input_options(app, raw);
  EXPECT_EQ(parse(app, {}), "");
  EXPECT_FALSE(raw.spec()) << "no --size: a picture file";

  EXPECT_EQ(parse(app, {"--size", "8x4", "--rgb-format", "BGRX", "--rowstride", "40"}), "");
  auto spec = raw.spec();
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->width, 8);
  EXPECT_EQ(spec->height, 4);
  EXPECT_EQ(spec->format, PixelFormat::BGRX);
  EXPECT_EQ(spec->rowstride, 40);
}

TEST(OptionValues, RawInputRefusesHalvesAndBadValues) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::initializer_list<Case>{
           {{"--size", "8x4"}, "--size requires --rgb-format"},
           {{"--rgb-format", "BGRX"}, "--rgb-format requires --size"},
           {{"--size", "8x4", "--rgb-format", "BGRX", "--rowstride", "-1"}, "--rowstride"},
           {{"--rowstride", "32"}, "--rowstride requires --size"},
           {{"--size", "0x4", "--rgb-format", "BGRX"}, "expected WxH"},
           {{"--size", "8x4", "--rgb-format", "NV12"}, "not 'NV12'"},
           {{"--size", "8x4", "--rgb-format", "bgrx"}, "wants RGB, BGR"},
       }) {
    CLI::App app;
    RawInputOptions raw;
    add_raw_input_options(app, raw);
    const std::string err = parse(app, c.args);
    EXPECT_NE(err.find(c.says), std::string::npos) << c.args[0] << ": '" << err << "'";
  }
}

}  // namespace
}  // namespace pixpath::tools
