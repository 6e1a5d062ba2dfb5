#include "pixpath/net/xpra/rencode.h"

#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

// Type codes (see rencode.h).
constexpr uint8_t kFloat64 = 44;
constexpr uint8_t kList = 59;
constexpr uint8_t kDict = 60;
constexpr uint8_t kIntText = 61;
constexpr uint8_t kInt1 = 62;
constexpr uint8_t kInt2 = 63;
constexpr uint8_t kInt4 = 64;
constexpr uint8_t kInt8 = 65;
constexpr uint8_t kFloat32 = 66;
constexpr uint8_t kTrue = 67;
constexpr uint8_t kFalse = 68;
constexpr uint8_t kNone = 69;
constexpr uint8_t kTerm = 127;
constexpr uint8_t kPosFixedStart = 0, kPosFixedCount = 44;
constexpr uint8_t kNegFixedStart = 70, kNegFixedCount = 32;
constexpr uint8_t kDictFixedStart = 102, kDictFixedCount = 25;
constexpr uint8_t kStrFixedStart = 128, kStrFixedCount = 64;
constexpr uint8_t kListFixedStart = 192, kListFixedCount = 64;
constexpr size_t kMaxIntTextLength = 63;  // xpra refuses 64 characters and more

// Strict UTF-8 as Python's decoder checks it: no overlong forms, no surrogates, nothing beyond
// U+10FFFF. Returns the offset of the first bad byte, or s.size() when all is well.
size_t utf8_error_at(const uint8_t* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return n;
}

