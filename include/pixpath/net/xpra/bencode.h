// bencode as xpra speaks it: integers "i42e", byte strings "5:hello", lists "l...e" and dicts
// "d...e" whose keys are usually byte strings (integer keys are accepted too). xpra's decoder
// also accepts "u5:hello" (a UTF-8 string); pixpath decodes it as plain bytes and never emits
// it. There are no floats, booleans or None: xpra sends booleans as i0e / i1e.
#pragma once

#include <cstdint>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

struct BencodeLimits {
  int max_depth = 32;  // lists and dicts nested deeper than this are an error
  // Values in one input, all levels (a list item, a dict key and its value each count). Each
  // costs ~40 bytes decoded for as little as 2 bytes on the wire ("le"), so without this a
  // packet within the size limit could decode into 20x its size.
  size_t max_items = size_t{1} << 18;
};

// Decodes exactly one value that must span all of `input`. Byte strings in the result are
// slices of `input` (no copy). Errors: CorruptData / Truncated / LimitExceeded, subject "xpra",
// stage "bencode decode", with the byte offset in the reason.
[[nodiscard]] Result<Value> bencode_decode(const SharedBytes& input, BencodeLimits limits = {});

// Appends the encoding of `value` to `out`. Dict entries are written in their stored order.
// Bytes and Strings are both "N:..."; a Bool is i0e / i1e. Kinds bencode cannot carry (only
// rencodeplus decodes them) are written lossily: a Float as its integer part ("i1e" for 1.5; NaN
// and values beyond int64 as i0e), None as an empty byte string, a BigInt as "i<digits>e" (xpra
// 3.x reads big integers but pixpath's bencode_decode refuses them beyond 64 bits).
void bencode_encode(const Value& value, std::vector<uint8_t>& out);
[[nodiscard]] std::vector<uint8_t> bencode_encode(const Value& value);

}  // namespace pixpath::xpra
