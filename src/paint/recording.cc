#include "pixpath/paint/recording.h"

#include <cerrno>
#include <cstring>
#include <limits>

#include "pixpath/codecs/image_io.h"

namespace pixpath::paint {
namespace {

// Option presence bits, in the order their values follow (docs/recording-format.md).
enum OptionBit : uint32_t {
  kRgbFormat = 1u << 0,
  kZlib = 1u << 1,
  kLz4 = 1u << 2,
  kStore = 1u << 3,
  kDelta = 1u << 4,
  kBucket = 1u << 5,
  kFlush = 1u << 6,
  kAlphaOffset = 1u << 7,
  kScaledSize = 1u << 8,
  kScroll = 1u << 9,
  kNoPaint = 1u << 10,
  kQuality = 1u << 11,
  kCsc = 1u << 12,      // video draws
  kFrame = 1u << 13,
  kDelayed = 1u << 14,
  kKnownBits = (1u << 15) - 1,
};
constexpr size_t kMaxString = 255;
constexpr size_t kPrefixBytes = 5;  // u32 body length + u8 type
constexpr size_t kHeaderBytes = 16;

Error format_error(ErrorCode code, size_t offset, std::string reason) {
  return Error(code, "recording", "read record at byte " + std::to_string(offset),
               std::move(reason));
}

class Out {
 public:
  void u8(uint8_t v) { b_.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void str(const std::string& s) {
    u8(static_cast<uint8_t>(s.size()));
    b_.insert(b_.end(), s.begin(), s.end());
  }
  void bytes(std::span<const uint8_t> s) { b_.insert(b_.end(), s.begin(), s.end()); }
  std::vector<uint8_t>& buffer() { return b_; }

 private:
  std::vector<uint8_t> b_;
};

class In {
 public:
  In(const SharedBytes& all, size_t begin, size_t end) : all_(all), pos_(begin), end_(end) {}
  bool u8(uint8_t& v) {
    if (end_ - pos_ < 1) return false;
    v = all_.data()[pos_++];
    return true;
  }
  bool u32(uint32_t& v) {
    if (end_ - pos_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{all_.data()[pos_ + i]} << (8 * i);
    pos_ += 4;
    return true;
  }
  bool u64(uint64_t& v) {
    if (end_ - pos_ < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{all_.data()[pos_ + i]} << (8 * i);
    pos_ += 8;
    return true;
  }
  bool i32(int32_t& v) {
    uint32_t u;
    if (!u32(u)) return false;
    v = static_cast<int32_t>(u);
    return true;
  }
  bool i64(int64_t& v) {
    uint64_t u;
    if (!u64(u)) return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  bool str(std::string& s) {
    uint8_t n;
    if (!u8(n) || end_ - pos_ < n) return false;
    s.assign(reinterpret_cast<const char*>(all_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  bool slice(size_t n, SharedBytes& out) {
    if (end_ - pos_ < n) return false;
    out = all_.slice(pos_, n);
    pos_ += n;
    return true;
  }
  size_t remaining() const { return end_ - pos_; }

 private:
  const SharedBytes& all_;
  size_t pos_, end_;
};


}  // namespace

std::vector<uint8_t> encode_recording_header() {
  Out o;
  o.bytes({reinterpret_cast<const uint8_t*>(kRecordingMagic), 8});
  o.u32(kRecordingVersion);
  o.u32(kHeaderBytes);
  return std::move(o.buffer());
}

Result<std::vector<uint8_t>> encode_record(const RecordedEvent& e) {
  auto bad = [](std::string why) {
    return Error(ErrorCode::InvalidArgument, "recording", "write record", std::move(why));
  };
  if (e.time_us < 0) return bad("negative time");
  Out o;
  o.u32(0);  // body length, patched below
  o.u8(static_cast<uint8_t>(e.type));
  o.u64(static_cast<uint64_t>(e.time_us));
  o.i64(e.wid);
  switch (e.type) {
    case RecordType::WindowNew:
      o.i32(e.x), o.i32(e.y), o.i32(e.w), o.i32(e.h);
      break;
    case RecordType::WindowResize:
      o.i32(e.w), o.i32(e.h);
      break;
    case RecordType::WindowLost:
      break;
    case RecordType::Draw: {
      const DrawPacket& p = e.draw;
      const DrawOptions& op = p.options;
      if (p.coding.size() > kMaxString || op.rgb_format.size() > kMaxString ||
          op.csc.size() > kMaxString)
        return bad("string longer than 255 bytes");
      o.i32(p.x), o.i32(p.y), o.i32(p.w), o.i32(p.h);
      o.i64(p.sequence);
      o.i32(p.rowstride);
      o.str(p.coding);
      uint32_t mask = 0;
      if (!op.rgb_format.empty()) mask |= kRgbFormat;
      if (op.zlib) mask |= kZlib;
      if (op.lz4) mask |= kLz4;
      if (op.store) mask |= kStore;
      if (op.delta) mask |= kDelta;
      if (op.bucket != 0) mask |= kBucket;
      if (op.flush) mask |= kFlush;
      if (op.alpha_offset) mask |= kAlphaOffset;
      if (op.scaled_width || op.scaled_height) mask |= kScaledSize;
      if (!op.scroll.empty()) mask |= kScroll;
      if (!op.paint) mask |= kNoPaint;
      if (op.quality >= 0) mask |= kQuality;
      if (!op.csc.empty()) mask |= kCsc;
      if (op.frame) mask |= kFrame;
      if (op.delayed != 0) mask |= kDelayed;
      o.u32(mask);
      if (mask & kRgbFormat) o.str(op.rgb_format);
      if (mask & kZlib) o.i32(op.zlib);
      if (mask & kLz4) o.i32(op.lz4);
      if (mask & kStore) o.i64(*op.store);
      if (mask & kDelta) o.i64(*op.delta);
      if (mask & kBucket) o.i32(op.bucket);
      if (mask & kFlush) o.i64(*op.flush);
      if (mask & kAlphaOffset) o.i64(*op.alpha_offset);
      if (mask & kScaledSize) {
        o.i32(op.scaled_width.value_or(p.w));
        o.i32(op.scaled_height.value_or(p.h));
      }
      if (mask & kScroll) {
        o.u32(static_cast<uint32_t>(op.scroll.size()));
        for (const ScrollRect& r : op.scroll) {
          o.i32(r.x), o.i32(r.y), o.i32(r.w), o.i32(r.h), o.i32(r.dx), o.i32(r.dy);
        }
      }
      if (mask & kQuality) o.i32(op.quality);
      if (mask & kCsc) o.str(op.csc);
      if (mask & kFrame) o.i64(*op.frame);
      if (mask & kDelayed) o.i64(op.delayed);
      if (p.data.size() > std::numeric_limits<uint32_t>::max()) return bad("data too large");
      o.u32(static_cast<uint32_t>(p.data.size()));
      o.bytes(p.data.span());
      break;
    }
    default:
      return bad("unknown record type");
  }
  auto& b = o.buffer();
  const size_t body = b.size() - kPrefixBytes;
  if (body > std::numeric_limits<uint32_t>::max()) return bad("record too large");
  for (int i = 0; i < 4; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(body >> (8 * i));
  return std::move(b);
}

Result<RecordingWriter> RecordingWriter::create(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Error(ErrorCode::Io, path, "create recording", std::strerror(errno));
  RecordingWriter w(f, path);
  auto header = encode_recording_header();
  if (std::fwrite(header.data(), 1, header.size(), f) != header.size())
    return Error(ErrorCode::Io, path, "write header", std::strerror(errno));
  w.bytes_ = header.size();
  return w;
}

RecordingWriter::RecordingWriter(RecordingWriter&& o) noexcept
    : file_(o.file_), path_(std::move(o.path_)), bytes_(o.bytes_), last_time_us_(o.last_time_us_) {
  o.file_ = nullptr;
}

RecordingWriter::~RecordingWriter() {
  if (file_) std::fclose(file_);
}

Result<void> RecordingWriter::write(const RecordedEvent& event) {
  if (!file_) return Error(ErrorCode::InvalidArgument, path_, "write record", "closed");
  if (event.time_us < last_time_us_)
    return Error(ErrorCode::InvalidArgument, path_, "write record", "time goes backwards");
  PIXPATH_TRY(std::vector<uint8_t> rec, encode_record(event));
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size())
    return Error(ErrorCode::Io, path_, "write record", std::strerror(errno));
  bytes_ += rec.size();
  last_time_us_ = event.time_us;
  return ok();
}

Result<void> RecordingWriter::close() {
  if (!file_) return ok();
  int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) return Error(ErrorCode::Io, path_, "close", std::strerror(errno));
  return ok();
}

Result<RecordingReader> RecordingReader::from_bytes(SharedBytes bytes, RecordingLimits limits) {
  if (bytes.size() < kHeaderBytes)
    return Error(ErrorCode::Truncated, "recording", "read header",
                 "file has " + std::to_string(bytes.size()) + " bytes, the header needs 16");
  if (std::memcmp(bytes.data(), kRecordingMagic, 8) != 0)
    return Error(ErrorCode::CorruptData, "recording", "read header",
                 "not a pixpath recording (bad magic)");
  In in(bytes, 8, kHeaderBytes);
  uint32_t version = 0, header = 0;
  (void)in.u32(version);
  (void)in.u32(header);
  if (version != kRecordingVersion)
    return Error(ErrorCode::Unsupported, "recording", "read header",
                 "version " + std::to_string(version) + " (this build reads 1)");
  if (header < kHeaderBytes || header > bytes.size())
    return Error(ErrorCode::CorruptData, "recording", "read header",
                 "header size " + std::to_string(header));
  return RecordingReader(std::move(bytes), limits, version, header);
}

Result<RecordingReader> RecordingReader::open(const std::string& path, RecordingLimits limits) {
  PIXPATH_TRY(std::vector<uint8_t> bytes, codecs::read_file(path, limits.max_file_bytes));
  auto r = from_bytes(SharedBytes::adopt(std::move(bytes)), limits);
  if (!r.ok()) return r.error().within(path, "open recording");
  return r;
}

Result<std::optional<RecordedEvent>> RecordingReader::next() {
  const size_t start = offset_;
  const size_t size = bytes_.size();
  if (start == size) return std::optional<RecordedEvent>{};
  if (size - start < kPrefixBytes)
    return format_error(ErrorCode::Truncated, start, "file ends inside a record prefix");
  In prefix(bytes_, start, start + kPrefixBytes);
  uint32_t body = 0;
  uint8_t type = 0;
  (void)prefix.u32(body);
  (void)prefix.u8(type);
  if (body > limits_.max_record_bytes)
    return format_error(ErrorCode::LimitExceeded, start,
                        "record of " + std::to_string(body) + " bytes exceeds the limit");
  if (size - start - kPrefixBytes < body)
    return format_error(ErrorCode::Truncated, start,
                        "record needs " + std::to_string(body) + " bytes, " +
                            std::to_string(size - start - kPrefixBytes) + " remain");
  In in(bytes_, start + kPrefixBytes, start + kPrefixBytes + body);
  auto truncated = [&] { return format_error(ErrorCode::CorruptData, start, "record too short"); };
  RecordedEvent e;
  uint64_t time = 0;
  if (!in.u64(time) || !in.i64(e.wid)) return truncated();
  if (time > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return format_error(ErrorCode::CorruptData, start, "time out of range");
  e.time_us = static_cast<int64_t>(time);
  if (e.time_us < last_time_us_)
    return format_error(ErrorCode::CorruptData, start, "time goes backwards");
  const int dim = limits_.max_dimension;
  auto size_ok = [&](int32_t w, int32_t h) { return w >= 0 && h >= 0 && w <= dim && h <= dim; };
  auto pos_ok = [&](int32_t x, int32_t y) { return x >= -dim && y >= -dim && x <= dim && y <= dim; };
  switch (static_cast<RecordType>(type)) {
    case RecordType::WindowNew:
      e.type = RecordType::WindowNew;
      if (!in.i32(e.x) || !in.i32(e.y) || !in.i32(e.w) || !in.i32(e.h)) return truncated();
      if (!size_ok(e.w, e.h) || !pos_ok(e.x, e.y))
        return format_error(ErrorCode::LimitExceeded, start, "window geometry out of range");
      break;
    case RecordType::WindowResize:
      e.type = RecordType::WindowResize;
      if (!in.i32(e.w) || !in.i32(e.h)) return truncated();
      if (!size_ok(e.w, e.h))
        return format_error(ErrorCode::LimitExceeded, start, "window size out of range");
      break;
    case RecordType::WindowLost:
      e.type = RecordType::WindowLost;
      break;
    case RecordType::Draw: {
      e.type = RecordType::Draw;
      DrawPacket& p = e.draw;
      DrawOptions& op = p.options;
      p.wid = e.wid;
      uint32_t mask = 0;
      if (!in.i32(p.x) || !in.i32(p.y) || !in.i32(p.w) || !in.i32(p.h) || !in.i64(p.sequence) ||
          !in.i32(p.rowstride) || !in.str(p.coding) || !in.u32(mask))
        return truncated();
      if (!size_ok(p.w, p.h) || !pos_ok(p.x, p.y) || p.rowstride < 0)
        return format_error(ErrorCode::LimitExceeded, start, "draw geometry out of range");
      if (mask & ~kKnownBits)
        return format_error(ErrorCode::Unsupported, start, "unknown option bits");
      int32_t i = 0;
      int64_t l = 0;
      if ((mask & kRgbFormat) && !in.str(op.rgb_format)) return truncated();
      if ((mask & kZlib) && !in.i32(op.zlib)) return truncated();
      if ((mask & kLz4) && !in.i32(op.lz4)) return truncated();
      if (mask & kStore) {
        if (!in.i64(l)) return truncated();
        op.store = l;
      }
      if (mask & kDelta) {
        if (!in.i64(l)) return truncated();
        op.delta = l;
      }
      if ((mask & kBucket) && !in.i32(op.bucket)) return truncated();
      if (mask & kFlush) {
        if (!in.i64(l)) return truncated();
        op.flush = l;
      }
      if (mask & kAlphaOffset) {
        if (!in.i64(l)) return truncated();
        op.alpha_offset = l;
      }
      if (mask & kScaledSize) {
        int32_t sw = 0, sh = 0;
        if (!in.i32(sw) || !in.i32(sh)) return truncated();
        if (!size_ok(sw, sh))
          return format_error(ErrorCode::LimitExceeded, start, "scaled size out of range");
        op.scaled_width = sw;
        op.scaled_height = sh;
      }
      if (mask & kScroll) {
        uint32_t n = 0;
        if (!in.u32(n)) return truncated();
        if (n > limits_.max_scroll_rects || n > in.remaining() / 24)
          return format_error(ErrorCode::LimitExceeded, start, "too many scroll rectangles");
        op.scroll.resize(n);
        for (ScrollRect& r : op.scroll)
          if (!in.i32(r.x) || !in.i32(r.y) || !in.i32(r.w) || !in.i32(r.h) || !in.i32(r.dx) ||
              !in.i32(r.dy))
            return truncated();
      }
      op.paint = !(mask & kNoPaint);
      if (mask & kQuality) {
        if (!in.i32(i)) return truncated();
        op.quality = i;
      }
      if ((mask & kCsc) && !in.str(op.csc)) return truncated();
      if (mask & kFrame) {
        if (!in.i64(l)) return truncated();
        op.frame = l;
      }
      if ((mask & kDelayed) && !in.i64(op.delayed)) return truncated();
      uint32_t n = 0;
      if (!in.u32(n) || !in.slice(n, p.data)) return truncated();
      break;
    }
    default:
      return format_error(ErrorCode::Unsupported, start,
                          "unknown record type " + std::to_string(type));
  }
  if (in.remaining() != 0)
    return format_error(ErrorCode::CorruptData, start,
                        std::to_string(in.remaining()) + " unexpected bytes at the record's end");
  offset_ = start + kPrefixBytes + body;
  last_time_us_ = e.time_us;
  return std::optional<RecordedEvent>(std::move(e));
}

Result<std::vector<RecordedEvent>> RecordingReader::read_all() {
  std::vector<RecordedEvent> out;
  for (;;) {
    PIXPATH_TRY(std::optional<RecordedEvent> e, next());
    if (!e) return out;
    out.push_back(std::move(*e));
  }
}

}  // namespace pixpath::paint
