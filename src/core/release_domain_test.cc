// Release domains: releases run where their domain is current, queued elsewhere, drained by
// the owner. Runs under TSan (label "threaded").
#include "pixpath/core/release_domain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/testing/live_storage_check.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/storage.h"

namespace pixpath {
namespace {

using ::testing::HasSubstr;

class ReleaseDomainTest : public testing::LiveStorageCheck {};

// Release actions record where and how often they ran. The storages point at static bytes:
// a release that never runs (abandoned after shutdown) leaks nothing.
struct ReleaseLog {
  std::atomic<int> runs{0};
  std::atomic<bool> on_owner{true};
  std::thread::id owner = std::this_thread::get_id();
};
uint8_t g_bytes[256];

StorageRef bound_storage(ReleaseLog& log, std::shared_ptr<ReleaseDomain> domain) {
  return PictureStorage::wrap(MemoryLocation::host(), g_bytes, sizeof g_bytes, {},
                              [&log] {
                                if (std::this_thread::get_id() != log.owner) log.on_owner = false;
                                ++log.runs;
                              },
                              std::move(domain))
      .value();
}

void drop_on_other_thread(StorageRef s) {
  std::thread([s = std::move(s)]() mutable { s.reset(); }).join();
}

TEST_F(ReleaseDomainTest, ThreadBoundReleaseRunsOnItsThreadWhenDroppedElsewhere) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  EXPECT_TRUE(domain->is_current());
  ReleaseLog log;
  const auto before = counters();
  drop_on_other_thread(bound_storage(log, domain));
  EXPECT_EQ(log.runs, 0) << "ran on the dropping thread";
  EXPECT_EQ(domain->pending(), 1);
  EXPECT_EQ(counters().deferred_releases, before.deferred_releases + 1);
  EXPECT_EQ(counters().live_storages(), before.live_storages() + 1);  // still live until drained
  auto drained = domain->drain();
  ASSERT_TRUE(drained.ok());
  EXPECT_EQ(*drained, 1);
  EXPECT_EQ(log.runs, 1);
  EXPECT_TRUE(log.on_owner);
  EXPECT_EQ(domain->pending(), 0);
}

TEST_F(ReleaseDomainTest, DroppedOnTheOwnerThreadReleasesInline) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  bound_storage(log, domain).reset();
  EXPECT_EQ(log.runs, 1);
  EXPECT_EQ(domain->pending(), 0);
}

TEST_F(ReleaseDomainTest, DrainWhereNotCurrentFailsAndRunsNothing) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  drop_on_other_thread(bound_storage(log, domain));
  auto r = std::async(std::launch::async, [&] { return domain->drain(); }).get();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr("'ui' drained where it is not current"));
  EXPECT_EQ(log.runs, 0);
  EXPECT_EQ(domain->pending(), 1);
  ASSERT_TRUE(domain->drain().ok());
  EXPECT_EQ(log.runs, 1);
}

TEST_F(ReleaseDomainTest, ReleaseRunsExactlyOnceWhenEightThreadsDropConcurrently) {
  for (int round = 0; round < 20; ++round) {
    auto domain = ReleaseDomain::for_current_thread("ui");
    ReleaseLog log;
    StorageRef s = bound_storage(log, domain);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([copy = s, &ready]() mutable {
        ++ready;
        while (ready.load() < 8) std::this_thread::yield();
        copy.reset();
      });
    }
    s.reset();
    for (auto& t : threads) t.join();
    ASSERT_TRUE(domain->drain().ok());
    ASSERT_EQ(log.runs, 1) << "round " << round;
    EXPECT_TRUE(log.on_owner);
  }
}

