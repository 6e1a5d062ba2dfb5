// The pixpath command line (no server): exit codes, one-line errors, --json that parses.
// Exit status convention (src/tools/commands.h): 0 ok, 1 failed, 2 bad arguments.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

#include "support/processes.h"

namespace pixpath::testing {
namespace {

using namespace std::chrono_literals;

ProcessResult pixpath(const TempDir& tmp, std::vector<std::string> args) {
  args.insert(args.begin(), pixpath_binary());
  return run_process(args, tmp.path.string(), 120s);
}

// A failure: the given status and exactly one line on stderr, naming the subcommand.
void expect_one_line_error(const ProcessResult& r, int code, const std::string& sub) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  const std::string prefix = sub.empty() ? "pixpath:" : "pixpath " + sub + ":";
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
}

TEST(Cli, HelpAndVersion) {
  TempDir tmp;
  auto r = pixpath(tmp, {"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"info", "decode", "encode", "play", "attach", "record"})
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub;
  for (const char* sub : {"info", "decode", "encode", "play", "attach", "record"}) {
    auto h = pixpath(tmp, {sub, "--help"});
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_NE(h.out.find("Usage"), std::string::npos) << sub;
  }
  EXPECT_NE(pixpath(tmp, {"--version"}).out.find("pixpath"), std::string::npos);
  auto none = pixpath(tmp, {});
  EXPECT_NE(none.exit_code, 0);
  expect_one_line_error(pixpath(tmp, {"frobnicate"}), 2, "");
}

TEST(Cli, InfoJson) {
  TempDir tmp;
  auto r = pixpath(tmp, {"info", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["version"].get<std::string>().empty());
  EXPECT_GT(j["limits"]["max_width"].get<int>(), 0);
  EXPECT_FALSE(j["codecs"].empty());
  EXPECT_FALSE(j["libraries"].empty());
  EXPECT_NE(std::find(j["backings"].begin(), j["backings"].end(), "cpu"), j["backings"].end());
  EXPECT_TRUE(j["gpu"].contains("available"));
  EXPECT_EQ(j["xpra"]["packet_encoders"], nlohmann::json({"rencodeplus", "bencode"}));
  for (const char* c : {"lz4", "brotli", "zlib"})
    EXPECT_NE(std::find(j["xpra"]["packet_compressors"].begin(), j["xpra"]["packet_compressors"].end(), c),
              j["xpra"]["packet_compressors"].end()) << c;
  for (const char* t : {"tcp://", "ssl://", "ws://", "wss://", "ssh://", "socket://"}) {
    bool listed = false;
    for (const auto& form : j["xpra"]["transports"]) listed |= form.get<std::string>().starts_with(t);
    EXPECT_TRUE(listed) << t << " in " << j["xpra"]["transports"].dump();
  }
  auto human = pixpath(tmp, {"info"});
  EXPECT_NE(human.out.find("xpra packet encoders: rencodeplus, bencode"), std::string::npos) << human.out;
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("gpu:"), std::string::npos);
  EXPECT_NE(human.out.find("backings: "), std::string::npos);
}

// ssh:// with a fake "ssh" (--ssh runs any command, split like a shell command): one that
// starts the stream, then dies; one that prints what xpra's remote command prints without an
// xpra (after reading some of its input, as ssh does with the hello). Exit status 1 with the reason, no hang.
TEST(Cli, SshChildFailuresExitOneSayingWhy) {
  TempDir tmp;
  auto dies = pixpath(tmp, {"attach", "ssh://user@host/7", "--headless", "--connect-timeout", "10", "--ssh",
                            "sh -c 'printf \"P\\000\\000\\000\\000\\000\\001\\000\"; sleep 0.3; "
                            "echo \"Connection to host closed.\" >&2; exit 255' fake-ssh"});
  EXPECT_EQ(dies.exit_code, 1) << dies.err;
  EXPECT_NE(dies.err.find("ssh exited with status 255 in the middle of the session"), std::string::npos)
      << dies.err;
  EXPECT_NE(dies.err.find("Connection to host closed."), std::string::npos) << dies.err;
  auto none = pixpath(tmp, {"attach", "ssh://host/7", "--headless", "--ssh",
                            "sh -c 'head -c 1 >/dev/null; echo \"no xpra command found\"; exit 1' fake-ssh"});
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("--remote-xpra"), std::string::npos) << none.err;
}

TEST(Cli, EncodeThenDecode) {
  TempDir tmp;
  const std::string src = test_data_dir() + "/sample-window-1.png";
  auto e = pixpath(tmp, {"encode", src, "-o", tmp / "w.jpg", "--coding", "jpeg", "--quality", "90",
                         "--subsampling", "444", "--restart", "2"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  auto d = pixpath(tmp, {"decode", tmp / "w.jpg", "-o", tmp / "w.png"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(std::filesystem::exists(tmp / "w.png"));
  auto rgb = pixpath(tmp, {"encode", src, "-o", tmp / "w.rgb", "--coding", "rgb24", "--compression", "lz4"});
  EXPECT_EQ(rgb.exit_code, 0) << rgb.err;
}

TEST(Cli, BadInputIsOneLineAndNonZero) {
  TempDir tmp;
  expect_one_line_error(pixpath(tmp, {"decode"}), 2, "decode");
  expect_one_line_error(pixpath(tmp, {"decode", tmp / "missing.jpg", "-o", tmp / "x.png"}), 1, "decode");
  std::filesystem::path junk = tmp / "junk.jpg";
  std::ofstream(junk) << "not a picture";
  expect_one_line_error(pixpath(tmp, {"decode", junk, "-o", tmp / "x.png"}), 1, "decode");
  expect_one_line_error(pixpath(tmp, {"encode", test_data_dir() + "/sample-window-1.png", "-o",
                                      tmp / "x", "--coding", "h265"}),
                        2, "encode");
  expect_one_line_error(pixpath(tmp, {"encode", test_data_dir() + "/sample-window-1.png", "-o",
                                      tmp / "x", "--coding", "jpeg", "--quality", "400"}),
                        2, "encode");
  expect_one_line_error(pixpath(tmp, {"play", tmp / "missing.pxrec"}), 2, "play");
  expect_one_line_error(pixpath(tmp, {"play", junk}), 1, "play");
  expect_one_line_error(pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "fast"}), 2,
                        "play");
  expect_one_line_error(pixpath(tmp, {"attach"}), 2, "attach");
  expect_one_line_error(pixpath(tmp, {"attach", "tcp://127.0.0.1:1/", "--encoding", "h265"}), 2, "attach");
  // Passwords never come from the command line.
  expect_one_line_error(pixpath(tmp, {"attach", "tcp://127.0.0.1:1/", "--password", "x"}), 2, "attach");
  // Nothing listens on port 1: a connection error, not a hang.
  expect_one_line_error(pixpath(tmp, {"attach", "tcp://127.0.0.1:1/", "--connect-timeout", "5"}), 1,
                        "attach");
  expect_one_line_error(pixpath(tmp, {"record", "tcp://127.0.0.1:1/"}), 2, "record");
}

TEST(Cli, PlayTheSampleAsJson) {
  TempDir tmp;
  auto r = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "max", "--json",
                         "--snapshot-dir", tmp / "snap", "--decode-threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["all"]["painted"].get<int64_t>(), 0);
  EXPECT_EQ(j["all"]["errors"].get<int64_t>(), 0);
  EXPECT_FALSE(j["snapshots"].empty());
  EXPECT_TRUE(r.err.empty()) << "no progress lines when stderr is not a terminal: " << r.err;
  auto table = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "max", "--progress"});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("draws/s"), std::string::npos);
  EXPECT_NE(table.err.find("events"), std::string::npos) << "--progress prints progress";
}

// Video draws from a real xpra 3.1.3 server (h264, then vp8; scripts/record-video-sample) are
// decoded and painted on the CPU backing, every draw acknowledged once, none failed.
TEST(Cli, PlayTheVideoSample) {
  TempDir tmp;
  auto r = pixpath(tmp, {"play", test_data_dir() + "/sample-video.pxrec", "--pace", "max", "--json",
                         "--backing", "cpu", "--snapshot-dir", tmp / "snap"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["all"]["errors"].get<int64_t>(), 0) << r.out;
  EXPECT_EQ(j["all"]["skipped"].get<int64_t>(), 0) << r.out;
  EXPECT_EQ(j["all"]["painted"].get<int64_t>(), j["all"]["draws"].get<int64_t>()) << r.out;
  std::map<std::string, int64_t> painted;
  for (const auto& c : j["per_coding"]) {
    painted[c["coding"].get<std::string>()] = c["painted"].get<int64_t>();
    EXPECT_EQ(c["errors"].get<int64_t>(), 0) << c.dump();
  }
  EXPECT_GT(painted["h264"], 10) << r.out;
  EXPECT_GT(painted["vp8"], 10) << r.out;
  EXPECT_FALSE(j["snapshots"].empty());
  EXPECT_GE(j["video_threads"].get<int>(), 1) << "the engine's choice for --video-threads 0";

  // One video thread for every window, or one each: the same pictures.
  for (const char* threads : {"1", "3"}) {
    SCOPED_TRACE(std::string("--video-threads ") + threads);
    const std::string dir = tmp / (std::string("snap-") + threads);
    auto t = pixpath(tmp, {"play", test_data_dir() + "/sample-video.pxrec", "--pace", "max", "--json",
                           "--backing", "cpu", "--snapshot-dir", dir, "--video-threads", threads});
    ASSERT_EQ(t.exit_code, 0) << t.err;
    auto tj = nlohmann::json::parse(t.out);
    EXPECT_EQ(tj["video_threads"].get<int>(), std::atoi(threads));
    EXPECT_EQ(tj["all"]["painted"], j["all"]["painted"]);
    int compared = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp / "snap")) {
      const auto name = e.path().filename().string();
      EXPECT_TRUE(read_text(e.path().string()) == read_text(dir + "/" + name)) << name;
      ++compared;
    }
    EXPECT_GT(compared, 0);
  }
  auto bad = pixpath(tmp, {"play", test_data_dir() + "/sample-video.pxrec", "--video-threads", "65"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

// The GL backing (Mesa's software renderer here) paints the sample exactly as the CPU backing.
TEST(Cli, PlayOnTheGlBackingEqualsTheCpuBacking) {
  TempDir tmp;
  auto info = nlohmann::json::parse(pixpath(tmp, {"info", "--json"}).out);
  const auto& b = info["backings"];
  if (std::find(b.begin(), b.end(), "gl") == b.end()) GTEST_SKIP() << "built without the GL backing";
  auto cpu = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "max",
                           "--snapshot-dir", tmp / "cpu", "--backing", "cpu"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  auto gl = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "max",
                          "--snapshot-dir", tmp / "gl", "--backing", "gl"});
  ASSERT_EQ(gl.exit_code, 0) << gl.err;
  int compared = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp / "cpu")) {
    const auto other = tmp / "gl" / e.path().filename();
    ASSERT_TRUE(std::filesystem::exists(other)) << other;
    // Same PNG encoder on both sides: equal pixels give equal files.
    EXPECT_EQ(read_text(e.path().string()), read_text(other.string())) << e.path().filename();
    ++compared;
  }
  EXPECT_GE(compared, 4);
}

