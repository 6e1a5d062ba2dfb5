#include "pixpath/client/client_limits.h"

#include <gtest/gtest.h>

#include "pixpath/client/limit_options.h"
#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::client {
namespace {

TEST(ClientLimits, DefaultsAreBounded) {
  ClientLimits l;
  EXPECT_EQ(l.decode.max_width, 8192);
  EXPECT_EQ(l.picture.max_bytes, uint64_t{256} << 20);
  EXPECT_LE(l.frame.max_packet_size, size_t{128} << 20);
  EXPECT_LE(l.frame.max_decompressed_size, size_t{128} << 20);
  EXPECT_GT(l.max_windows, 0);
  EXPECT_GT(l.max_queued_draws, 0);
  EXPECT_GT(l.send_timeout.count(), 0);
  EXPECT_GT(l.stall_timeout.count(), 0);
}

TEST(ClientLimits, AppliedToSessionAndEngine) {
  ClientLimits l;
  l.max_windows = 3;
  l.max_queued_draws = 7;
  l.frame.max_packet_size = 1000;
  l.decode.max_width = 100;
  xpra::SessionOptions s;
  paint::PaintEngineConfig e;
  apply_limits(l, s);
  apply_limits(l, e);
  EXPECT_EQ(s.max_windows, 3);
  EXPECT_EQ(s.limits.max_packet_size, 1000u);
  EXPECT_EQ(e.max_queued_draws, 7);
  EXPECT_EQ(e.limits.max_width, 100);
}

TEST(ClientLimits, Json) {
  auto j = limits_json(ClientLimits{});
  EXPECT_EQ(j["max_windows"].get<int>(), 64);
  EXPECT_EQ(j["max_packet_size"].get<uint64_t>(), uint64_t{128} << 20);
  EXPECT_EQ(j["max_picture_width"].get<int>(), 8192);
  EXPECT_EQ(j["max_queued_packets"].get<int>(), 256);
  EXPECT_TRUE(j.contains("send_timeout_ms"));
}

TEST(ClientLimits, CommandLineOptions) {
  CLI::App app;
  ClientLimits l;
  add_limit_options(app, l);
  const char* argv[] = {"x", "--max-picture-size", "640x480", "--max-packet-size", "2MiB",
                        "--max-decompressed-size", "3MiB", "--max-windows", "5",
                        "--max-queued-packets", "9", "--send-timeout", "1500"};
  app.parse(int(std::size(argv)), const_cast<char**>(argv));
  EXPECT_EQ(l.decode.max_width, 640);
  EXPECT_EQ(l.decode.max_height, 480);
  EXPECT_EQ(l.picture.max_width, 640);
  EXPECT_EQ(l.frame.max_packet_size, size_t{2} << 20);
  EXPECT_EQ(l.frame.max_chunk_size, size_t{2} << 20);
  EXPECT_EQ(l.frame.max_decompressed_size, size_t{3} << 20);
  EXPECT_EQ(l.decode.max_decompressed_bytes, uint64_t{3} << 20);
  EXPECT_EQ(l.max_windows, 5);
  EXPECT_EQ(l.max_queued_draws, 9);
  EXPECT_EQ(l.send_timeout.count(), 1500);

  CLI::App bad;
  ClientLimits l2;
  add_limit_options(bad, l2);
  const char* argv2[] = {"x", "--max-picture-size", "big"};
  EXPECT_THROW(bad.parse(3, const_cast<char**>(argv2)), CLI::ValidationError);
}

}  // namespace
}  // namespace pixpath::client
