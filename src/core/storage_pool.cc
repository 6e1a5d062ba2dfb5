#include "pixpath/core/storage_pool.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "internal/host_memory.h"
#include "pixpath/core/thread_annotations.h"

namespace pixpath {

struct StoragePool::State {
  StoragePoolConfig config;
  Mutex mutex;
  std::vector<void*> free_list PIXPATH_GUARDED_BY(mutex);
  bool owner_gone PIXPATH_GUARDED_BY(mutex) = false;
  int64_t outstanding PIXPATH_GUARDED_BY(mutex) = 0;
  int64_t allocated PIXPATH_GUARDED_BY(mutex) = 0;
  int64_t reused PIXPATH_GUARDED_BY(mutex) = 0;

  Result<void*> allocate_block() {
    if (config.allocator.allocate) return config.allocator.allocate(config.block_bytes);
    const size_t a = PictureStorage::kHostAlignment;
    void* p = internal::allocate_host_block((config.block_bytes + a - 1) & ~(a - 1));
    if (!p) {
      return Error(ErrorCode::OutOfMemory, "storage pool", "allocate",
                   "'" + config.name + "': cannot allocate a block of " +
                       std::to_string(config.block_bytes) + " bytes");
    }
    return p;
  }
  void free_block(void* p) {
    if (config.allocator.free) {
      config.allocator.free(p, config.block_bytes);
    } else {
      std::free(p);
    }
  }
  // The release action of every pooled storage: back to the free list, or freed when the
  // pool's owner is gone or the free list is full.
  void give_back(void* p) {
    bool keep;
    {
      MutexLock lock(mutex);
      --outstanding;
      keep = !owner_gone && free_list.size() < config.max_free_blocks;
      if (keep) free_list.push_back(p);
    }
    if (!keep) free_block(p);
  }
};

StoragePool::StoragePool(std::shared_ptr<State> state) : state_(std::move(state)) {}

StoragePool::~StoragePool() {
  std::vector<void*> blocks;
  {
    MutexLock lock(state_->mutex);
    state_->owner_gone = true;
    blocks.swap(state_->free_list);
  }
  for (void* p : blocks) state_->free_block(p);
  // Outstanding storages keep state_ alive and free their blocks when they come back.
}

Result<std::shared_ptr<StoragePool>> StoragePool::create(StoragePoolConfig config) {
  if (config.block_bytes == 0) {
    return Error(ErrorCode::InvalidArgument, "storage pool", "create",
                 "'" + config.name + "': block size is zero");
  }
  if (static_cast<bool>(config.allocator.allocate) != static_cast<bool>(config.allocator.free)) {
    return Error(ErrorCode::InvalidArgument, "storage pool", "create",
                 "'" + config.name + "': allocator needs both allocate and free");
  }
  if (!config.allocator.allocate && config.allocator.location.kind != MemoryKind::Host) {
    return Error(ErrorCode::InvalidArgument, "storage pool", "create",
                 "'" + config.name + "': memory kind " +
                     std::string(to_string(config.allocator.location.kind)) +
                     " needs an allocator");
  }
  auto state = std::make_shared<State>();
  state->config = std::move(config);
  return std::shared_ptr<StoragePool>(new StoragePool(std::move(state)));
}

Result<StorageRef> StoragePool::acquire(size_t bytes) {
  auto& st = *state_;
  if (bytes == 0 || bytes > st.config.block_bytes) {
    return Error(ErrorCode::InvalidArgument, "storage pool", "acquire",
                 "'" + st.config.name + "': " + std::to_string(bytes) +
                     " bytes asked of a pool of " + std::to_string(st.config.block_bytes) +
                     "-byte blocks");
  }
  void* block = nullptr;
  {
    MutexLock lock(st.mutex);
    if (!st.free_list.empty()) {
      block = st.free_list.back();
      st.free_list.pop_back();
      ++st.reused;
    }
    ++st.outstanding;
  }
  if (!block) {
    auto allocated = st.allocate_block();
    if (!allocated.ok()) {
      MutexLock lock(st.mutex);
      --st.outstanding;
      return allocated.error();
    }
    block = *allocated;
    MutexLock lock(st.mutex);
    ++st.allocated;
  }
  // The release action owns a reference to the state: the pool outlives its storages.
  std::shared_ptr<State> keep = state_;
  return PictureStorage::wrap(st.config.allocator.location, block, bytes, {},
                              ReleaseAction([keep = std::move(keep), block] {
                                keep->give_back(block);
                              }));
}

StoragePoolStats StoragePool::stats() const {
  MutexLock lock(state_->mutex);
  return {state_->outstanding, static_cast<int64_t>(state_->free_list.size()),
          state_->allocated, state_->reused};
}

size_t StoragePool::block_bytes() const { return state_->config.block_bytes; }

}  // namespace pixpath
