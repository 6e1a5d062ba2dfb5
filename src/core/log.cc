#include "pixpath/core/log.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "pixpath/core/thread_annotations.h"

namespace pixpath {
namespace {

std::atomic<int> g_threshold{static_cast<int>(LogLevel::Info)};

// The installed sink, replaced as a whole: log() copies the pointer under the lock and calls
// the sink outside it, so a slow or logging sink never blocks set_log_sink or other threads.
struct SinkSlot {
  Mutex mu;
  std::shared_ptr<const LogSink> sink PIXPATH_GUARDED_BY(mu);  // null: default
};

SinkSlot& slot() {
  static SinkSlot* s = new SinkSlot;  // never destroyed: threads may log during exit
  return *s;
}

void write_stderr(std::string_view line) {
  std::string out;
  out.reserve(line.size() + 10);
  out.append("pixpath: ").append(line).push_back('\n');
  // One fwrite per line: stdio locks the stream per call, so lines never interleave.
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warning: return "warning";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
    case LogLevel::Trace: return "trace";
  }
  return "unknown";
}

void set_log_threshold(LogLevel threshold) {
  g_threshold.store(static_cast<int>(threshold), std::memory_order_relaxed);
}

LogLevel log_threshold() {
  return static_cast<LogLevel>(g_threshold.load(std::memory_order_relaxed));
}

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= g_threshold.load(std::memory_order_relaxed);
}

LogSink set_log_sink(LogSink sink) {
  std::shared_ptr<const LogSink> next;
  if (sink) next = std::make_shared<const LogSink>(std::move(sink));
  SinkSlot& s = slot();
  std::shared_ptr<const LogSink> previous;
  {
    MutexLock lock(s.mu);
    previous = std::exchange(s.sink, std::move(next));
  }
  return previous ? *previous : LogSink();
}

void log_line(LogLevel level, std::string_view line) {
  if (!log_enabled(level)) return;
  SinkSlot& s = slot();
  std::shared_ptr<const LogSink> sink;
  {
    MutexLock lock(s.mu);
    sink = s.sink;
  }
  if (sink) {
    (*sink)(level, line);
  } else {
    write_stderr(line);
  }
}

}  // namespace pixpath