uint64_t read_be(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

class RencodeDecoder {
 public:
  RencodeDecoder(const SharedBytes& in, RencodeLimits limits) : in_(in), limits_(limits) {}

  Result<Value> decode_all() {
    PIXPATH_TRY(Value v, decode(0));
    if (pos_ != in_.size()) {
      return error(ErrorCode::CorruptData,
                   fmt::format("{} bytes of trailing data after the value", in_.size() - pos_));
    }
    return v;
  }

 private:
  Error error_at(size_t at, ErrorCode code, std::string reason) const {
    return Error(code, "xpra", "rencode decode", fmt::format("at byte {}: {}", at, reason));
  }
  Error error(ErrorCode code, std::string reason) const {
    return error_at(pos_, code, std::move(reason));
  }
  Error truncated(size_t needed) const {
    return error(ErrorCode::Truncated,
                 fmt::format("input ends early: {} more bytes needed, {} remain", needed,
                             in_.size() - pos_));
  }
  size_t remaining() const { return in_.size() - pos_; }
  const uint8_t* at() const { return in_.data() + pos_; }

  // A fixed-size signed big-endian integer after the type code.
  Result<Value> read_fixed_int(size_t bytes) {
    if (remaining() < 1 + bytes) return truncated(1 + bytes);
    uint64_t raw = read_be(at() + 1, bytes);
    int64_t v;
    if (bytes < 8) {
      const uint64_t sign = uint64_t{1} << (bytes * 8 - 1);
      v = (raw & sign) ? int64_t(raw | ~((sign << 1) - 1)) : int64_t(raw);
    } else {
      v = std::bit_cast<int64_t>(raw);
    }
    pos_ += 1 + bytes;
    return Value(v);
  }

  Result<Value> read_float(size_t bytes) {
    if (remaining() < 1 + bytes) return truncated(1 + bytes);
    uint64_t raw = read_be(at() + 1, bytes);
    pos_ += 1 + bytes;
    if (bytes == 4) return Value::from_double(double(std::bit_cast<float>(uint32_t(raw))));
    return Value::from_double(std::bit_cast<double>(raw));
  }

  // Type code 61: decimal text up to the terminator.
  Result<Value> read_int_text() {
    const size_t start = pos_ + 1;
    size_t end = start;
    while (true) {
      if (end >= in_.size()) {
        return error(ErrorCode::Truncated, "input ends inside a text integer");
      }
      if (in_.data()[end] == kTerm) break;
      if (end - start >= kMaxIntTextLength) {
        return error(ErrorCode::CorruptData,
                     fmt::format("text integer longer than {} characters", kMaxIntTextLength));
      }
      ++end;
    }
    const uint8_t* d = in_.data();
    size_t i = start;
    bool negative = false;
    if (i < end && d[i] == '-') {
      negative = true;
      ++i;
    }
    if (i == end) return error(ErrorCode::CorruptData, "text integer without digits");
    bool fits = true;
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t(std::numeric_limits<int64_t>::max()) + 1
                                    : uint64_t(std::numeric_limits<int64_t>::max());
    for (size_t k = i; k < end; ++k) {
      if (d[k] < '0' || d[k] > '9') {
        return error_at(k, ErrorCode::CorruptData,
                        fmt::format("byte 0x{:02x} in a text integer", d[k]));
      }
      uint64_t digit = d[k] - '0';
      if (fits && magnitude > (limit - digit) / 10) fits = false;
      if (fits) magnitude = magnitude * 10 + digit;
    }
    Value v = fits ? Value(negative ? int64_t(0 - magnitude) : int64_t(magnitude))
                   : Value::big_int(in_.slice(start, end - start));
    pos_ = end + 1;
    return v;
  }

  Result<Value> read_string_bytes(size_t offset, size_t len, bool utf8) {
    // Precondition: offset <= in_.size(); len checked here before slicing.
    if (len > in_.size() - offset) {
      return error(ErrorCode::Truncated,
                   fmt::format("string of {} bytes but only {} remain", len,
                               in_.size() - offset));
    }
    if (utf8) {
      size_t bad = utf8_error_at(in_.data() + offset, len);
      if (bad != len) {
        return error_at(offset + bad, ErrorCode::CorruptData,
                        fmt::format("string is not valid UTF-8 (byte 0x{:02x})",
                                    in_.data()[offset + bad]));
      }
    }
    SharedBytes b = in_.slice(offset, len);
    pos_ = offset + len;
    return utf8 ? Value::string(std::move(b)) : Value(std::move(b));
  }

  // A length in decimal, then ':' (UTF-8 string) or '/' (byte string).
  Result<Value> read_length_prefixed() {
    const uint8_t* d = in_.data();
    size_t i = pos_;
    uint64_t len = 0;
    while (i < in_.size() && d[i] >= '0' && d[i] <= '9') {
      uint64_t digit = d[i] - '0';
      if (len > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        return error(ErrorCode::LimitExceeded, "string length does not fit in 64 bits");
      }
      len = len * 10 + digit;
      ++i;
    }
    if (i >= in_.size()) return error(ErrorCode::Truncated, "input ends inside a string length");
    if (d[i] != ':' && d[i] != '/') {
      return error_at(i, ErrorCode::CorruptData,
                      fmt::format("expected ':' or '/' after a string length, found byte 0x{:02x}",
                                  d[i]));
    }
    bool utf8 = d[i] == ':';
    if (len > in_.size()) {  // also keeps the size_t conversion exact
      return error(ErrorCode::Truncated,
                   fmt::format("string of {} bytes but only {} remain", len, in_.size() - i - 1));
    }
    return read_string_bytes(i + 1, size_t(len), utf8);
  }

  Result<void> enter(int depth) {
    if (depth >= limits_.max_depth) {
      return error(ErrorCode::LimitExceeded,
                   fmt::format("nesting deeper than {} levels", limits_.max_depth));
    }
    return {};
  }

  static bool is_container_code(uint8_t c) {
    return c == kList || c == kDict || c >= kListFixedStart ||
           (c >= kDictFixedStart && c < kDictFixedStart + kDictFixedCount);
  }

  Result<Value> decode_key(int depth) {
    if (pos_ < in_.size() && is_container_code(*at())) {
      return error(ErrorCode::CorruptData, "dict key is a list or dict");
    }
    return decode(depth);
  }

  Result<Value> decode(int depth) {
    if (pos_ >= in_.size()) return truncated(1);
    if (++items_ > limits_.max_items) {
      return error(ErrorCode::LimitExceeded,
                   fmt::format("more than {} values in one packet", limits_.max_items));
    }
    const uint8_t c = *at();
    if (c < kPosFixedStart + kPosFixedCount) {
      ++pos_;
      return Value(int64_t(c - kPosFixedStart));
    }
    if (c >= kNegFixedStart && c < kNegFixedStart + kNegFixedCount) {
      ++pos_;
      return Value(-int64_t(c - kNegFixedStart + 1));
    }
    if (c >= '0' && c <= '9') return read_length_prefixed();
    if (c >= kStrFixedStart && c < kStrFixedStart + kStrFixedCount) {
      return read_string_bytes(pos_ + 1, size_t(c - kStrFixedStart), true);
    }
    switch (c) {
      case kInt1: return read_fixed_int(1);
      case kInt2: return read_fixed_int(2);
      case kInt4: return read_fixed_int(4);
      case kInt8: return read_fixed_int(8);
      case kIntText: return read_int_text();
      case kFloat32: return read_float(4);
      case kFloat64: return read_float(8);
      case kTrue: ++pos_; return Value(true);
      case kFalse: ++pos_; return Value(false);
      case kNone: ++pos_; return Value::none();
      default: break;
    }
    if (c >= kListFixedStart || c == kList) {
      PIXPATH_CHECK(enter(depth));
      Value::List items;
      ++pos_;
      if (c != kList) {
        size_t count = c - kListFixedStart;
        items.reserve(std::min(count, remaining()));
        for (size_t i = 0; i < count; ++i) {
          PIXPATH_TRY(Value item, decode(depth + 1));
          items.push_back(std::move(item));
        }
      } else {
        while (true) {
          if (pos_ >= in_.size()) return truncated(1);
          if (*at() == kTerm) break;
          PIXPATH_TRY(Value item, decode(depth + 1));
          items.push_back(std::move(item));
        }
        ++pos_;
      }
      return Value(std::move(items));
    }
    if ((c >= kDictFixedStart && c < kDictFixedStart + kDictFixedCount) || c == kDict) {
      PIXPATH_CHECK(enter(depth));
      Value::Dict entries;
      ++pos_;
      if (c != kDict) {
        size_t count = c - kDictFixedStart;
        entries.reserve(std::min(count, remaining() / 2));
        for (size_t i = 0; i < count; ++i) {
          PIXPATH_TRY(Value key, decode_key(depth + 1));
          PIXPATH_TRY(Value value, decode(depth + 1));
          entries.emplace_back(std::move(key), std::move(value));
        }
      } else {
        while (true) {
          if (pos_ >= in_.size()) return truncated(1);
          if (*at() == kTerm) break;
          PIXPATH_TRY(Value key, decode_key(depth + 1));
          PIXPATH_TRY(Value value, decode(depth + 1));
          entries.emplace_back(std::move(key), std::move(value));
        }
        ++pos_;
      }
      return Value(std::move(entries));
    }
    return error(ErrorCode::CorruptData, fmt::format("invalid type code {} (0x{:02x})", c, c));
  }

  const SharedBytes& in_;
  RencodeLimits limits_;
  size_t pos_ = 0;
  size_t items_ = 0;
};

void put_be(std::vector<uint8_t>& out, uint64_t v, size_t bytes) {
  for (size_t i = bytes; i-- > 0;) out.push_back(uint8_t(v >> (i * 8)));
}

void append_bytes(std::vector<uint8_t>& out, std::string_view s) {
  out.insert(out.end(), s.begin(), s.end());
}

void encode_int(int64_t x, std::vector<uint8_t>& out) {
  if (x >= 0 && x < kPosFixedCount) {
    out.push_back(uint8_t(kPosFixedStart + x));
  } else if (x < 0 && x >= -int64_t{kNegFixedCount}) {
    out.push_back(uint8_t(kNegFixedStart - 1 - x));
  } else if (x >= -128 && x < 128) {
    out.push_back(kInt1);
    put_be(out, uint64_t(x), 1);
  } else if (x >= -32768 && x < 32768) {
    out.push_back(kInt2);
    put_be(out, uint64_t(x), 2);
  } else if (x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max()) {
    out.push_back(kInt4);
    put_be(out, uint64_t(x), 4);
  } else {
    out.push_back(kInt8);
    put_be(out, uint64_t(x), 8);
  }
}

}  // namespace

