// The websocket client's parsers (pixpath/net/xpra/websocket.h): what a ws:// or wss://
// server (or anything on the path) sends. Input: 1 byte choosing the split size, then either
// (even first byte) an HTTP upgrade response followed by frames, or (odd) frames alone, fed to
// the frame parser in pieces of that size. Checks: no crash, no unbounded memory (payload
// bytes handed out never exceed the input, control payloads at most 125 bytes), and the same
// result whatever the split.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "pixpath/net/xpra/websocket.h"

using namespace pixpath::xpra;

namespace {

struct Outcome {
  bool ok = true;
  std::vector<uint8_t> data;
  size_t controls = 0;
};

Outcome parse(std::span<const uint8_t> in, size_t piece) {
  Outcome o;
  ws::FrameParser p(ws::FrameParser::Limits{.max_frame = 1 << 16});
  std::vector<ws::FrameParser::Control> controls;
  for (size_t i = 0; i < in.size() && o.ok; i += piece) {
    auto r = p.feed(in.subspan(i, std::min(piece, in.size() - i)), o.data, controls);
    if (!r.ok()) {
      (void)r.error().message();
      o.ok = false;
    }
  }
  for (const auto& c : controls)
    if (c.payload.size() > 125) std::abort();
  if (o.data.size() > in.size()) std::abort();
  o.controls = controls.size();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 64;
  std::span<const uint8_t> rest(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());
    auto header = ws::check_upgrade_response(text, "dGhlIHNhbXBsZSBub25jZQ==", 4096);
    if (!header.ok()) {
      (void)header.error().message();
      return 0;
    }
    if (*header > rest.size()) std::abort();
    rest = rest.subspan(*header);
  }
  const Outcome split = parse(rest, piece);
  const Outcome whole = parse(rest, rest.size() ? rest.size() : 1);
  // The same bytes give the same stream, however they arrive.
  if (split.ok != whole.ok) std::abort();
  if (split.ok && (split.data != whole.data || split.controls != whole.controls)) std::abort();
  return 0;
}