// --gpu / --decoder gpu: without a GPU a one-line reason and exit 1; with one, it decodes.
TEST(Cli, GpuDecoderWithoutAGpuSaysWhy) {
  TempDir tmp;
  auto info = nlohmann::json::parse(pixpath(tmp, {"info", "--json"}).out);
  ASSERT_EQ(pixpath(tmp, {"encode", test_data_dir() + "/sample-window-1.png", "-o", tmp / "w.jpg",
                          "--coding", "jpeg"}).exit_code, 0);
  auto decode = pixpath(tmp, {"decode", tmp / "w.jpg", "-o", tmp / "w.png", "--gpu"});
  auto play = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "max",
                            "--decoder", "gpu", "--backing", "gl"});
  if (info["gpu"].value("available", false)) {
    EXPECT_EQ(decode.exit_code, 0) << decode.err;
    EXPECT_EQ(play.exit_code, 0) << play.err;
    return;
  }
  expect_one_line_error(decode, 1, "decode");
  EXPECT_NE(decode.err.find("gpu"), std::string::npos) << decode.err;
  expect_one_line_error(play, 1, "play");
  // auto falls back to the CPU and says why.
  auto autoplay = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--pace", "max",
                                "--decoder", "auto"});
  EXPECT_EQ(autoplay.exit_code, 0) << autoplay.err;
  EXPECT_NE(autoplay.out.find("decoder cpu"), std::string::npos) << autoplay.out;
}