TEST_F(ReleaseDomainTest, WakeupIsCalledOncePerEmptyToNonEmpty) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  std::atomic<int> wakeups{0};
  domain->set_wakeup([&wakeups] { ++wakeups; });
  ReleaseLog log;
  std::vector<StorageRef> refs;
  for (int i = 0; i < 3; ++i) refs.push_back(bound_storage(log, domain));
  std::thread([r = std::move(refs)]() mutable { r.clear(); }).join();
  EXPECT_EQ(domain->pending(), 3);
  EXPECT_EQ(wakeups, 1);
  ASSERT_TRUE(domain->drain().ok());
  drop_on_other_thread(bound_storage(log, domain));
  EXPECT_EQ(wakeups, 2);
  ASSERT_TRUE(domain->drain().ok());
  EXPECT_EQ(log.runs, 4);
}

TEST_F(ReleaseDomainTest, ScopeMakesAContextDomainCurrent) {
  int context_token = 0;
  auto gpu = ReleaseDomain::for_context("gpu", &context_token);
  EXPECT_EQ(gpu->context(), &context_token);
  EXPECT_FALSE(gpu->is_current());  // not even on the creating thread
  ReleaseLog log;
  bound_storage(log, gpu).reset();
  EXPECT_EQ(log.runs, 0);
  EXPECT_EQ(gpu->pending(), 1);
  EXPECT_FALSE(gpu->drain().ok());
  {
    ReleaseDomain::Scope scope(*gpu);
    EXPECT_TRUE(gpu->is_current());
    auto other = ReleaseDomain::for_context("other", nullptr);
    {
      ReleaseDomain::Scope inner(*other);  // scopes nest
      EXPECT_TRUE(gpu->is_current());
      EXPECT_TRUE(other->is_current());
    }
    EXPECT_FALSE(other->is_current());
    EXPECT_EQ(*gpu->drain(), 1);
    bound_storage(log, gpu).reset();  // inline while current
    EXPECT_EQ(log.runs, 2);
    // Another thread has no scope: it queues.
    drop_on_other_thread(bound_storage(log, gpu));
    EXPECT_EQ(gpu->pending(), 1);
    EXPECT_EQ(*gpu->drain(), 1);
  }
  EXPECT_FALSE(gpu->is_current());
  EXPECT_EQ(log.runs, 3);
}

TEST_F(ReleaseDomainTest, ScopeOnAnotherThreadMakesAThreadDomainCurrentThere) {
  auto ui = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  StorageRef s = bound_storage(log, ui);
  std::thread([&] {
    ReleaseDomain::Scope scope(*ui);
    EXPECT_TRUE(ui->is_current());
    s.reset();
  }).join();
  EXPECT_EQ(log.runs, 1);
  EXPECT_EQ(ui->pending(), 0);
}

TEST_F(ReleaseDomainTest, ShutdownWhereCurrentReleasesEverythingAndCloses) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  std::vector<StorageRef> refs;
  for (int i = 0; i < 4; ++i) refs.push_back(bound_storage(log, domain));
  std::thread([r = std::move(refs)]() mutable { r.clear(); }).join();
  auto report = domain->shutdown();
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.released, 4);
  EXPECT_EQ(log.runs, 4);
  EXPECT_TRUE(log.on_owner);
  EXPECT_TRUE(domain->closed());
  int released = 0;
  auto late = PictureStorage::wrap(MemoryLocation::host(), g_bytes, 16, {},
                                   [&released] { ++released; }, domain);
  ASSERT_FALSE(late.ok());
  EXPECT_THAT(late.error().message(), HasSubstr("shut down"));
  EXPECT_EQ(released, 1);
}

