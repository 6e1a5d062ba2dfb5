// Recordings (`pixpath play FILE`): the reader checks every length and value of an untrusted
// file. Input: a recording file.
#include "pixpath/paint/recording.h"

using namespace pixpath;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paint::RecordingLimits limits;
  limits.max_record_bytes = 1 << 20;
  auto reader = paint::RecordingReader::from_bytes(
      SharedBytes::copy_of(std::span<const uint8_t>(data, size)), limits);
  if (!reader.ok()) return 0;
  for (int i = 0; i < 10000; ++i) {
    auto e = reader->next();
    if (!e.ok() || !e->has_value()) break;
    // A record that was read must encode back (the writer accepts what the reader gives).
    (void)paint::encode_record(**e);
  }
  return 0;
}
