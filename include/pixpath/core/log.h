// The library's diagnostic log: one process-wide facility with levels, a threshold and a
// replaceable sink.
//
// What goes here: things a person running a program wants to know but no caller can act on
// (a server ignored a packet, a hardware path was disabled, a session ended). Results and
// errors a caller handles travel in Result / Error instead; a program's own output (tables,
// JSON, its error lines) is the program's business, not this log's.
//
// Levels, most severe first: Error, Warning, Info, Debug, Trace. A line is delivered when its
// level is at or above the threshold (default Info): set_log_threshold(LogLevel::Warning)
// keeps errors and warnings. The `pixpath` command maps -q to Error and -v / -vv to Debug /
// Trace.
//
// The sink receives whole lines (no trailing newline). The default writes
// "pixpath: <line>\n" to stderr with one write per line. set_log_sink replaces it
// (tests collect lines, an application forwards them to its own log); a null sink restores
// the default.
//
// Threading: every function here may be called from any thread at any time. The sink runs on
// the thread that logs, outside any lock of this facility, possibly on several threads at
// once: it must be thread-safe itself. After set_log_sink returns, a line that started before
// may still reach the previous sink. A sink may log (it is not re-entered under a lock), but a
// sink that logs at a delivered level unconditionally recurses forever.
//
// Formatting: PIXPATH_LOG(level, "fmt {}", args...) formats with fmt only when the level is
// delivered; the file using it includes <fmt/format.h> and links fmt (every pixpath library
// does). This header itself needs nothing beyond the standard library.
#pragma once

#include <functional>
#include <string_view>

namespace pixpath {

enum class LogLevel : int { Error = 0, Warning = 1, Info = 2, Debug = 3, Trace = 4 };

// "error", "warning", "info", "debug", "trace".
std::string_view to_string(LogLevel level);

// Lines at `threshold` and more severe are delivered. Default: Info.
void set_log_threshold(LogLevel threshold);
LogLevel log_threshold();
// Whether a line at `level` would be delivered now (cheap: one relaxed atomic load).
bool log_enabled(LogLevel level);

// Receives one delivered line (no trailing newline) and its level.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;
// Installs `sink` (null: the default stderr sink) and returns the previous one (null when it
// was the default).
LogSink set_log_sink(LogSink sink);

// Delivers `line` to the sink when `level` is enabled.
void log_line(LogLevel level, std::string_view line);

}  // namespace pixpath

// Formats with fmt::format(__VA_ARGS__) and logs, only when `level` is enabled.
#define PIXPATH_LOG(level, ...)                                    \
  do {                                                             \
    if (::pixpath::log_enabled(level)) {                           \
      ::pixpath::log_line((level), ::fmt::format(__VA_ARGS__));    \
    }                                                              \
  } while (0)
