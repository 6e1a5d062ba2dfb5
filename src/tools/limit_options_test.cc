#include "limit_options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace pixpath::tools {
namespace {

// Parses `args` (without the program name) into `limits`; returns the parse error's text, or
// "" when it parsed.
std::string parse(client::ClientLimits& limits, std::vector<std::string> args) {
  CLI::App app;
  add_limit_options(app, limits);
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

TEST(LimitOptions, SetTheLimits) {
  client::ClientLimits l;
  ASSERT_EQ(parse(l, {"--max-picture-size", "640x480", "--max-packet-size", "2MiB",
                      "--max-decompressed-size", "3MiB", "--max-windows", "5",
                      "--max-queued-packets", "9", "--max-queued-bytes", "1kb",
                      "--send-timeout", "1500", "--stall-timeout", "0"}),
            "");
  EXPECT_EQ(l.decode.max_width, 640);
  EXPECT_EQ(l.decode.max_height, 480);
  EXPECT_EQ(l.picture.max_width, 640);
  EXPECT_EQ(l.frame.max_packet_size, size_t{2} << 20);
  EXPECT_EQ(l.frame.max_chunk_size, size_t{2} << 20);
  EXPECT_EQ(l.frame.max_decompressed_size, size_t{3} << 20);
  EXPECT_EQ(l.decode.max_decompressed_bytes, uint64_t{3} << 20);
  EXPECT_EQ(l.max_windows, 5);
  EXPECT_EQ(l.max_queued_draws, 9);
  EXPECT_EQ(l.max_queued_bytes, 1024u) << "kb is 1024 bytes";
  EXPECT_EQ(l.send_timeout.count(), 1500);
  EXPECT_EQ(l.stall_timeout.count(), 0);
}

TEST(LimitOptions, NothingGivenLeavesTheDefaults) {
  client::ClientLimits l;
  ASSERT_EQ(parse(l, {}), "");
  EXPECT_EQ(client::limits_json(l), client::limits_json(client::ClientLimits{}));
}

TEST(LimitOptions, HelpShowsTheDefaults) {
  CLI::App app;
  client::ClientLimits l;
  add_limit_options(app, l);
  const std::string help = app.help();
  for (const char* want : {"--max-picture-size", "8192x8192", "--max-packet-size", "134217728",
                           "--send-timeout", "10000", "Limits (hostile servers)"})
    EXPECT_NE(help.find(want), std::string::npos) << want << "\n" << help;
}

// A bad value is a parse error (pixpath: exit status 2) that names the option and the problem.
TEST(LimitOptions, BadValuesNameTheOption) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::initializer_list<Case>{
           {{"--max-picture-size", "big"}, "--max-picture-size: expected WxH"},
           {{"--max-picture-size", "0x480"}, "--max-picture-size: expected WxH"},
           {{"--max-picture-size", "70000x10"}, "--max-picture-size: expected WxH"},
           {{"--max-packet-size", "0"}, "--max-packet-size: must be at least 1 byte"},
           {{"--max-packet-size", "12Q"}, "--max-packet-size"},
           {{"--max-decompressed-size", "0"}, "--max-decompressed-size: must be at least 1 byte"},
           {{"--max-windows", "0"}, "--max-windows"},
           {{"--max-queued-packets", "many"}, "--max-queued-packets"},
           {{"--send-timeout", "0"}, "--send-timeout"},
           {{"--stall-timeout", "-5"}, "--stall-timeout"},
       }) {
    client::ClientLimits l;
    const std::string err = parse(l, c.args);
    EXPECT_NE(err.find(c.says), std::string::npos) << c.args[0] << " " << c.args[1] << ": '" << err << "'";
    EXPECT_EQ(client::limits_json(l), client::limits_json(client::ClientLimits{}))
        << c.args[0] << " " << c.args[1] << " changed a limit";
  }
}

}  // namespace
}  // namespace pixpath::tools
