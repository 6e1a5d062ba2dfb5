#include "pixpath/net/xpra/bencode.h"

#include <limits>
#include <string>

#include <fmt/format.h>

namespace pixpath::xpra {
namespace {

class BencodeDecoder {
 public:
  BencodeDecoder(const SharedBytes& in, BencodeLimits limits) : in_(in), limits_(limits) {}

  Result<Value> decode_all() {
    PIXPATH_TRY(Value v, decode(0));
    if (pos_ != in_.size()) {
      return error(ErrorCode::CorruptData,
                   fmt::format("{} bytes of trailing data after the value", in_.size() - pos_));
    }
    return v;
  }

 private:
  Error error(ErrorCode code, std::string reason) const {
    return Error(code, "xpra", "bencode decode", fmt::format("at byte {}: {}", pos_, reason));
  }
  Error truncated() const {
    return error(ErrorCode::Truncated,
                 fmt::format("input ends early ({} bytes in all)", in_.size()));
  }

  // Reads decimal digits (with an optional '-' if `allow_negative`) up to `terminator`.
  Result<int64_t> read_number(char terminator, bool allow_negative) {
    const uint8_t* d = in_.data();
    size_t n = in_.size();
    bool negative = false;
    if (pos_ < n && d[pos_] == '-' && allow_negative) {
      negative = true;
      ++pos_;
    }
    size_t start = pos_;
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t(std::numeric_limits<int64_t>::max()) + 1
                                    : uint64_t(std::numeric_limits<int64_t>::max());
    while (pos_ < n && d[pos_] >= '0' && d[pos_] <= '9') {
      uint64_t digit = d[pos_] - '0';
      if (magnitude > (limit - digit) / 10) {
        return error(ErrorCode::LimitExceeded, "integer does not fit in 64 bits");
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (pos_ >= n) return truncated();
    if (pos_ == start) return error(ErrorCode::CorruptData, "expected a digit");
    if (d[pos_] != uint8_t(terminator)) {
      return error(ErrorCode::CorruptData,
                   fmt::format("expected '{}' after the number, found byte 0x{:02x}", terminator,
                               d[pos_]));
    }
    // No leading zeros ("i03e"), no negative zero ("i-0e"), as xpra's decoder rejects them.
    if (d[start] == '0' && pos_ - start > 1) {
      return error(ErrorCode::CorruptData, "number with a leading zero");
    }
    if (negative && magnitude == 0) return error(ErrorCode::CorruptData, "negative zero");
    ++pos_;  // terminator
    if (negative) return int64_t(0 - magnitude);
    return int64_t(magnitude);
  }

  Result<Value> decode_string() {
    PIXPATH_TRY(int64_t len, read_number(':', false));
    if (uint64_t(len) > in_.size() - pos_) {
      return error(ErrorCode::Truncated,
                   fmt::format("byte string of {} bytes but only {} remain", len,
                               in_.size() - pos_));
    }
    Value v(in_.slice(pos_, size_t(len)));
    pos_ += size_t(len);
    return v;
  }

  Result<Value> decode(int depth) {
    if (pos_ >= in_.size()) return truncated();
    if (++items_ > limits_.max_items) {
      return error(ErrorCode::LimitExceeded,
                   fmt::format("more than {} values in one packet", limits_.max_items));
    }
    uint8_t c = in_.data()[pos_];
    switch (c) {
      case 'i': {
        ++pos_;
        PIXPATH_TRY(int64_t i, read_number('e', true));
        return Value(i);
      }
      case 'u':
        ++pos_;
        if (pos_ >= in_.size()) return truncated();
        if (in_.data()[pos_] < '0' || in_.data()[pos_] > '9') {
          return error(ErrorCode::CorruptData, "expected a string length after 'u'");
        }
        return decode_string();
      case 'l':
      case 'd': {
        if (depth >= limits_.max_depth) {
          return error(ErrorCode::LimitExceeded,
                       fmt::format("nesting deeper than {} levels", limits_.max_depth));
        }
        ++pos_;
        if (c == 'l') {
          Value::List items;
          while (true) {
            if (pos_ >= in_.size()) return truncated();
            if (in_.data()[pos_] == 'e') break;
            PIXPATH_TRY(Value item, decode(depth + 1));
            items.push_back(std::move(item));
          }
          ++pos_;
          return Value(std::move(items));
        }
        Value::Dict entries;
        while (true) {
          if (pos_ >= in_.size()) return truncated();
          if (in_.data()[pos_] == 'e') break;
          uint8_t k = in_.data()[pos_];
          if (k == 'l' || k == 'd') {
            return error(ErrorCode::CorruptData, "dict key is a list or dict");
          }
          PIXPATH_TRY(Value key, decode(depth + 1));
          PIXPATH_TRY(Value value, decode(depth + 1));
          entries.emplace_back(std::move(key), std::move(value));
        }
        ++pos_;
        return Value(std::move(entries));
      }
      default:
        if (c >= '0' && c <= '9') return decode_string();
        return error(ErrorCode::CorruptData, fmt::format("invalid type byte 0x{:02x}", c));
    }
  }

  const SharedBytes& in_;
  BencodeLimits limits_;
  size_t pos_ = 0;
  size_t items_ = 0;
};

void append_text(std::vector<uint8_t>& out, std::string_view s) { out.insert(out.end(), s.begin(), s.end()); }

}  // namespace

Result<Value> bencode_decode(const SharedBytes& input, BencodeLimits limits) {
  return BencodeDecoder(input, limits).decode_all();
}

void bencode_encode(const Value& value, std::vector<uint8_t>& out) {
  if (value.is_int()) {
    append_text(out, fmt::format("i{}e", value.as_int()));
  } else if (value.is_bytes()) {
    append_text(out, fmt::format("{}:", value.as_bytes().size()));
    append_text(out, value.as_view());
  } else if (value.is_float()) {
    // bencode has no floats: the integer part, as xpra's own bencoder would fail to do better.
    double d = value.as_double();
    int64_t i = (d >= -9.2e18 && d <= 9.2e18) ? int64_t(d) : 0;  // NaN and huge values: 0
    append_text(out, fmt::format("i{}e", i));
  } else if (value.is_none()) {
    append_text(out, "0:");  // bencode has no None: an empty byte string
  } else if (value.is_big_int()) {
    append_text(out, fmt::format("i{}e", value.as_big_int_text()));
  } else if (value.is_list()) {
    out.push_back('l');
    for (const auto& item : value.as_list()) bencode_encode(item, out);
    out.push_back('e');
  } else {
    out.push_back('d');
    for (const auto& [k, v] : value.as_dict()) {
      bencode_encode(k, out);
      bencode_encode(v, out);
    }
    out.push_back('e');
  }
}

std::vector<uint8_t> bencode_encode(const Value& value) {
  std::vector<uint8_t> out;
  bencode_encode(value, out);
  return out;
}

}  // namespace pixpath::xpra
