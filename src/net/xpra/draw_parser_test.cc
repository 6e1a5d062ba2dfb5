#include "pixpath/net/xpra/draw_parser.h"

#include <gtest/gtest.h>

namespace pixpath::xpra {
namespace {

Packet draw_packet(Value coding, Value data, Value options, Value rowstride = 40) {
  Packet p;
  p.type = "draw";
  p.body = Value::list({"draw", 3, 10, 20, 10, 5, coding, data, 77, rowstride, options});
  p.received = std::chrono::steady_clock::now();
  return p;
}

TEST(DrawParser, ParsesFieldsAndOptions) {
  Value o{Value::Dict{}};
  o.set("rgb_format", "BGRX");
  o.set("zlib", 2);
  o.set("store", 5);
  o.set("delta", 3);
  o.set("bucket", 1);
  o.set("flush", 0);
  o.set("quality", 90);
  o.set("scaled_size", Value::list({5, 3}));
  o.set("unknown-key", "ignored");
  SharedBytes pixels = SharedBytes::copy_of(std::string(200, 'x'));
  auto d = parse_draw(draw_packet("rgb32", pixels, o));
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->wid, 3);
  EXPECT_EQ(d->x, 10);
  EXPECT_EQ(d->y, 20);
  EXPECT_EQ(d->w, 10);
  EXPECT_EQ(d->h, 5);
  EXPECT_EQ(d->coding, "rgb32");
  EXPECT_EQ(d->sequence, 77);
  EXPECT_EQ(d->rowstride, 40);
  EXPECT_EQ(d->data.data(), pixels.data());  // a slice, not a copy
  EXPECT_EQ(d->options.rgb_format, "BGRX");
  EXPECT_EQ(d->options.zlib, 2);
  EXPECT_EQ(d->options.store, 5);
  EXPECT_EQ(d->options.delta, 3);
  EXPECT_EQ(d->options.bucket, 1);
  EXPECT_EQ(d->options.flush, 0);
  EXPECT_EQ(d->options.quality, 90);
  EXPECT_EQ(d->options.scaled_width, 5);
  EXPECT_EQ(d->options.scaled_height, 3);
  EXPECT_TRUE(d->options.paint);
}

TEST(DrawParser, VideoOptions) {
  Value o{Value::Dict{}};
  o.set("csc", "YUV420P");
  o.set("frame", 0);
  o.set("delayed", 2);
  o.set("type", "IDR");  // not used: ignored
  auto d = parse_draw(draw_packet("h264", "frame-data", o, 0));
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->options.csc, "YUV420P");
  EXPECT_EQ(d->options.frame, 0);
  EXPECT_EQ(d->options.delayed, 2);
  auto plain = parse_draw(draw_packet("h264", "frame-data", Value(Value::Dict{}), 0));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->options.frame.has_value());
  EXPECT_EQ(plain->options.delayed, 0);
  EXPECT_TRUE(plain->options.csc.empty());
  Value neg{Value::Dict{}};
  neg.set("frame", -1);
  auto bad = parse_draw(draw_packet("vp8", "x", neg, 0));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("frame -1 is negative"), std::string::npos)
      << bad.error().message();
  Value csc_type{Value::Dict{}};
  csc_type.set("csc", 420);
  ASSERT_FALSE(parse_draw(draw_packet("vp8", "x", csc_type, 0)).ok());
}

TEST(DrawParser, ScrollListComesFromTheDataField) {
  Value scrolls = Value::list({Value::list({0, 10, 100, 50, 0, -10}), Value::list({0, 70, 100, 5, 0, 3})});
  auto d = parse_draw(draw_packet("scroll", scrolls, Value(Value::Dict{}), 0));
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_EQ(d->options.scroll.size(), 2u);
  EXPECT_EQ(d->options.scroll[0].dy, -10);
  EXPECT_EQ(d->options.scroll[1].h, 5);
  EXPECT_TRUE(d->data.empty());
}

TEST(DrawParser, WrongTypesAreRejectedWithTheFieldName) {
  Value o{Value::Dict{}};
  auto d = parse_draw(draw_packet("png", "data", o, "forty"));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code(), ErrorCode::Protocol);
  EXPECT_NE(d.error().message().find("rowstride"), std::string::npos) << d.error().message();
  EXPECT_NE(d.error().message().find("draw"), std::string::npos);

  Value bad{Value::Dict{}};
  bad.set("zlib", "2");
  d = parse_draw(draw_packet("rgb24", "data", bad));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("'zlib'"), std::string::npos) << d.error().message();

  Value both{Value::Dict{}};
  both.set("zlib", 1);
  both.set("lz4", 1);
  EXPECT_FALSE(parse_draw(draw_packet("rgb24", "data", both)).ok());

  Value scaled{Value::Dict{}};
  scaled.set("scaled_size", Value::list({1}));
  EXPECT_FALSE(parse_draw(draw_packet("jpeg", "data", scaled)).ok());

  EXPECT_FALSE(parse_draw(draw_packet("scroll", Value::list({Value::list({1, 2})}), o)).ok());
  EXPECT_FALSE(parse_draw(draw_packet("png", Value::list({}), o)).ok());
  EXPECT_FALSE(parse_draw(draw_packet(5, "data", o)).ok());
}

TEST(DrawParser, SizesOutOfRangeAreRejected) {
  Packet p;
  p.body = Value::list({"draw", 1, 0, 0, int64_t{1} << 40, 5, "png", "d", 1, 0, Value(Value::Dict{})});
  EXPECT_FALSE(parse_draw(p).ok());
  p.body = Value::list({"draw", 1, 0, 0, 5, -1, "png", "d", 1, 0, Value(Value::Dict{})});
  EXPECT_FALSE(parse_draw(p).ok());
}

TEST(DrawParser, AckForARejectedDraw) {
  Packet p = draw_packet("png", 12345, Value(Value::Dict{}));
  auto d = parse_draw(p);
  ASSERT_FALSE(d.ok());
  auto ack = ack_for_rejected_draw(p.body, d.error());
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->sequence, 77);
  EXPECT_EQ(ack->wid, 3);
  EXPECT_EQ(ack->w, 10);
  EXPECT_EQ(ack->h, 5);
  EXPECT_EQ(ack->decode_time_us, -1);
  EXPECT_NE(ack->message.find("data"), std::string::npos);
  // No readable sequence: nothing to acknowledge.
  Value short_body = Value::list({"draw", 3, 10});
  EXPECT_FALSE(ack_for_rejected_draw(short_body, d.error()).has_value());
}

}  // namespace
}  // namespace pixpath::xpra
