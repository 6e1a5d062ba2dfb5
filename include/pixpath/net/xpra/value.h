// xpra::Value: one decoded item of an xpra packet, in either packet encoding pixpath speaks:
// bencode (xpra 3.x: integers, byte strings, lists, dicts) or rencodeplus (xpra 6.x: adds
// booleans, floats, None, and tells UTF-8 strings from byte strings). Byte strings and UTF-8
// strings are SharedBytes slices of the buffer they were decoded from, so a draw's pixel data
// is never copied out of the chunk it arrived in.
//
// Kinds, and how the two families of readers see them:
//   Int, Bool        is_int() is true for both; as_int() gives a Bool as 0 or 1 (xpra 3.x sends
//                    booleans as 0/1, 6.x as True/False: readers of ints accept either).
//   Bytes, String    is_bytes() is true for both; as_view() gives the bytes (a String's are
//                    valid UTF-8). is_string() tells a String apart. Values made from C++ text
//                    (string_view, const char*, std::string) are Strings; from SharedBytes,
//                    Bytes. bencode cannot tell them apart and writes both as "N:...".
//   Float            a double (rencodeplus float32 and float64 both decode to it).
//   None             rencodeplus None.
//   BigInt           an integer outside int64 in rencodeplus' decimal text form; kept as its
//                    digits (as_big_int_text()) so it can be passed on, never as a wrong number.
//   List, Dict       as before; rencodeplus tuples are Lists.
// operator== is lenient in the same way (Int 1 == Bool true, Bytes "a" == String "a", floats by
// value); identical() also compares the kinds and floats bit for bit.
//
// Dicts keep their entries in wire order as (key, value) pairs; keys are usually strings but a
// peer may send integer keys too. Lookup by name compares Bytes and String keys.
//
// Lifetime: a Value owns (shares) every byte it refers to; copying a Value copies the tree
// structure, never the bytes.
// Threading: a Value is a plain value; distinct Values may be used on distinct threads, and a
// const Value may be read from several threads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"

namespace pixpath::xpra {

class Value {
 public:
  using List = std::vector<Value>;
  using Dict = std::vector<std::pair<Value, Value>>;
  enum class Kind { Int, Bool, Bytes, String, List, Dict, Float, None, BigInt };

  Value() : v_(int64_t{0}) {}
  Value(int64_t i) : v_(i) {}            // NOLINT: implicit by design
  Value(int i) : v_(int64_t{i}) {}       // NOLINT
  Value(bool b) : kind_(Kind::Bool), v_(int64_t{b ? 1 : 0}) {}  // NOLINT: bencode writes i0e/i1e
  Value(SharedBytes b) : kind_(Kind::Bytes), v_(std::move(b)) {}  // NOLINT
  // Text: a UTF-8 String (precondition: valid UTF-8; rencodeplus peers reject anything else).
  Value(std::string_view s) : kind_(Kind::String), v_(SharedBytes::copy_of(s)) {}  // NOLINT
  Value(const char* s) : Value(std::string_view(s)) {}        // NOLINT
  Value(const std::string& s) : Value(std::string_view(s)) {}  // NOLINT
  Value(List l) : kind_(Kind::List), v_(std::move(l)) {}    // NOLINT
  Value(Dict d) : kind_(Kind::Dict), v_(std::move(d)) {}    // NOLINT

  static Value list(std::initializer_list<Value> items) { return Value(List(items)); }
  // A list of strings, e.g. the codings a client can paint.
  static Value string_list(const std::vector<std::string>& items);
  static Value none() { return Value(Kind::None, std::monostate{}); }
  static Value from_double(double d) { return Value(Kind::Float, d); }
  // A UTF-8 String sharing `utf8`'s bytes (precondition: valid UTF-8).
  static Value string(SharedBytes utf8) { return Value(Kind::String, std::move(utf8)); }
  // An integer outside int64 as decimal text: an optional '-' and 1 to 63 digits in all, as
  // rencodeplus' long form carries it. Precondition: that syntax (the decoder checks it).
  static Value big_int(SharedBytes decimal) { return Value(Kind::BigInt, std::move(decimal)); }

