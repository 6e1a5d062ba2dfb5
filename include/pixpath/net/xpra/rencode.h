// rencodeplus: the packet encoding of xpra 6.x (protocol flag 0x10), a compact binary relative
// of bencode where the first byte of every value (its "type code") says what follows:
//
//   0..43      the integer 0..43                   70..101    the integer -1..-32
//   62 int1    1 byte, signed                      63 int2    2 bytes, signed, big-endian
//   64 int4    4 bytes, signed, big-endian         65 int8    8 bytes, signed, big-endian
//   61 int     decimal text ('-' and digits, at most 63 characters), then 127
//   66         float32, big-endian IEEE 754        44         float64, big-endian IEEE 754
//   67 True    68 False    69 None
//   128..191   a UTF-8 string of 0..63 bytes, the bytes follow
//   '0'..'9'   a length in decimal, then ':' and a UTF-8 string, or '/' and a byte string
//   192..255   a list of 0..63 items, the items follow
//   59         a list, items until 127
//   102..126   a dict of 0..24 entries, key and value of each follow
//   60         a dict, key and value pairs until 127
//
// What xpra's encoder writes, and so rencode_encode too: the shortest fixed form of an integer
// (0..43, -32..-1, then int1, int2, int4, int8; the text form only beyond 64 bits), float64 for
// every float, Strings shorter than 64 bytes in the fixed form and longer ones as "N:", Bytes
// always as "N/", lists of fewer than 64 items and dicts of fewer than 25 entries in the fixed
// forms, longer ones terminated by 127.
//
// Decoding: lists and tuples become Value Lists, float32 becomes a double, integers that fit
// int64 become Ints whatever form carried them, and text integers beyond int64 become BigInts.
// Strings are checked to be UTF-8, as xpra's decoder does. Unlike xpra's decoder, pixpath
// requires the value to span all of its input, refuses lists and dicts as dict keys (xpra never
// sends them), and keeps duplicate dict keys in wire order (Value::find sees the first).
#pragma once

#include <cstdint>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

// The same limits as bencode's: nesting depth and values per input (each list item, dict key
// and dict value counts; a fixed-form "list of 63 items" costs one byte on the wire per item).
using RencodeLimits = BencodeLimits;

// Decodes exactly one value that must span all of `input`. Bytes and Strings in the result are
// slices of `input` (no copy); a length is checked against what remains before anything is
// sliced or allocated. Errors, all with subject "xpra", stage "rencode decode" and "at byte N:"
// in the reason: Truncated (input ends inside a value), CorruptData (a type code no value starts
// with, bad UTF-8, malformed numbers, trailing bytes, list or dict keys), LimitExceeded
// (RencodeLimits, a length that does not fit in 64 bits).
[[nodiscard]] Result<Value> rencode_decode(const SharedBytes& input, RencodeLimits limits = {});

// Appends the encoding of `value` to `out`, as xpra 6.x's rencodeplus decoder reads it. Dict
// entries are written in their stored order. Precondition: Strings hold valid UTF-8 (Strings
// made by rencode_decode always do).
void rencode_encode(const Value& value, std::vector<uint8_t>& out);
[[nodiscard]] std::vector<uint8_t> rencode_encode(const Value& value);

}  // namespace pixpath::xpra