// Damaged JPEGs are never silent (issue 15): decoded and written, the warnings on stderr as
// djpeg prints them, exit status 3 (documented in --help); CMYK/YCCK and arithmetic-coded files
// decode. With a GPU, --gpu sends what the GPU refuses (truncated, arithmetic, CMYK) to the CPU
// with a notice, and gives the same status.
TEST(Cli, DecodeWarnsAboutDamagedJpegsAndReadsCmykAndArithmetic) {
  TempDir tmp;
  const std::string jpegs = test_data_dir() + "/jpeg/";
  auto help = pixpath(tmp, {"decode", "--help"});
  EXPECT_NE(help.out.find("3 decoded with warnings"), std::string::npos) << help.out;
  auto info = nlohmann::json::parse(pixpath(tmp, {"info", "--json"}).out);
  const bool gpu = info["gpu"].value("available", false);
  struct Case {
    const char* file;
    int status;
    const char* warning;  // on stderr; nullptr: none
    const char* gpu_notice;  // with --gpu: why the GPU did not take it; nullptr: it did
  };
  for (const Case& c : {Case{"cjpeg-q75-truncated.jpg", 3, "Premature end of JPEG file", "EOI"},
                        Case{"cjpeg-q75-bitflips.jpg", 3, "Corrupt JPEG data", nullptr},
                        Case{"cjpeg-q75.jpg", 0, nullptr, nullptr},
                        Case{"pillow-cmyk-q90.jpg", 0, nullptr, "CMYK"},
                        Case{"turbojpeg-ycck-420-q85.jpg", 0, nullptr, "CMYK"},
                        Case{"cjpeg-arithmetic-q80.jpg", 0, nullptr, "arithmetic"}}) {
    SCOPED_TRACE(c.file);
    auto d = pixpath(tmp, {"decode", jpegs + c.file, "-o", tmp / "out.png"});
    EXPECT_EQ(d.exit_code, c.status) << d.err;
    EXPECT_TRUE(std::filesystem::exists(tmp / "out.png"));
    if (c.warning) {
      EXPECT_EQ(count_lines(d.err), 1) << d.err;
      EXPECT_EQ(d.err.rfind("pixpath decode: warning: jpeg decode: ", 0), 0u) << d.err;
      EXPECT_NE(d.err.find(c.warning), std::string::npos) << d.err;
      EXPECT_NE(d.out.find("with 1 warning"), std::string::npos) << d.out;
    } else {
      EXPECT_TRUE(d.err.empty()) << d.err;
    }
    std::filesystem::remove(tmp / "out.png");
    if (!gpu) continue;
    auto g = pixpath(tmp, {"decode", jpegs + c.file, "-o", tmp / "out.png", "--gpu"});
    if (c.gpu_notice) {
      EXPECT_EQ(g.exit_code, c.status) << g.err;
      EXPECT_NE(g.err.find("pixpath decode: notice: not on the GPU"), std::string::npos) << g.err;
      EXPECT_NE(g.err.find(c.gpu_notice), std::string::npos) << g.err;
      EXPECT_NE(g.out.find("(on the CPU)"), std::string::npos) << g.out;
    } else {
      // nvJPEG decodes a bit-flipped stream without a word; pixpath's own GPU decoder (the
      // route's default; PIXPATH_CUDA_OWN_JPEG=0 turns it off) reports it as the CPU path does.
      const char* own = std::getenv("PIXPATH_CUDA_OWN_JPEG");
      const bool own_route = !(own && std::string(own) == "0");
      EXPECT_EQ(g.exit_code, own_route ? c.status : 0) << g.err;
      if (own_route && c.warning) {
        EXPECT_NE(g.err.find("Corrupt JPEG data"), std::string::npos) << g.err;
      }
      EXPECT_NE(g.out.find("(on the GPU)"), std::string::npos) << g.out;
    }
    EXPECT_TRUE(std::filesystem::exists(tmp / "out.png"));
  }
}