  Kind kind() const { return kind_; }
  bool is_int() const { return kind_ == Kind::Int || kind_ == Kind::Bool; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_bytes() const { return kind_ == Kind::Bytes || kind_ == Kind::String; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_big_int() const { return kind_ == Kind::BigInt; }
  // "int", "bool", "bytes", "string", "list", "dict", "float", "none" or "big int", for error
  // messages.
  std::string_view type_name() const;

  // Unchecked access: precondition is_<kind>() (std::get throws otherwise; pixpath is built
  // without relying on that). Use the checked readers below for wire data.
  int64_t as_int() const { return std::get<0>(v_); }
  bool as_bool() const { return std::get<0>(v_) != 0; }
  const SharedBytes& as_bytes() const { return std::get<1>(v_); }
  std::string_view as_view() const { return std::get<1>(v_).view(); }
  const List& as_list() const { return std::get<2>(v_); }
  List& as_list() { return std::get<2>(v_); }
  const Dict& as_dict() const { return std::get<3>(v_); }
  Dict& as_dict() { return std::get<3>(v_); }
  double as_double() const { return std::get<4>(v_); }
  std::string_view as_big_int_text() const { return std::get<1>(v_).view(); }

  // Dict lookup by Bytes or String key; nullptr when absent or when this is not a dict.
  const Value* find(std::string_view key) const;
  // Dict insert-or-replace (precondition: is_dict()); a new key is a String.
  void set(std::string_view key, Value value);

  // Short human-readable rendering for logs: long byte strings are elided.
  std::string debug_string(size_t max_len = 200) const;

  // Lenient equality (see the kinds above).
  friend bool operator==(const Value& a, const Value& b);
  // Strict equality: same kinds all the way down, floats compared bit for bit.
  friend bool identical(const Value& a, const Value& b);

 private:
  using Storage = std::variant<int64_t, SharedBytes, List, Dict, double, std::monostate>;
  Value(Kind kind, Storage v) : kind_(kind), v_(std::move(v)) {}

  Kind kind_ = Kind::Int;
  Storage v_;
};

// Checked readers for the fields of a packet. `packet_type` and `field` only feed the error
// message, e.g. "xpra parse draw: field 'rowstride' (index 9) is bytes, expected int".
// All errors are ErrorCode::Protocol, subject "xpra", stage "parse <packet_type>".
class FieldReader {
 public:
  // `packet` must be a list; reading index i reads packet[i].
  FieldReader(std::string_view packet_type, const Value& packet)
      : type_(packet_type), packet_(packet) {}

  Result<int64_t> int_at(size_t index, std::string_view field) const;
  // An int that must fit in `int` and lie in [lo, hi].
  Result<int> int_in(size_t index, std::string_view field, int64_t lo, int64_t hi) const;
  Result<SharedBytes> bytes_at(size_t index, std::string_view field) const;
  Result<std::string> string_at(size_t index, std::string_view field) const;
  Result<const Value*> list_at(size_t index, std::string_view field) const;
  Result<const Value*> dict_at(size_t index, std::string_view field) const;
  // Present and of any type, else an error naming the field.
  Result<const Value*> at(size_t index, std::string_view field) const;
  size_t size() const { return packet_.is_list() ? packet_.as_list().size() : 0; }

  // Dict-member readers: `dict` must be a dict. Absent keys give std::nullopt-like results
  // through `fallback`; present keys of the wrong type are errors.
  Result<int64_t> dict_int(const Value& dict, std::string_view key, int64_t fallback) const;
  Result<std::string> dict_string(const Value& dict, std::string_view key,
                                  std::string fallback) const;

  Error error(std::string reason) const;

 private:
  std::string_view type_;
  const Value& packet_;
};

}  // namespace pixpath::xpra
