// DeltaBuckets: the client side of xpra's delta compression, for one window.
//
// Semantics (read from xpra 3.1's client, window_backing_base.py process_delta, and its
// server, window_source.py make_data_packet):
//   - the server XORs the *raw pixels* with an earlier picture of the same region before
//     encoding; the client undoes it AFTER decompression/decoding (zlib, lz4, png), on the
//     decoded pixels in their own format and rowstride — never on compressed bytes;
//   - the server uses it for rgb24, rgb32 and png only (client's "supports_delta"); xpra's
//     client applies it to whatever it decoded, and so does this class;
//   - delta=S, bucket=B: XOR with the picture stored in bucket B, which must exist, hold
//     sequence S, and have the same width, height and rgb format — anything else is a decode
//     error (xpra asserts), and nothing is painted or stored;
//   - store=S (bucket B, default 0): keep the RESULT (after the XOR) in bucket B under S,
//     replacing what was there; with or without delta;
//   - buckets are per window; xpra 3.1 clients have 5 (DELTA_BUCKETS), advertised as
//     "encoding.delta_buckets"; bucket numbers outside [0, count) are errors.
// Sharing: a stored picture is the decoded picture itself (a shared reference, no copy). The
// XOR is in place when the decoded picture is writable (freshly decompressed), and copies
// once when it is read-only (e.g. uncompressed rgb wrapping the packet bytes).
//
// Threading: not synchronised; the paint engine uses each window's buckets on the UI thread,
// in packet order (so a delta always sees the store of every earlier packet).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::paint {

class DeltaBuckets {
 public:
  static constexpr int kDefaultCount = 5;
  explicit DeltaBuckets(int count = kDefaultCount) : buckets_(static_cast<size_t>(count)) {}

  // Applies options.delta / options.store to `decoded` and returns the picture to paint.
  // `rgb_format` names the pixels' format as the packet did ("" when it did not).
  // On failure the buckets are unchanged.
  Result<Picture> apply(Picture decoded, const DrawOptions& options, const std::string& coding);

  int count() const { return static_cast<int>(buckets_.size()); }
  struct Stored {
    Picture picture;
    int64_t sequence = 0;
    std::string rgb_format;
  };
  const std::optional<Stored>& bucket(int i) const { return buckets_.at(static_cast<size_t>(i)); }
  void clear();

 private:
  std::vector<std::optional<Stored>> buckets_;
};

}  // namespace pixpath::paint
