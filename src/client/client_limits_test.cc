#include "pixpath/client/client_limits.h"

#include <gtest/gtest.h>

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

TEST(ClientLimits, SettersKeepRelatedLimitsTogether) {
  ClientLimits l;
  ASSERT_TRUE(l.set_max_picture_size(640, 480).ok());
  EXPECT_EQ(l.decode.max_width, 640);
  EXPECT_EQ(l.decode.max_height, 480);
  EXPECT_EQ(l.decode.max_pixels, uint64_t{640} * 480);
  EXPECT_EQ(l.picture.max_width, 640);
  EXPECT_EQ(l.picture.max_height, 480);
  EXPECT_EQ(l.picture.max_bytes, uint64_t{256} << 20) << "never lowered below the default";
  ASSERT_TRUE(l.set_max_picture_size(16384, 16384).ok());
  EXPECT_EQ(l.picture.max_bytes, uint64_t{16384} * 16384 * 4) << "room for one RGBA picture";

  ASSERT_TRUE(l.set_max_packet_size(size_t{2} << 20).ok());
  EXPECT_EQ(l.frame.max_packet_size, size_t{2} << 20);
  EXPECT_EQ(l.frame.max_chunk_size, size_t{2} << 20) << "a chunk is never larger than a packet";
  ASSERT_TRUE(l.set_max_packet_size(size_t{256} << 20).ok());
  EXPECT_EQ(l.frame.max_chunk_size, size_t{2} << 20) << "raising the packet size keeps the chunk limit";

  ASSERT_TRUE(l.set_max_decompressed_size(size_t{3} << 20).ok());
  EXPECT_EQ(l.frame.max_decompressed_size, size_t{3} << 20);
  EXPECT_EQ(l.decode.max_decompressed_bytes, uint64_t{3} << 20);
}

TEST(ClientLimits, SettersRefuseWhatAllowsNothingAndChangeNothing) {
  ClientLimits l;
  for (auto [w, h] : {std::pair{0, 10}, {10, 0}, {-1, 10}, {65536, 10}, {10, 65536}}) {
    auto r = l.set_max_picture_size(w, h);
    ASSERT_FALSE(r.ok()) << w << "x" << h;
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find(std::to_string(w) + "x" + std::to_string(h)), std::string::npos)
        << r.error().message();
  }
  EXPECT_FALSE(l.set_max_packet_size(0).ok());
  EXPECT_FALSE(l.set_max_decompressed_size(0).ok());
  const ClientLimits defaults;
  EXPECT_EQ(limits_json(l), limits_json(defaults));
}

}  // namespace
}  // namespace pixpath::client
