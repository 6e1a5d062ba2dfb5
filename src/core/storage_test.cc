#include "pixpath/core/storage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/testing/live_storage_check.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/release_domain.h"

namespace pixpath {
namespace {

using ::testing::HasSubstr;

class StorageTest : public testing::LiveStorageCheck {};

// A sync point that records when it was waited on, into a shared log.
class RecordingSyncPoint : public SyncPoint {
 public:
  explicit RecordingSyncPoint(std::vector<std::string>* log) : log_(log) {}
  Result<void> wait_host() const override {
    log_->push_back("wait");
    return {};
  }
  void* native() const override { return nullptr; }

 private:
  std::vector<std::string>* log_;
};

TEST_F(StorageTest, AllocateHostIsAlignedCountedAndFreed) {
  const auto before = counters();
  {
    auto s = PictureStorage::allocate_host(100);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*s)->data()) % PictureStorage::kHostAlignment, 0u);
    EXPECT_EQ((*s)->size(), 100u);
    EXPECT_EQ((*s)->kind(), MemoryKind::Host);
    EXPECT_EQ((*s)->use_count(), 1);
    EXPECT_FALSE((*s)->shared());
    EXPECT_FALSE((*s)->read_only());
    const auto during = counters();
    EXPECT_EQ(during.of(MemoryKind::Host).live_storages,
              before.of(MemoryKind::Host).live_storages + 1);
    EXPECT_EQ(during.of(MemoryKind::Host).live_bytes, before.of(MemoryKind::Host).live_bytes + 100);
    EXPECT_EQ(during.storages_created, before.storages_created + 1);
  }
  EXPECT_EQ(counters().storages_released, before.storages_released + 1);
}

// The VmFlags line of /proc/self/smaps for the mapping holding `addr` ("" when not found).
std::string vm_flags_of(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(addr);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// Pictures of 4 MiB and up: 2 MiB aligned and advised for transparent huge pages (TurboJPEG
// writes 4K pictures measurably faster into 2 MiB pages); smaller ones stay 64-byte aligned.
TEST_F(StorageTest, AllocateHostAdvisesHugePagesForLargePictures) {
  const size_t bytes = size_t{3840} * 3 * 2160;  // a 4K RGB picture
  auto s = PictureStorage::allocate_host(bytes);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*s)->data()) % (size_t{2} << 20), 0u);
  std::memset((*s)->data(), 0x5A, bytes);  // all of it is ours
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  if (thp) {  // a kernel with THP: the advice is recorded on the mapping ("hg")
    const std::string flags = vm_flags_of((*s)->data());
    EXPECT_THAT(flags, HasSubstr(" hg")) << "no MADV_HUGEPAGE on the picture's mapping";
  } else {
    std::printf("(no transparent huge pages in this kernel: alignment checked only)\n");
  }
  auto small = PictureStorage::allocate_host(1000);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*small)->data()) % PictureStorage::kHostAlignment, 0u);
}

TEST_F(StorageTest, AllocateHostRefusesZeroAndOverflowingSizes) {
  auto zero = PictureStorage::allocate_host(0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code(), ErrorCode::InvalidArgument);
  auto huge = PictureStorage::allocate_host(SIZE_MAX - 3);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), ErrorCode::LimitExceeded);
}

TEST_F(StorageTest, CopiesShareAndTheLastReferenceReleasesOnce) {
  int released = 0;
  static uint8_t bytes[64];
  auto s = PictureStorage::wrap(MemoryLocation::host(), bytes, sizeof bytes, {},
                                [&released] { ++released; });
  ASSERT_TRUE(s.ok());
  StorageRef a = *s;
  EXPECT_EQ(a->use_count(), 2);
  EXPECT_TRUE(a->shared());
  s->reset();
  EXPECT_FALSE(a->shared());
  StorageRef b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_EQ(released, 0);
  b = StorageRef();
  EXPECT_EQ(released, 1);
}

