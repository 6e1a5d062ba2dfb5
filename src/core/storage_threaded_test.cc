// Storages, pictures and pools used from many threads at once. Runs under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/testing/live_storage_check.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/storage.h"
#include "pixpath/core/storage_pool.h"

namespace pixpath {
namespace {

class StorageThreadedTest : public testing::LiveStorageCheck {};

TEST_F(StorageThreadedTest, CopiesAndDropsOnManyThreadsReleaseExactlyOnce) {
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> released{0};
    static uint8_t bytes[64];
    StorageRef s = PictureStorage::wrap(MemoryLocation::host(), bytes, sizeof bytes, {},
                                        [&released] { ++released; })
                       .value();
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([copy = s] {
        for (int i = 0; i < 200; ++i) {
          StorageRef again = copy;
          StorageRef moved = std::move(again);
        }
      });
    }
    s.reset();
    for (auto& t : threads) t.join();
    ASSERT_EQ(released, 1);
  }
}

TEST_F(StorageThreadedTest, SharedPictureIsReadConcurrentlyAndNeverWritable) {
  auto p = Picture::allocate(PixelFormat::RGBA, 64, 64).value();
  {
    auto v = p.write().value();
    for (int y = 0; y < 64; ++y) for (auto& b : v.plane(0).row(y)) b = static_cast<uint8_t>(y);
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([copy = p, &bad]() mutable {
      if (copy.write().ok()) ++bad;  // shared: refused
      auto crop = copy.crop(8, 8, 16, 16).value();
      auto v = crop.read().value();
      for (int y = 0; y < 16; ++y) {
        for (uint8_t b : v.plane(0).row(y)) bad += b != y + 8;
      }
      auto mine = std::move(crop).make_writable().value();  // a private copy
      if (!mine.write().ok()) ++bad;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad, 0);
  EXPECT_TRUE(p.writable());
}

TEST_F(StorageThreadedTest, PoolAcquireAndReturnFromManyThreads) {
  auto pool = StoragePool::create({.name = "t", .block_bytes = 4096, .max_free_blocks = 4}).value();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&pool, &failures, t] {
      for (int i = 0; i < 200; ++i) {
        auto s = pool->acquire(4096);
        if (!s.ok()) {
          ++failures;
          continue;
        }
        static_cast<uint8_t*>((*s)->data())[i % 4096] = static_cast<uint8_t>(t);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  const auto st = pool->stats();
  EXPECT_EQ(st.outstanding, 0);
  EXPECT_LE(st.free_blocks, 4);
  EXPECT_EQ(st.allocated + st.reused, 6 * 200);
}

TEST_F(StorageThreadedTest, PoolDroppedWhileOtherThreadsStillHoldItsStorages) {
  auto pool = StoragePool::create({.name = "t", .block_bytes = 256}).value();
  std::vector<StorageRef> held;
  for (int i = 0; i < 8; ++i) held.push_back(pool->acquire(256).value());
  std::vector<std::thread> threads;
  std::atomic<int> go{0};
  for (auto& s : held) {
    threads.emplace_back([s = std::move(s), &go]() mutable {
      while (!go.load()) std::this_thread::yield();
      static_cast<uint8_t*>(s->data())[0] = 1;
      s.reset();
    });
  }
  pool.reset();
  go = 1;
  for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace pixpath
