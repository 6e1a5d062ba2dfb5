// StoragePool: recycles equally sized blocks of memory for storages.
//
// acquire() returns a storage whose release action hands the block back to the pool instead
// of freeing it. Every outstanding storage keeps the pool's state alive, so the pool outlives
// its last storage even when its owner drops it first; blocks returned after the owner let go
// are freed. The pool waits for a block's sync point (a pending GPU write) before reuse.
//
// Memory kinds other than host plug in through BlockAllocator (the CUDA module provides device
// and pinned allocators); the pool itself never includes a GPU header.
//
// Threading: acquire() and returns may happen on any threads concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "pixpath/core/memory_kind.h"
#include "pixpath/core/result.h"
#include "pixpath/core/storage.h"

namespace pixpath {

struct BlockAllocator {
  MemoryLocation location = MemoryLocation::host();
  std::function<Result<void*>(size_t bytes)> allocate;  // null: 64-byte-aligned host memory
  std::function<void(void* block, size_t bytes)> free;  // must match allocate
};

struct StoragePoolConfig {
  std::string name = "pool";
  size_t block_bytes = 0;      // every block has this size; acquire() asks for at most this
  size_t max_free_blocks = 8;  // returned blocks kept beyond this are freed
  BlockAllocator allocator;
};

struct StoragePoolStats {
  int64_t outstanding = 0;  // blocks handed out and not yet back
  int64_t free_blocks = 0;  // blocks waiting for reuse
  int64_t allocated = 0;    // blocks ever allocated
  int64_t reused = 0;       // acquires served from the free list
};

class StoragePool {
 public:
  static Result<std::shared_ptr<StoragePool>> create(StoragePoolConfig config);
  ~StoragePool();

  // A writable storage of `bytes` (<= block_bytes) from the pool.
  Result<StorageRef> acquire(size_t bytes);
  StoragePoolStats stats() const;
  size_t block_bytes() const;

  struct State;  // shared with outstanding storages

 private:
  explicit StoragePool(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace pixpath
