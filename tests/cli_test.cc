// The pixpath command line (no server): exit codes, one-line errors, --json that parses.
// Exit status convention (src/tools/commands.h): 0 ok, 1 failed, 2 bad arguments.
#include <gtest/gtest.h>

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
  auto human = pixpath(tmp, {"info"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("gpu:"), std::string::npos);
  EXPECT_NE(human.out.find("backings: "), std::string::npos);
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

}  // namespace
}  // namespace pixpath::testing
