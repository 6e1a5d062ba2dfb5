// Overflow-checked size arithmetic for untrusted dimensions.
#pragma once

#include <cstddef>
#include <optional>

namespace pixpath::internal {

inline std::optional<size_t> checked_mul(size_t a, size_t b) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<size_t> checked_add(size_t a, size_t b) {
  size_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline size_t align_up(size_t v, size_t alignment) {  // alignment: power of two
  return (v + alignment - 1) & ~(alignment - 1);
}

}  // namespace pixpath::internal
