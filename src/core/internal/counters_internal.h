// The writers' side of counters.h.
#pragma once

#include <cstdint>

#include "pixpath/core/memory_kind.h"

namespace pixpath::internal {

void count_storage_created(MemoryKind kind, int64_t bytes);
void count_storage_released(MemoryKind kind, int64_t bytes);
void count_deferred_release();
void count_unreleased();

}  // namespace pixpath::internal
