// Recordings: a stream of draw packets and window events with their arrival times, for
// replaying what an xpra server sent (pixpath play), for tests and for benchmarks.
// The file format is specified in docs/recording-format.md: a 16-byte header (magic
// "PXREC\r\n\x1a", version, header size), then length-prefixed little-endian records.
//
// Untrusted input: the reader checks every length against the bytes that remain and against
// RecordingLimits before using it, refuses unknown record types and option bits, times that
// go backwards and trailing bytes inside a record; a file that ends inside a record fails with
// ErrorCode::Truncated. Draw data is a slice of the file's bytes (no copy).
//
// Threading: a reader or writer object is used by one thread at a time; the events a reader
// returns are values (their data is a SharedBytes, safe to hand to other threads).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::paint {

inline constexpr char kRecordingMagic[8] = {'P', 'X', 'R', 'E', 'C', '\r', '\n', '\x1a'};
inline constexpr uint32_t kRecordingVersion = 1;

enum class RecordType : uint8_t { WindowNew = 1, WindowResize = 2, WindowLost = 3, Draw = 4 };

struct RecordedEvent {
  RecordType type = RecordType::Draw;
  int64_t time_us = 0;  // since the start of the recording
  int64_t wid = 0;
  int x = 0, y = 0, w = 0, h = 0;  // WindowNew: geometry; WindowResize: w, h
  DrawPacket draw;                 // Draw only (draw.wid == wid; `received` is not stored)
};

struct RecordingLimits {
  uint32_t max_record_bytes = 256u << 20;  // one record, draw data included
  int max_dimension = 32768;               // width, height, |x|, |y|
  uint32_t max_scroll_rects = 65536;
  size_t max_file_bytes = size_t{4} << 30;
};

// Encodes one record (prefix included). Fails on values the format cannot hold.
Result<std::vector<uint8_t>> encode_record(const RecordedEvent& event);
std::vector<uint8_t> encode_recording_header();

class RecordingWriter {
 public:
  static Result<RecordingWriter> create(const std::string& path);
  RecordingWriter(RecordingWriter&&) noexcept;
  RecordingWriter& operator=(RecordingWriter&&) = delete;
  ~RecordingWriter();  // closes (errors are lost: call close() to see them)
  Result<void> write(const RecordedEvent& event);
  Result<void> close();
  uint64_t bytes_written() const { return bytes_; }

 private:
  RecordingWriter(FILE* f, std::string path) : file_(f), path_(std::move(path)) {}
  FILE* file_ = nullptr;
  std::string path_;
  uint64_t bytes_ = 0;
  int64_t last_time_us_ = 0;
};

class RecordingReader {
 public:
  // The whole recording in memory (draw data will be slices of it).
  static Result<RecordingReader> from_bytes(SharedBytes bytes, RecordingLimits limits = {});
  static Result<RecordingReader> open(const std::string& path, RecordingLimits limits = {});

  // The next event, nullopt at the clean end of the file.
  Result<std::optional<RecordedEvent>> next();
  // Every event (fails on the first bad record).
  Result<std::vector<RecordedEvent>> read_all();

  uint32_t version() const { return version_; }
  size_t offset() const { return offset_; }
  size_t size() const { return bytes_.size(); }

 private:
  RecordingReader(SharedBytes bytes, RecordingLimits limits, uint32_t version, size_t offset)
      : bytes_(std::move(bytes)), limits_(limits), version_(version), offset_(offset) {}
  SharedBytes bytes_;
  RecordingLimits limits_;
  uint32_t version_;
  size_t offset_;
  int64_t last_time_us_ = 0;
};

}  // namespace pixpath::paint