TEST_F(ReleaseDomainTest, ShutdownElsewhereReportsExactlyWhatIsPending) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  StorageRef a = bound_storage(log, domain), b = bound_storage(log, domain);
  const std::string ida = "storage #" + std::to_string(a->id()) + " ";
  const std::string idb = "storage #" + std::to_string(b->id()) + " ";
  drop_on_other_thread(std::move(a));
  drop_on_other_thread(std::move(b));
  auto report = std::async(std::launch::async, [&] { return domain->shutdown(); }).get();
  EXPECT_FALSE(report.clean());
  EXPECT_EQ(report.released, 0);
  ASSERT_EQ(report.unreleased.size(), 2u);
  EXPECT_THAT(report.unreleased[0], HasSubstr(ida));
  EXPECT_THAT(report.unreleased[1], HasSubstr(idb));
  EXPECT_THAT(report.unreleased[0], HasSubstr("256 bytes"));
  EXPECT_THAT(report.unreleased[0], HasSubstr("not current"));
  EXPECT_EQ(log.runs, 0);
  EXPECT_FALSE(domain->closed());
  EXPECT_EQ(domain->pending(), 2);
  auto final_report = domain->shutdown();
  EXPECT_TRUE(final_report.clean());
  EXPECT_EQ(final_report.released, 2);
  EXPECT_EQ(log.runs, 2);
}

TEST_F(ReleaseDomainTest, DropAfterShutdownElsewhereIsCountedUnreleased) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  StorageRef s = bound_storage(log, domain);
  ASSERT_TRUE(domain->shutdown().clean());
  const auto before = counters();
  drop_on_other_thread(std::move(s));
  EXPECT_EQ(log.runs, 0);
  EXPECT_EQ(counters().unreleased, before.unreleased + 1);
  EXPECT_EQ(domain->pending(), 0);
}

// The header says a storage dropped after shutdown is not released, wherever it drops: the
// domain's resources (a GL context) may be gone even on its own thread.
TEST_F(ReleaseDomainTest, DropAfterShutdownOnTheOwnerThreadIsNotReleasedEither) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog log;
  StorageRef s = bound_storage(log, domain);
  ASSERT_TRUE(domain->shutdown().clean());
  const auto before = counters();
  s.reset();
  EXPECT_EQ(log.runs, 0);
  EXPECT_EQ(counters().unreleased, before.unreleased + 1);
}

// A release that owns the last reference to another storage of the same domain: shutdown
// releases both (the second inline, as it is current).
TEST_F(ReleaseDomainTest, ShutdownWhereCurrentAlsoReleasesWhatItsReleasesLetGo) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog inner_log, outer_log;
  StorageRef inner = bound_storage(inner_log, domain);
  StorageRef outer =
      PictureStorage::wrap(MemoryLocation::host(), g_bytes, 16, {},
                           [&outer_log, keep = inner] { ++outer_log.runs; }, domain)
          .value();
  inner.reset();
  drop_on_other_thread(std::move(outer));
  EXPECT_EQ(domain->pending(), 1);
  auto report = domain->shutdown();
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(outer_log.runs, 1);
  EXPECT_EQ(inner_log.runs, 1);
}

// Abandoning a storage after shutdown destroys its release action unrun; when that action
// holds the last reference to another storage of the same domain, the drop re-enters the
// domain. It must not deadlock on the domain's lock.
TEST_F(ReleaseDomainTest, AbandonedReleaseHoldingAnotherStorageDoesNotDeadlock) {
  auto domain = ReleaseDomain::for_current_thread("ui");
  ReleaseLog inner_log, outer_log;
  StorageRef inner = bound_storage(inner_log, domain);
  StorageRef outer =
      PictureStorage::wrap(MemoryLocation::host(), g_bytes, 16, {},
                           [&outer_log, keep = inner] { ++outer_log.runs; }, domain)
          .value();
  inner.reset();
  ASSERT_TRUE(domain->shutdown().clean());
  const auto before = counters();
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  std::thread([o = std::move(outer), done]() mutable {
    o.reset();
    done->set_value();
  }).detach();
  if (finished.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "deadlock: the abandoned release re-entered the domain under its lock";
    std::fflush(nullptr);
    std::_Exit(1);  // the stuck thread cannot be joined
  }
  EXPECT_EQ(counters().unreleased, before.unreleased + 2);
  EXPECT_EQ(outer_log.runs + inner_log.runs, 0);
}

}  // namespace
}  // namespace pixpath
