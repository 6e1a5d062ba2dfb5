#include "pixpath/net/xpra/value.h"

#include <bit>
#include <limits>

#include <fmt/format.h>

namespace pixpath::xpra {

Value Value::string_list(const std::vector<std::string>& items) {
  List l;
  l.reserve(items.size());
  for (const auto& s : items) l.emplace_back(std::string_view(s));
  return Value(std::move(l));
}

std::string_view Value::type_name() const {
  switch (kind_) {
    case Kind::Int: return "int";
    case Kind::Bool: return "bool";
    case Kind::Bytes: return "bytes";
    case Kind::String: return "string";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Float: return "float";
    case Kind::None: return "none";
    case Kind::BigInt: return "big int";
  }
  return "?";
}

const Value* Value::find(std::string_view key) const {
  if (!is_dict()) return nullptr;
  for (const auto& [k, v] : as_dict()) {
    if (k.is_bytes() && k.as_view() == key) return &v;
  }
  return nullptr;
}

void Value::set(std::string_view key, Value value) {
  for (auto& [k, v] : as_dict()) {
    if (k.is_bytes() && k.as_view() == key) {
      v = std::move(value);
      return;
    }
  }
  as_dict().emplace_back(Value(key), std::move(value));
}

namespace {
void render(const Value& v, std::string& out, size_t max_len) {
  if (v.is_bool()) {
    out += v.as_bool() ? "True" : "False";
  } else if (v.is_int()) {
    out += std::to_string(v.as_int());
  } else if (v.is_none()) {
    out += "None";
  } else if (v.is_float()) {
    out += fmt::format("{}", v.as_double());
  } else if (v.is_big_int()) {
    out += v.as_big_int_text();
  } else if (v.is_bytes()) {
    std::string_view s = v.as_view();
    bool printable = true;
    for (unsigned char c : s) {
      if (c < 0x20 || c > 0x7e) { printable = false; break; }
    }
    if (printable && s.size() <= 64) {
      out += '\'';
      out += s;
      out += '\'';
    } else {
      out += fmt::format("<{} bytes>", s.size());
    }
  } else if (v.is_list()) {
    out += '[';
    bool first = true;
    for (const auto& item : v.as_list()) {
      if (out.size() > max_len) { out += "..."; break; }
      if (!first) out += ", ";
      first = false;
      render(item, out, max_len);
    }
    out += ']';
  } else {
    out += '{';
    bool first = true;
    for (const auto& [k, item] : v.as_dict()) {
      if (out.size() > max_len) { out += "..."; break; }
      if (!first) out += ", ";
      first = false;
      render(k, out, max_len);
      out += ": ";
      render(item, out, max_len);
    }
    out += '}';
  }
}
}  // namespace

std::string Value::debug_string(size_t max_len) const {
  std::string out;
  render(*this, out, max_len);
  return out;
}

bool operator==(const Value& a, const Value& b) {
  if (a.is_int() || b.is_int()) return a.is_int() && b.is_int() && a.as_int() == b.as_int();
  if (a.is_bytes() || b.is_bytes()) {
    return a.is_bytes() && b.is_bytes() && a.as_view() == b.as_view();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::List: return a.as_list() == b.as_list();
    case Value::Kind::Dict: return a.as_dict() == b.as_dict();
    case Value::Kind::Float: return a.as_double() == b.as_double();
    case Value::Kind::BigInt: return a.as_big_int_text() == b.as_big_int_text();
    default: return true;  // None
  }
}

bool identical(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Int:
    case Value::Kind::Bool: return a.as_int() == b.as_int();
    case Value::Kind::Bytes:
    case Value::Kind::String: return a.as_view() == b.as_view();
    case Value::Kind::BigInt: return a.as_big_int_text() == b.as_big_int_text();
    case Value::Kind::Float: return std::bit_cast<uint64_t>(a.as_double()) ==
                                    std::bit_cast<uint64_t>(b.as_double());
    case Value::Kind::None: return true;
    case Value::Kind::List: {
      const auto& x = a.as_list();
      const auto& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!identical(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::Dict: {
      const auto& x = a.as_dict();
      const auto& y = b.as_dict();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!identical(x[i].first, y[i].first) || !identical(x[i].second, y[i].second)) {
          return false;
        }
      }
      return true;
    }
  }
  return false;
}

Error FieldReader::error(std::string reason) const {
  return Error(ErrorCode::Protocol, "xpra", fmt::format("parse {}", type_), std::move(reason));
}

Result<const Value*> FieldReader::at(size_t index, std::string_view field) const {
  if (!packet_.is_list()) return error("packet is not a list");
  const auto& l = packet_.as_list();
  if (index >= l.size()) {
    return error(fmt::format("field '{}' (index {}) is missing: the packet has {} items", field,
                             index, l.size()));
  }
  return &l[index];
}

Result<int64_t> FieldReader::int_at(size_t index, std::string_view field) const {
  PIXPATH_TRY(const Value* v, at(index, field));
  if (!v->is_int()) {
    return error(fmt::format("field '{}' (index {}) is {}, expected int", field, index,
                             v->type_name()));
  }
  return v->as_int();
}

Result<int> FieldReader::int_in(size_t index, std::string_view field, int64_t lo,
                                int64_t hi) const {
  PIXPATH_TRY(int64_t i, int_at(index, field));
  if (i < lo || i > hi) {
    return error(fmt::format("field '{}' (index {}) is {}, outside [{}, {}]", field, index, i,
                             lo, hi));
  }
  return static_cast<int>(i);
}

Result<SharedBytes> FieldReader::bytes_at(size_t index, std::string_view field) const {
  PIXPATH_TRY(const Value* v, at(index, field));
  if (!v->is_bytes()) {
    return error(fmt::format("field '{}' (index {}) is {}, expected bytes", field, index,
                             v->type_name()));
  }
  return v->as_bytes();
}

Result<std::string> FieldReader::string_at(size_t index, std::string_view field) const {
  PIXPATH_TRY(SharedBytes b, bytes_at(index, field));
  return std::string(b.view());
}

Result<const Value*> FieldReader::list_at(size_t index, std::string_view field) const {
  PIXPATH_TRY(const Value* v, at(index, field));
  if (!v->is_list()) {
    return error(fmt::format("field '{}' (index {}) is {}, expected list", field, index,
                             v->type_name()));
  }
  return v;
}

Result<const Value*> FieldReader::dict_at(size_t index, std::string_view field) const {
  PIXPATH_TRY(const Value* v, at(index, field));
  if (!v->is_dict()) {
    return error(fmt::format("field '{}' (index {}) is {}, expected dict", field, index,
                             v->type_name()));
  }
  return v;
}

Result<int64_t> FieldReader::dict_int(const Value& dict, std::string_view key,
                                      int64_t fallback) const {
  const Value* v = dict.find(key);
  if (!v) return fallback;
  if (!v->is_int()) {
    return error(fmt::format("option '{}' is {}, expected int", key, v->type_name()));
  }
  return v->as_int();
}

Result<std::string> FieldReader::dict_string(const Value& dict, std::string_view key,
                                             std::string fallback) const {
  const Value* v = dict.find(key);
  if (!v) return fallback;
  if (!v->is_bytes()) {
    return error(fmt::format("option '{}' is {}, expected bytes", key, v->type_name()));
  }
  return std::string(v->as_view());
}

}  // namespace pixpath::xpra
