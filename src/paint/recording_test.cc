#include "pixpath/paint/recording.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

namespace pixpath::paint {
namespace {

std::vector<RecordedEvent> sample_events() {
  std::vector<RecordedEvent> ev;
  RecordedEvent n;
  n.type = RecordType::WindowNew;
  n.time_us = 0;
  n.wid = 3;
  n.x = -5, n.y = 7, n.w = 640, n.h = 480;
  ev.push_back(n);
  RecordedEvent d;
  d.type = RecordType::Draw;
  d.time_us = 1500;
  d.wid = 3;
  d.draw.wid = 3;
  d.draw.x = 1, d.draw.y = 2, d.draw.w = 30, d.draw.h = 40;
  d.draw.coding = "rgb24";
  d.draw.sequence = 77;
  d.draw.rowstride = 120;
  d.draw.data = SharedBytes::copy_of(std::string_view("pixels!"));
  DrawOptions& o = d.draw.options;
  o.rgb_format = "BGRX";
  o.zlib = 0;
  o.lz4 = 1;
  o.store = 77;
  o.delta = 70;
  o.bucket = 4;
  o.flush = 0;
  o.alpha_offset = 123;
  o.scaled_width = 15, o.scaled_height = 20;
  o.scroll = {{0, 10, 30, 20, 0, -10}, {1, 2, 3, 4, 5, 6}};
  o.paint = false;
  o.quality = 80;
  ev.push_back(d);
  RecordedEvent plain;
  plain.type = RecordType::Draw;
  plain.time_us = 1500;
  plain.wid = 3;
  plain.draw.wid = 3;
  plain.draw.coding = "void";
  ev.push_back(plain);
  RecordedEvent video;  // a video draw carries its stream options
  video.type = RecordType::Draw;
  video.time_us = 1600;
  video.wid = 3;
  video.draw.wid = 3;
  video.draw.w = 64, video.draw.h = 48;
  video.draw.coding = "h264";
  video.draw.sequence = 78;
  video.draw.data = SharedBytes::copy_of(std::string_view("nal units"));
  video.draw.options.csc = "YUV420P";
  video.draw.options.frame = 0;
  video.draw.options.delayed = 1;
  ev.push_back(video);
  RecordedEvent r;
  r.type = RecordType::WindowResize;
  r.time_us = 2000;
  r.wid = 3;
  r.w = 800, r.h = 600;
  ev.push_back(r);
  RecordedEvent l;
  l.type = RecordType::WindowLost;
  l.time_us = 3000;
  l.wid = 3;
  ev.push_back(l);
  return ev;
}

std::vector<uint8_t> encode_all(const std::vector<RecordedEvent>& ev) {
  auto out = encode_recording_header();
  for (const auto& e : ev) {
    auto rec = encode_record(e);
    EXPECT_TRUE(rec.ok());
    out.insert(out.end(), rec->begin(), rec->end());
  }
  return out;
}

void expect_same(const RecordedEvent& a, const RecordedEvent& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.time_us, b.time_us);
  EXPECT_EQ(a.wid, b.wid);
  if (a.type != RecordType::Draw) {
    EXPECT_EQ(a.w, b.w);
    EXPECT_EQ(a.h, b.h);
    if (a.type == RecordType::WindowNew) {
      EXPECT_EQ(a.x, b.x);
      EXPECT_EQ(a.y, b.y);
    }
    return;
  }
  const DrawPacket &p = a.draw, &q = b.draw;
  EXPECT_EQ(p.wid, q.wid);
  EXPECT_EQ(p.x, q.x);
  EXPECT_EQ(p.y, q.y);
  EXPECT_EQ(p.w, q.w);
  EXPECT_EQ(p.h, q.h);
  EXPECT_EQ(p.coding, q.coding);
  EXPECT_EQ(p.sequence, q.sequence);
  EXPECT_EQ(p.rowstride, q.rowstride);
  EXPECT_EQ(p.data.view(), q.data.view());
  const DrawOptions &o = p.options, &r = q.options;
  EXPECT_EQ(o.rgb_format, r.rgb_format);
  EXPECT_EQ(o.zlib, r.zlib);
  EXPECT_EQ(o.lz4, r.lz4);
  EXPECT_EQ(o.store, r.store);
  EXPECT_EQ(o.delta, r.delta);
  EXPECT_EQ(o.bucket, r.bucket);
  EXPECT_EQ(o.flush, r.flush);
  EXPECT_EQ(o.alpha_offset, r.alpha_offset);
  EXPECT_EQ(o.scaled_width, r.scaled_width);
  EXPECT_EQ(o.scaled_height, r.scaled_height);
  ASSERT_EQ(o.scroll.size(), r.scroll.size());
  for (size_t i = 0; i < o.scroll.size(); ++i) {
    EXPECT_EQ(o.scroll[i].y, r.scroll[i].y);
    EXPECT_EQ(o.scroll[i].dy, r.scroll[i].dy);
    EXPECT_EQ(o.scroll[i].dx, r.scroll[i].dx);
  }
  EXPECT_EQ(o.paint, r.paint);
  EXPECT_EQ(o.quality, r.quality);
  EXPECT_EQ(o.csc, r.csc);
  EXPECT_EQ(o.frame, r.frame);
  EXPECT_EQ(o.delayed, r.delayed);
}

TEST(Recording, RoundTripsThroughAFile) {
  auto ev = sample_events();
  auto path = (std::filesystem::temp_directory_path() / "pixpath_recording_test.pxrec").string();
  {
    auto w = RecordingWriter::create(path);
    ASSERT_TRUE(w.ok());
    for (const auto& e : ev) ASSERT_TRUE(w->write(e).ok());
    RecordedEvent back = ev[0];
    back.time_us = 1;
    EXPECT_FALSE(w->write(back).ok());  // time going backwards
    ASSERT_TRUE(w->close().ok());
  }
  auto r = RecordingReader::open(path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto all = r->read_all();
  ASSERT_TRUE(all.ok()) << all.error().message();
  ASSERT_EQ(all->size(), ev.size());
  for (size_t i = 0; i < ev.size(); ++i) expect_same(ev[i], (*all)[i]);
  std::remove(path.c_str());
}

TEST(Recording, EveryTruncationFailsCleanly) {
  auto bytes = encode_all(sample_events());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = RecordingReader::from_bytes(SharedBytes::copy_of(std::span(bytes.data(), n)));
    if (!r.ok()) continue;  // header cut
    auto all = r->read_all();
    // a cut exactly at a record boundary is a valid, shorter recording
    if (all.ok()) continue;
    EXPECT_EQ(all.error().code(), ErrorCode::Truncated) << n << ": " << all.error().message();
  }
}

TEST(Recording, RejectsCorruptFiles) {
  auto good = encode_all(sample_events());
  auto read = [](std::vector<uint8_t> b) -> Result<std::vector<RecordedEvent>> {
    PIXPATH_TRY(RecordingReader r, RecordingReader::from_bytes(SharedBytes::adopt(std::move(b))));
    return r.read_all();
  };
  ASSERT_TRUE(read(good).ok());
  auto bad_magic = good;
  bad_magic[0] = 'Q';
  EXPECT_EQ(read(bad_magic).error().code(), ErrorCode::CorruptData);
  auto bad_version = good;
  bad_version[8] = 2;
  EXPECT_EQ(read(bad_version).error().code(), ErrorCode::Unsupported);
  auto bad_type = good;
  bad_type[16 + 4] = 9;
  EXPECT_EQ(read(bad_type).error().code(), ErrorCode::Unsupported);
  auto huge = good;
  huge[16 + 3] = 0x7F;  // first record's length
  EXPECT_FALSE(read(huge).ok());
  // a record one byte longer than its fields: trailing bytes
  auto trailing = encode_recording_header();
  auto rec = encode_record(sample_events()[4]);
  rec->push_back(0);
  (*rec)[0]++;
  trailing.insert(trailing.end(), rec->begin(), rec->end());
  EXPECT_EQ(read(trailing).error().code(), ErrorCode::CorruptData);
  // time going backwards
  auto ev = sample_events();
  std::swap(ev[1], ev[3]);
  EXPECT_EQ(read(encode_all(ev)).error().code(), ErrorCode::CorruptData);
  // geometry beyond the limits
  ev = sample_events();
  ev[0].w = 1 << 20;
  EXPECT_EQ(read(encode_all(ev)).error().code(), ErrorCode::LimitExceeded);
  // unknown option bits: the option mask of the draw record sits after its fixed fields
  ev = sample_events();
  auto draw = encode_record(ev[2]);  // "void": no options
  size_t mask_at = 5 + 8 + 8 + 16 + 8 + 4 + 1 + 4;
  ASSERT_LT(mask_at + 3, draw->size());
  (*draw)[mask_at + 3] = 0x80;
  auto unknown = encode_recording_header();
  unknown.insert(unknown.end(), draw->begin(), draw->end());
  EXPECT_EQ(read(unknown).error().code(), ErrorCode::Unsupported);
}

}  // namespace
}  // namespace pixpath::paint
