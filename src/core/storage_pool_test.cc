#include "pixpath/core/storage_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/testing/live_storage_check.h"
#include "pixpath/core/counters.h"

namespace pixpath {
namespace {

using ::testing::HasSubstr;

class StoragePoolTest : public testing::LiveStorageCheck {};

// A host allocator that counts, so "blocks freed" is measured.
struct CountingAllocator {
  int allocated = 0;
  int freed = 0;
  std::set<void*> live;
  BlockAllocator make() {
    BlockAllocator a;
    a.allocate = [this](size_t bytes) -> Result<void*> {
      void* p = std::aligned_alloc(64, (bytes + 63) & ~size_t{63});
      ++allocated;
      live.insert(p);
      return p;
    };
    a.free = [this](void* p, size_t) {
      ++freed;
      EXPECT_EQ(live.erase(p), 1u) << "freed a block twice or one it never allocated";
      std::free(p);
    };
    return a;
  }
};

class CountingSyncPoint : public SyncPoint {
 public:
  explicit CountingSyncPoint(int* waits) : waits_(waits) {}
  Result<void> wait_host() const override {
    ++*waits_;
    return {};
  }
  void* native() const override { return nullptr; }

 private:
  int* waits_;
};

TEST_F(StoragePoolTest, AcquireReusesReturnedBlocks) {
  auto pool = StoragePool::create({.name = "p", .block_bytes = 4096}).value();
  void* first;
  {
    auto s = pool->acquire(4000).value();
    first = s->data();
    EXPECT_EQ(s->size(), 4000u);
    EXPECT_FALSE(s->shared());
    EXPECT_FALSE(s->read_only());
    EXPECT_EQ(pool->stats().outstanding, 1);
    EXPECT_EQ(pool->stats().free_blocks, 0);
  }
  EXPECT_EQ(pool->stats().outstanding, 0);
  EXPECT_EQ(pool->stats().free_blocks, 1);
  auto s = pool->acquire(4096).value();
  EXPECT_EQ(s->data(), first);
  const auto st = pool->stats();
  EXPECT_EQ(st.allocated, 1);
  EXPECT_EQ(st.reused, 1);
  EXPECT_EQ(st.outstanding, 1);
  EXPECT_EQ(pool->block_bytes(), 4096u);
}

TEST_F(StoragePoolTest, RefusesBadConfigsAndOversizedRequests) {
  EXPECT_EQ(StoragePool::create({.name = "z"}).error().code(), ErrorCode::InvalidArgument);
  StoragePoolConfig half{.name = "half", .block_bytes = 64};
  half.allocator.free = [](void*, size_t) {};
  EXPECT_EQ(StoragePool::create(half).error().code(), ErrorCode::InvalidArgument);
  StoragePoolConfig device{.name = "dev", .block_bytes = 64};
  device.allocator.location.kind = MemoryKind::CudaDevice;
  auto d = StoragePool::create(device);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().message(), HasSubstr("needs an allocator"));
  auto pool = StoragePool::create({.name = "p", .block_bytes = 64}).value();
  auto big = pool->acquire(65);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message(), HasSubstr("'p'"));
  EXPECT_EQ(pool->acquire(0).error().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(pool->stats().outstanding, 0);
}

TEST_F(StoragePoolTest, KeepsAtMostMaxFreeBlocks) {
  CountingAllocator alloc;
  {
    auto pool = StoragePool::create({.name = "p", .block_bytes = 256, .max_free_blocks = 2,
                                     .allocator = alloc.make()})
                    .value();
    {
      std::vector<StorageRef> held;
      for (int i = 0; i < 5; ++i) held.push_back(pool->acquire(256).value());
      EXPECT_EQ(alloc.allocated, 5);
    }
    EXPECT_EQ(pool->stats().free_blocks, 2);
    EXPECT_EQ(alloc.freed, 3);
  }
  EXPECT_EQ(alloc.freed, 5);
  EXPECT_TRUE(alloc.live.empty());
}

// The pool's owner lets go first; the storages still work, and each block is freed (not
// pooled) when its storage goes.
TEST_F(StoragePoolTest, PoolOutlivesItsStoragesWhenDroppedFirst) {
  CountingAllocator alloc;
  auto pool = StoragePool::create({.name = "p", .block_bytes = 1024, .allocator = alloc.make()})
                  .value();
  std::vector<StorageRef> held;
  for (int i = 0; i < 3; ++i) held.push_back(pool->acquire(1024).value());
  { auto back = pool->acquire(512).value(); }  // one block back on the free list
  const auto st = pool->stats();
  EXPECT_EQ(st.outstanding, 3);
  EXPECT_EQ(st.free_blocks, 1);
  EXPECT_EQ(st.allocated, 4);
  EXPECT_EQ(st.reused, 0);

  pool.reset();  // the owner goes first
  EXPECT_EQ(alloc.freed, 1) << "the free list goes with the owner";
  for (auto& s : held) {
    std::memset(s->data(), 0x5A, s->size());  // still valid memory (ASan)
  }
  held.pop_back();
  EXPECT_EQ(alloc.freed, 2);
  held.clear();
  EXPECT_EQ(alloc.freed, 4);
  EXPECT_EQ(alloc.allocated, 4);
  EXPECT_TRUE(alloc.live.empty());
}

TEST_F(StoragePoolTest, WaitsForTheSyncPointBeforeReuse) {
  auto pool = StoragePool::create({.name = "p", .block_bytes = 64}).value();
  int waits = 0;
  {
    auto s = pool->acquire(64).value();
    s->set_sync_point(std::make_shared<CountingSyncPoint>(&waits));
  }
  EXPECT_EQ(waits, 1);
  auto again = pool->acquire(64).value();
  EXPECT_EQ(again->sync_point(), nullptr);
  EXPECT_EQ(pool->stats().reused, 1);
}

TEST_F(StoragePoolTest, FailingAllocatorReportsAndLeavesStatsRight) {
  StoragePoolConfig cfg{.name = "broken", .block_bytes = 64};
  cfg.allocator.allocate = [](size_t) -> Result<void*> {
    return Error(ErrorCode::OutOfMemory, "test", "allocate", "no memory today");
  };
  cfg.allocator.free = [](void*, size_t) { ADD_FAILURE() << "nothing to free"; };
  auto pool = StoragePool::create(std::move(cfg)).value();
  auto s = pool->acquire(64);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::OutOfMemory);
  EXPECT_EQ(pool->stats().outstanding, 0);
  EXPECT_EQ(pool->stats().allocated, 0);
}

}  // namespace
}  // namespace pixpath