Result<Value> rencode_decode(const SharedBytes& input, RencodeLimits limits) {
  return RencodeDecoder(input, limits).decode_all();
}

void rencode_encode(const Value& value, std::vector<uint8_t>& out) {
  switch (value.kind()) {
    case Value::Kind::Int:
      encode_int(value.as_int(), out);
      return;
    case Value::Kind::Bool:
      out.push_back(value.as_bool() ? kTrue : kFalse);
      return;
    case Value::Kind::None:
      out.push_back(kNone);
      return;
    case Value::Kind::Float:
      out.push_back(kFloat64);
      put_be(out, std::bit_cast<uint64_t>(value.as_double()), 8);
      return;
    case Value::Kind::BigInt:
      out.push_back(kIntText);
      append_bytes(out, value.as_big_int_text());
      out.push_back(kTerm);
      return;
    case Value::Kind::String: {
      std::string_view s = value.as_view();
      if (s.size() < kStrFixedCount) {
        out.push_back(uint8_t(kStrFixedStart + s.size()));
      } else {
        append_bytes(out, fmt::format("{}:", s.size()));
      }
      append_bytes(out, s);
      return;
    }
    case Value::Kind::Bytes:
      append_bytes(out, fmt::format("{}/", value.as_bytes().size()));
      append_bytes(out, value.as_view());
      return;
    case Value::Kind::List: {
      const auto& items = value.as_list();
      const bool fixed = items.size() < kListFixedCount;
      out.push_back(fixed ? uint8_t(kListFixedStart + items.size()) : kList);
      for (const auto& item : items) rencode_encode(item, out);
      if (!fixed) out.push_back(kTerm);
      return;
    }
    case Value::Kind::Dict: {
      const auto& entries = value.as_dict();
      const bool fixed = entries.size() < kDictFixedCount;
      out.push_back(fixed ? uint8_t(kDictFixedStart + entries.size()) : kDict);
      for (const auto& [k, v] : entries) {
        rencode_encode(k, out);
        rencode_encode(v, out);
      }
      if (!fixed) out.push_back(kTerm);
      return;
    }
  }
}

std::vector<uint8_t> rencode_encode(const Value& value) {
  std::vector<uint8_t> out;
  rencode_encode(value, out);
  return out;
}

}  // namespace pixpath::xpra
