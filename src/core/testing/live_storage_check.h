// Test support for src/core tests: a fixture that fails a test which leaves storages alive.
// Every core test derives from LiveStorageCheck, so "no leak" is checked after each one
// (counters().live_storages and live_bytes per memory kind back to where the test began).
#pragma once

#include <gtest/gtest.h>

#include "pixpath/core/counters.h"
#include "pixpath/core/memory_kind.h"

namespace pixpath::testing {

class LiveStorageCheck : public ::testing::Test {
 protected:
  void SetUp() override { baseline_ = counters(); }
  void TearDown() override {
    const CounterSnapshot now = counters();
    for (int k = 0; k < kMemoryKindCount; ++k) {
      const auto kind = static_cast<MemoryKind>(k);
      EXPECT_EQ(now.of(kind).live_storages, baseline_.of(kind).live_storages)
          << "live " << to_string(kind) << " storages after the test";
      EXPECT_EQ(now.of(kind).live_bytes, baseline_.of(kind).live_bytes)
          << "live " << to_string(kind) << " bytes after the test";
    }
  }
  CounterSnapshot baseline_;
};

}  // namespace pixpath::testing
