#include "cuda_streams.h"

#include <dlfcn.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

namespace pixpath::python {
namespace {

// The CUDA driver API entry points used here (cuda.h's signatures; CUresult is an int).
struct Driver {
  int (*ctx_push)(void* ctx) = nullptr;
  int (*ctx_pop)(void** ctx) = nullptr;
  int (*stream_create)(void** stream, unsigned flags) = nullptr;
  int (*stream_wait_event)(void* stream, void* event, unsigned flags) = nullptr;
  int (*stream_synchronize)(void* stream) = nullptr;
  int (*event_create)(void** event, unsigned flags) = nullptr;
  int (*event_record)(void* event, void* stream) = nullptr;
  int (*event_synchronize)(void* event) = nullptr;
  int (*event_destroy)(void* event) = nullptr;
  bool ok = false;
};

constexpr unsigned kEventBlockingSync = 0x1, kEventDisableTiming = 0x2;  // CU_EVENT_*
constexpr unsigned kStreamNonBlocking = 0x1;                             // CU_STREAM_NON_BLOCKING
constexpr intptr_t kStreamLegacy = 0x1;                                  // CU_STREAM_LEGACY

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return r;
    auto sym = [lib](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    r.ok = sym(r.ctx_push, "cuCtxPushCurrent_v2") && sym(r.ctx_pop, "cuCtxPopCurrent_v2") &&
           sym(r.stream_create, "cuStreamCreate") && sym(r.stream_wait_event, "cuStreamWaitEvent") &&
           sym(r.stream_synchronize, "cuStreamSynchronize") && sym(r.event_create, "cuEventCreate") &&
           sym(r.event_record, "cuEventRecord") && sym(r.event_synchronize, "cuEventSynchronize") &&
           sym(r.event_destroy, "cuEventDestroy_v2");
    return r;
  }();
  return d;
}

// The picture's CUDA context (the device's primary context) current on this thread for the
// scope's life: the deleter and the releaser thread may have none, or another.
class ContextScope {
 public:
  explicit ContextScope(const void* ctx)
      : pushed_(ctx && driver().ok && driver().ctx_push(const_cast<void*>(ctx)) == 0) {}
  ~ContextScope() {
    if (pushed_) {
      void* popped = nullptr;
      (void)driver().ctx_pop(&popped);
    }
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  bool ok() const { return pushed_; }

 private:
  bool pushed_;
};

void* stream_handle(int64_t stream) {
  // 1 (legacy) and 2 (per-thread default, of whichever thread): the legacy default stream, with
  // which every blocking stream of the context, the per-thread ones included, is ordered.
  if (stream == 1 || stream == 2) return reinterpret_cast<void*>(kStreamLegacy);
  return reinterpret_cast<void*>(static_cast<intptr_t>(stream));
}

// One thread that waits for consumers' streams and drops the pictures (see the header).
class Releaser {
 public:
  void add(Picture p, void* event, const void* ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{std::move(p), event, ctx});
    pending_.fetch_add(1);
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();  // lives as long as the process
    }
    cv_.notify_one();
  }
  int64_t pending() const { return pending_.load(); }

 private:
  struct Item {
    Picture picture;
    void* event;
    const void* ctx;
  };
  void run() {
    for (;;) {
      Item it;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !queue_.empty(); });
        it = std::move(queue_.front());
        queue_.pop_front();
      }
      {
        ContextScope scope(it.ctx);
        (void)driver().event_synchronize(it.event);  // a blocking-sync event: no spinning
        (void)driver().event_destroy(it.event);
      }
      it.picture = Picture();  // the storage back to pixpath's pool, after the consumer's work
      pending_.fetch_sub(1);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool started_ = false;
  std::atomic<int64_t> pending_{0};
};

Releaser& releaser() {
  static Releaser* r = new Releaser();  // never destroyed: its thread outlives static destruction
  return *r;
}

Error stream_error(std::string reason) {
  return Error(ErrorCode::InvalidArgument, "picture", "dlpack", std::move(reason));
}

}  // namespace

Result<void> consumer_waits(const Picture& p, int64_t stream) {
  PictureStorage* s = p.plane(0).storage.get();
  auto sync = s->sync_point();
  if (!sync || stream == -1) return ok();  // nothing pending, or the consumer's promise
  if (stream == 0) {
    return stream_error("stream 0 is ambiguous (array API): use 1 (legacy default), 2 (per-thread "
                        "default), a stream handle, or -1");
  }
  if (sync->native()) {
    ContextScope scope(p.location().context);
    if (scope.ok() && driver().stream_wait_event(stream_handle(stream), sync->native(), 0) == 0) return ok();
  }
  return s->wait_ready();
}

Result<std::optional<uintptr_t>> export_stream_after(const Picture& p) {
  PictureStorage* s = p.plane(0).storage.get();
  auto sync = s->sync_point();
  if (!sync) return std::optional<uintptr_t>();
  const void* ctx = p.location().context;
  if (sync->native() && ctx && driver().ok) {
    static std::mutex mu;
    static auto* streams = new std::map<const void*, void*>();  // per context, never destroyed
    ContextScope scope(ctx);
    if (scope.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      void*& stream = (*streams)[ctx];
      if (!stream && driver().stream_create(&stream, kStreamNonBlocking) != 0) stream = nullptr;
      if (stream && driver().stream_wait_event(stream, sync->native(), 0) == 0) {
        return std::optional<uintptr_t>(reinterpret_cast<uintptr_t>(stream));
      }
    }
  }
  PIXPATH_CHECK(s->wait_ready());
  return std::optional<uintptr_t>();
}

void release_after_stream(Picture p, int64_t stream) {
  if (p.empty() || stream == -1 || stream == 0) return;  // dropped here: nothing to order after
  const void* ctx = p.location().context;
  ContextScope scope(ctx);
  if (!scope.ok()) return;
  void* handle = stream_handle(stream);
  void* event = nullptr;
  if (driver().event_create(&event, kEventBlockingSync | kEventDisableTiming) == 0) {
    if (driver().event_record(event, handle) == 0) {
      releaser().add(std::move(p), event, ctx);
      return;
    }
    (void)driver().event_destroy(event);
  }
  (void)driver().stream_synchronize(handle);  // no event: wait here, then drop
}

int64_t pending_stream_releases() { return releaser().pending(); }

}  // namespace pixpath::python