// Regression for the documented failure policy of wrap(): on failure the release has run,
// exactly once (ASan/LSan would flag a leak or a double free of the malloc'd block).
TEST_F(StorageTest, FailedWrapRunsTheReleaseExactlyOnceAndLeavesNothingLive) {
  const auto before = counters();
  struct Case {
    const char* what;
    MemoryLocation where;
    bool null_data;
    size_t bytes;
    bool closed_domain;
  };
  MemoryLocation gl_without_name;
  gl_without_name.kind = MemoryKind::GlTexture;
  const Case cases[] = {
      {"zero bytes", MemoryLocation::host(), false, 0, false},
      {"null data", MemoryLocation::host(), true, 64, false},
      {"GL name", gl_without_name, true, 64, false},
      {"shut down", MemoryLocation::host(), false, 64, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    void* block = std::malloc(64);
    int released = 0;
    std::shared_ptr<ReleaseDomain> domain;
    if (c.closed_domain) {
      domain = ReleaseDomain::for_current_thread("closed");
      ASSERT_TRUE(domain->shutdown().clean());
    }
    auto s = PictureStorage::wrap(c.where, c.null_data ? nullptr : block, c.bytes, {},
                                  [&released, block] {
                                    ++released;
                                    std::free(block);
                                  },
                                  domain);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(released, 1);
    EXPECT_EQ(s.error().code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(s.error().message(), HasSubstr("storage wrap"));
    EXPECT_THAT(s.error().message(), HasSubstr(c.what));
  }
  const auto after = counters();
  EXPECT_EQ(after.storages_created, before.storages_created);
  EXPECT_EQ(after.live_storages(), before.live_storages());
}

TEST_F(StorageTest, ReadOnlyAndExternallyOwnedFlags) {
  static uint8_t bytes[16];
  auto ro = PictureStorage::wrap(MemoryLocation::host(), bytes, 16, {.read_only = true}, [] {});
  ASSERT_TRUE(ro.ok());
  EXPECT_TRUE((*ro)->read_only());
  EXPECT_FALSE((*ro)->shared());
  auto ext =
      PictureStorage::wrap(MemoryLocation::host(), bytes, 16, {.externally_owned = true}, [] {});
  ASSERT_TRUE(ext.ok());
  EXPECT_EQ((*ext)->use_count(), 1);
  EXPECT_TRUE((*ext)->shared());  // someone outside pixpath owns it too
}

TEST_F(StorageTest, IdsAreDistinctAndGenerationChangesOnEveryWrite) {
  auto a = PictureStorage::allocate_host(8).value();
  auto b = PictureStorage::allocate_host(8).value();
  EXPECT_NE(a->id(), b->id());
  const uint64_t g0 = a->generation();
  a->mark_written();
  const uint64_t g1 = a->generation();
  a->mark_written();
  EXPECT_NE(g0, g1);
  EXPECT_NE(g1, a->generation());
}

TEST_F(StorageTest, SyncPointIsWaitedBeforeTheRelease) {
  std::vector<std::string> log;
  static uint8_t bytes[16];
  {
    auto s = PictureStorage::wrap(MemoryLocation::host(), bytes, 16, {},
                                  [&log] { log.push_back("release"); })
                 .value();
    s->set_sync_point(std::make_shared<RecordingSyncPoint>(&log));
    EXPECT_NE(s->sync_point(), nullptr);
  }
  EXPECT_EQ(log, (std::vector<std::string>{"wait", "release"}));
}

TEST_F(StorageTest, WaitReadyWaitsOnceAndClears) {
  std::vector<std::string> log;
  auto s = PictureStorage::allocate_host(16).value();
  s->set_sync_point(std::make_shared<RecordingSyncPoint>(&log));
  ASSERT_TRUE(s->wait_ready().ok());
  EXPECT_EQ(s->sync_point(), nullptr);
  ASSERT_TRUE(s->wait_ready().ok());
  EXPECT_EQ(log.size(), 1u);
}

TEST_F(StorageTest, DeviceMemoryIsCountedUnderItsKind) {
  const auto before = counters();
  MemoryLocation dev;
  dev.kind = MemoryKind::CudaDevice;
  dev.device = 0;
  int released = 0;
  {
    auto s = PictureStorage::wrap(dev, reinterpret_cast<void*>(0x1000), 4096, {},
                                  [&released] { ++released; });
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(counters().of(MemoryKind::CudaDevice).live_storages,
              before.of(MemoryKind::CudaDevice).live_storages + 1);
    EXPECT_EQ(counters().of(MemoryKind::CudaDevice).live_bytes,
              before.of(MemoryKind::CudaDevice).live_bytes + 4096);
    EXPECT_EQ(counters().of(MemoryKind::Host).live_storages,
              before.of(MemoryKind::Host).live_storages);
  }
  EXPECT_EQ(released, 1);
}

}  // namespace
}  // namespace pixpath
