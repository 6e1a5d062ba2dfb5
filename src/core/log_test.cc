#include "pixpath/core/log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pixpath/core/thread_annotations.h"

namespace pixpath {
namespace {

// Installs a collecting sink and the given threshold; restores both afterwards.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_threshold_ = log_threshold();
    saved_sink_ = set_log_sink([this](LogLevel level, std::string_view line) {
      MutexLock lock(mu_);
      lines_.emplace_back(level, std::string(line));
    });
  }
  void TearDown() override {
    set_log_sink(std::move(saved_sink_));
    set_log_threshold(saved_threshold_);
  }
  std::vector<std::pair<LogLevel, std::string>> lines() {
    MutexLock lock(mu_);
    return lines_;
  }

  Mutex mu_;
  std::vector<std::pair<LogLevel, std::string>> lines_ PIXPATH_GUARDED_BY(mu_);
  LogLevel saved_threshold_{};
  LogSink saved_sink_;
};

TEST_F(LogTest, DefaultThresholdIsInfo) {
  // Nothing in this test binary changes the threshold outside a fixture.
  EXPECT_EQ(saved_threshold_, LogLevel::Info);
}

TEST_F(LogTest, ThresholdFiltersByLevel) {
  const LogLevel all[] = {LogLevel::Error, LogLevel::Warning, LogLevel::Info, LogLevel::Debug,
                          LogLevel::Trace};
  for (LogLevel threshold : all) {
    set_log_threshold(threshold);
    EXPECT_EQ(log_threshold(), threshold);
    {
      MutexLock lock(mu_);
      lines_.clear();
    }
    for (LogLevel l : all) log_line(l, to_string(l));
    auto got = lines();
    ASSERT_EQ(got.size(), size_t(static_cast<int>(threshold) + 1)) << to_string(threshold);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, all[i]);
      EXPECT_EQ(got[i].second, to_string(all[i]));
      EXPECT_TRUE(log_enabled(all[i]));
    }
    for (size_t i = got.size(); i < std::size(all); ++i) EXPECT_FALSE(log_enabled(all[i]));
  }
}

TEST_F(LogTest, MacroFormatsOnlyWhenEnabled) {
  set_log_threshold(LogLevel::Warning);
  int formatted = 0;
  auto counted = [&] {
    ++formatted;
    return 7;
  };
  PIXPATH_LOG(LogLevel::Debug, "dropped {}", counted());
  EXPECT_EQ(formatted, 0);
  PIXPATH_LOG(LogLevel::Warning, "window {} is {}x{}", counted(), 640, 480);
  EXPECT_EQ(formatted, 1);
  auto got = lines();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, LogLevel::Warning);
  EXPECT_EQ(got[0].second, "window 7 is 640x480");
}

TEST_F(LogTest, SinkReplacementReturnsThePreviousSink) {
  set_log_threshold(LogLevel::Info);
  std::vector<std::string> second;
  LogSink first = set_log_sink([&](LogLevel, std::string_view l) { second.emplace_back(l); });
  ASSERT_TRUE(first);  // the fixture's sink
  log_line(LogLevel::Info, "to the second sink");
  EXPECT_EQ(second, std::vector<std::string>{"to the second sink"});
  EXPECT_TRUE(lines().empty());
  // Putting the first back: it receives lines again, the second no longer.
  LogSink replaced = set_log_sink(std::move(first));
  ASSERT_TRUE(replaced);
  log_line(LogLevel::Info, "back to the first");
  EXPECT_EQ(second.size(), 1u);
  ASSERT_EQ(lines().size(), 1u);
  EXPECT_EQ(lines()[0].second, "back to the first");
  // The returned sink is the one that was installed.
  replaced(LogLevel::Error, "direct");
  EXPECT_EQ(second.back(), "direct");
}

TEST_F(LogTest, NullSinkRestoresTheDefaultStderrSink) {
  set_log_threshold(LogLevel::Info);
  LogSink mine = set_log_sink(nullptr);
  ASSERT_TRUE(mine);
  ::testing::internal::CaptureStderr();
  log_line(LogLevel::Warning, "a warning line");
  log_line(LogLevel::Debug, "not delivered");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "pixpath: a warning line\n");
  // With the default installed, set_log_sink returns null.
  EXPECT_FALSE(set_log_sink(std::move(mine)));
  EXPECT_TRUE(lines().empty());
}

TEST_F(LogTest, SinkMayLog) {
  set_log_threshold(LogLevel::Info);
  std::vector<std::string> seen;
  LogSink fixture = set_log_sink([&](LogLevel level, std::string_view l) {
    seen.emplace_back(l);
    if (level == LogLevel::Error) log_line(LogLevel::Info, "from inside the sink");
  });
  log_line(LogLevel::Error, "outer");
  set_log_sink(std::move(fixture));
  EXPECT_EQ(seen, (std::vector<std::string>{"outer", "from inside the sink"}));
}

// Threads log, change the threshold and replace the sink at once (TSan: label threaded).
TEST_F(LogTest, ConcurrentLoggingAndReplacement) {
  set_log_threshold(LogLevel::Debug);
  constexpr int kThreads = 4, kLines = 2000;
  std::atomic<int> other_sink_lines{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> loggers;
  for (int t = 0; t < kThreads; ++t) {
    loggers.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) PIXPATH_LOG(LogLevel::Info, "thread {} line {}", t, i);
    });
  }
  std::thread changer([&] {
    while (!stop.load()) {
      LogSink prev = set_log_sink([&](LogLevel, std::string_view) { ++other_sink_lines; });
      set_log_threshold(LogLevel::Trace);
      std::this_thread::yield();
      set_log_sink(std::move(prev));
      set_log_threshold(LogLevel::Debug);
    }
  });
  for (auto& t : loggers) t.join();
  stop = true;
  changer.join();
  // Every line reached exactly one of the two sinks, whole.
  auto got = lines();
  EXPECT_EQ(int(got.size()) + other_sink_lines.load(), kThreads * kLines);
  for (const auto& [level, line] : got) {
    EXPECT_EQ(level, LogLevel::Info);
    EXPECT_EQ(line.rfind("thread ", 0), 0u) << line;
  }
}

}  // namespace
}  // namespace pixpath
