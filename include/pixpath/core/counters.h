// Process-wide counters that make "zero-copy" and "no leak" measurable: live storages and
// bytes by memory kind, pixel copies made (count and bytes), deferred and unreleased releases.
// Tests and benchmarks read a snapshot before and after the work and compare.
// Threading: all counters are atomics; snapshot() may be called from any thread (the fields
// of one snapshot are read one after another, not as one atomic whole).
#pragma once

#include <array>
#include <cstdint>

#include "pixpath/core/memory_kind.h"

namespace pixpath {

struct CounterSnapshot {
  struct PerKind {
    int64_t live_storages = 0;
    int64_t live_bytes = 0;
  };
  std::array<PerKind, kMemoryKindCount> kinds{};
  int64_t storages_created = 0;
  int64_t storages_released = 0;
  int64_t copies = 0;        // pixel copies: copy, convert, merge, scale, copy-on-write
  int64_t copy_bytes = 0;    // bytes written by those copies
  int64_t deferred_releases = 0;  // releases queued to another release domain
  int64_t unreleased = 0;    // releases dropped after their domain shut down (leaked on purpose)

  const PerKind& of(MemoryKind k) const { return kinds[static_cast<size_t>(k)]; }
  int64_t live_storages() const;
  int64_t live_bytes() const;
};

CounterSnapshot counters();

// Modules that copy pixels outside core (a backing's upload, a decoder's fallback) count here.
void count_copy(int64_t bytes);

}  // namespace pixpath