// Every value is checked while the command line is parsed (src/tools/option_values.h): a bad
// one is exit status 2 and one line that names the option and what it wants.
TEST(Cli, BadValuesExitTwoNamingTheOption) {
  TempDir tmp;
  const std::string png = test_data_dir() + "/sample-window-1.png";
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"decode", png, "-o", tmp / "x.png", "--size", "8by4", "--rgb-format", "BGRX"},
       "--size: expected WxH"},
      {{"decode", png, "-o", tmp / "x.png", "--size", "0x4", "--rgb-format", "BGRX"},
       "--size: expected WxH"},
      {{"decode", png, "-o", tmp / "x.png", "--size", "8x4"}, "--size requires --rgb-format"},
      {{"decode", png, "-o", tmp / "x.png", "--rowstride", "32"}, "--rowstride requires --size"},
      {{"decode", png, "-o", tmp / "x.png", "--size", "8x4", "--rgb-format", "YUV420P"},
       "--rgb-format: wants RGB, BGR"},
      {{"decode", png, "-o", tmp / "x.png", "--size", "8x4", "--rgb-format", "BGRX", "--rowstride", "-3"},
       "--rowstride"},
      {{"decode", png, "-o", tmp / "x.png", "--size", "8x4", "--rgb-format", "BGRX", "--gpu"},
       "excludes"},
      {{"encode", png, "-o", tmp / "x", "--coding", "h265"}, "--coding: no encoder for coding 'h265'"},
      {{"encode", png, "-o", tmp / "x", "--coding", "jpeg", "--subsampling", "411"},
       "--subsampling: wants 444, 422, 420 or gray, not '411'"},
      {{"encode", png, "-o", tmp / "x", "--coding", "rgb24", "--compression", "gzip"},
       "--compression: wants none, zlib or lz4, not 'gzip'"},
      {{"encode", png, "-o", tmp / "x", "--coding", "jpeg", "--restart", "70000"}, "--restart"},
      {{"encode", png, "-o", tmp / "x", "--coding", "jpeg", "--quality", "good"}, "--quality"},
      {{"attach", "tcp://127.0.0.1:1/", "--max-picture-size", "big"},
       "--max-picture-size: expected WxH"},
      {{"attach", "tcp://127.0.0.1:1/", "--max-packet-size", "0"},
       "--max-packet-size: must be at least 1 byte"},
      {{"attach", "tcp://127.0.0.1:1/", "--max-decompressed-size", "12Q"}, "--max-decompressed-size"},
      {{"record", "tcp://127.0.0.1:1/", "-o", tmp / "r.pxrec", "--max-windows", "0"}, "--max-windows"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " ... " + c.args[c.args.size() - 2] + " " + c.args.back());
    auto r = pixpath(tmp, c.args);
    expect_one_line_error(r, 2, c.args[0]);
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "x")) << "nothing written on bad arguments";
  // A backing this build lacks is a failure to play (1), not a bad argument.
  auto play = pixpath(tmp, {"play", test_data_dir() + "/sample.pxrec", "--backing", "nonesuch"});
  expect_one_line_error(play, 1, "play");
  EXPECT_NE(play.err.find("no backing 'nonesuch'"), std::string::npos) << play.err;
}

