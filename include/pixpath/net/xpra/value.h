// xpra::Value: one decoded item of an xpra packet (bencode dialect): an integer, a byte string,
// a list or a dict. Byte strings are SharedBytes slices of the buffer they were decoded from,
// so a draw's pixel data is never copied out of the chunk it arrived in.
//
// Dicts keep their entries in wire order as (key, value) pairs; keys are usually byte strings
// but bencode lets a peer send integer keys too. Lookup by name compares byte strings only.
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

  Value() : v_(int64_t{0}) {}
  Value(int64_t i) : v_(i) {}            // NOLINT: implicit by design
  Value(int i) : v_(int64_t{i}) {}       // NOLINT
  Value(bool b) : v_(int64_t{b ? 1 : 0}) {}  // NOLINT: bencode has no bool; xpra sends 0/1
  Value(SharedBytes b) : v_(std::move(b)) {}  // NOLINT
  Value(std::string_view s) : v_(SharedBytes::copy_of(s)) {}  // NOLINT
  Value(const char* s) : Value(std::string_view(s)) {}        // NOLINT
  Value(const std::string& s) : Value(std::string_view(s)) {}  // NOLINT
  Value(List l) : v_(std::move(l)) {}    // NOLINT
  Value(Dict d) : v_(std::move(d)) {}    // NOLINT

  static Value list(std::initializer_list<Value> items) { return Value(List(items)); }
  // A list of strings, e.g. the codings a client can paint.
  static Value string_list(const std::vector<std::string>& items);

  bool is_int() const { return v_.index() == 0; }
  bool is_bytes() const { return v_.index() == 1; }
  bool is_list() const { return v_.index() == 2; }
  bool is_dict() const { return v_.index() == 3; }
  // "int", "bytes", "list" or "dict", for error messages.
  std::string_view type_name() const;

  // Unchecked access: precondition is_<kind>() (std::get throws otherwise; pixpath is built
  // without relying on that). Use the checked readers below for wire data.
  int64_t as_int() const { return std::get<0>(v_); }
  const SharedBytes& as_bytes() const { return std::get<1>(v_); }
  std::string_view as_view() const { return std::get<1>(v_).view(); }
  const List& as_list() const { return std::get<2>(v_); }
  List& as_list() { return std::get<2>(v_); }
  const Dict& as_dict() const { return std::get<3>(v_); }
  Dict& as_dict() { return std::get<3>(v_); }

  // Dict lookup by byte-string key; nullptr when absent or when this is not a dict.
  const Value* find(std::string_view key) const;
  // Dict insert-or-replace (precondition: is_dict()).
  void set(std::string_view key, Value value);

  // Short human-readable rendering for logs: long byte strings are elided.
  std::string debug_string(size_t max_len = 200) const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<int64_t, SharedBytes, List, Dict> v_;
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
