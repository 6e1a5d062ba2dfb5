#include "pixpath/core/counters.h"

#include <atomic>

#include "internal/counters_internal.h"

namespace pixpath {
namespace {

struct Counters {
  std::atomic<int64_t> live_storages[kMemoryKindCount]{};
  std::atomic<int64_t> live_bytes[kMemoryKindCount]{};
  std::atomic<int64_t> created{0}, released{0}, copies{0}, copy_bytes{0}, deferred{0},
      unreleased{0};
};
Counters& g() {
  static Counters c;
  return c;
}
constexpr auto kRelaxed = std::memory_order_relaxed;

}  // namespace

int64_t CounterSnapshot::live_storages() const {
  int64_t n = 0;
  for (const auto& k : kinds) n += k.live_storages;
  return n;
}
int64_t CounterSnapshot::live_bytes() const {
  int64_t n = 0;
  for (const auto& k : kinds) n += k.live_bytes;
  return n;
}

CounterSnapshot counters() {
  CounterSnapshot s;
  auto& c = g();
  for (int i = 0; i < kMemoryKindCount; ++i) {
    s.kinds[static_cast<size_t>(i)] = {c.live_storages[i].load(kRelaxed),
                                       c.live_bytes[i].load(kRelaxed)};
  }
  s.storages_created = c.created.load(kRelaxed);
  s.storages_released = c.released.load(kRelaxed);
  s.copies = c.copies.load(kRelaxed);
  s.copy_bytes = c.copy_bytes.load(kRelaxed);
  s.deferred_releases = c.deferred.load(kRelaxed);
  s.unreleased = c.unreleased.load(kRelaxed);
  return s;
}

void count_copy(int64_t bytes) {
  g().copies.fetch_add(1, kRelaxed);
  g().copy_bytes.fetch_add(bytes, kRelaxed);
}

namespace internal {
void count_storage_created(MemoryKind kind, int64_t bytes) {
  auto i = static_cast<size_t>(kind);
  g().live_storages[i].fetch_add(1, kRelaxed);
  g().live_bytes[i].fetch_add(bytes, kRelaxed);
  g().created.fetch_add(1, kRelaxed);
}
void count_storage_released(MemoryKind kind, int64_t bytes) {
  auto i = static_cast<size_t>(kind);
  g().live_storages[i].fetch_sub(1, kRelaxed);
  g().live_bytes[i].fetch_sub(bytes, kRelaxed);
  g().released.fetch_add(1, kRelaxed);
}
void count_deferred_release() { g().deferred.fetch_add(1, kRelaxed); }
void count_unreleased() { g().unreleased.fetch_add(1, kRelaxed); }
}  // namespace internal

}  // namespace pixpath