// Every coding pixpath encodes, read back by decode; raw rgb bytes decode with --size and
// --rgb-format to the same pixels as the picture they came from.
TEST(Cli, EveryCodingAndRawRgb) {
  TempDir tmp;
  const std::string png = test_data_dir() + "/sample-window-1.png";
  for (std::string coding : {"jpeg", "jpega", "png", "webp", "rgb24", "rgb32"}) {
    const std::string out = tmp / ("out." + coding);
    auto e = pixpath(tmp, {"encode", png, "-o", out, "--coding", coding, "--quality", "80"});
    ASSERT_EQ(e.exit_code, 0) << coding << ": " << e.err;
    EXPECT_EQ(e.out.rfind("encoded " + png + " -> " + out + ": " + coding + " ", 0), 0u) << e.out;
    if (coding == "jpeg" || coding == "png" || coding == "webp") {
      for (const char* ext : {".png", ".ppm", ".pam"}) {
        auto d = pixpath(tmp, {"decode", out, "-o", tmp / ("back-" + coding + ext)});
        EXPECT_EQ(d.exit_code, 0) << coding << ext << ": " << d.err;
      }
    }
  }
  // rgb32 without compression is the raw RGBX rows; decode them back as raw input.
  auto raw = pixpath(tmp, {"encode", png, "-o", tmp / "raw.rgbx", "--coding", "rgb32"});
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  ASSERT_NE(raw.out.find("rgb_format RGBX, rowstride 2024"), std::string::npos) << raw.out;
  auto from_raw = pixpath(tmp, {"decode", tmp / "raw.rgbx", "-o", tmp / "raw.ppm", "--size", "506x67",
                                "--rgb-format", "RGBX", "--rowstride", "2024"});
  ASSERT_EQ(from_raw.exit_code, 0) << from_raw.err;
  auto from_png = pixpath(tmp, {"decode", png, "-o", tmp / "png.ppm"});
  ASSERT_EQ(from_png.exit_code, 0) << from_png.err;
  EXPECT_EQ(read_text(tmp / "raw.ppm"), read_text(tmp / "png.ppm")) << "raw RGBX and PNG, same pixels";
  // The wrong size for the bytes is a decode failure (1), not a bad argument.
  auto wrong = pixpath(tmp, {"decode", tmp / "raw.rgbx", "-o", tmp / "w.ppm", "--size", "507x67",
                             "--rgb-format", "RGBX", "--rowstride", "2028"});
  expect_one_line_error(wrong, 1, "decode");
}

}  // namespace
}  // namespace pixpath::testing
