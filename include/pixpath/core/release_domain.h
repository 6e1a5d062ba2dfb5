// ReleaseDomain: where a storage's release must run.
//
// Some memory may only be freed in one place: a GL buffer in the thread whose context is
// current, a CUDA allocation with its context pushed. A storage created with a domain runs
// its release inline when its last reference drops where the domain is *current*; anywhere
// else it is queued to the domain — never a blocking hop to the owner (that is how GL
// marshalling deadlocks) — and the owner runs the queue with drain(), e.g. once per paint loop
// iteration. An optional wake-up callback tells the owner that work arrived.
//
// Current means: for a thread domain, the calling thread is the one that created it; for any
// domain, a ReleaseDomain::Scope for it is alive on the calling thread (e.g. while the GL or
// CUDA context is current there).
//
// Shutdown: shutdown(), where the domain is current, runs every queued release and closes the
// domain. Called anywhere else it runs nothing, closes nothing and reports exactly which
// storages are still waiting. A storage dropped after shutdown is not released (running its
// release in the wrong place would be worse): it is counted as unreleased
// (counters().unreleased) and whatever its release would have freed stays allocated.
//
// Threading: enqueue (dropping a reference) is safe from any thread; drain() and shutdown()
// run on the owner, where the domain is current. Lifetime: storages hold a shared_ptr to
// their domain, so the domain object outlives every storage bound to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"

namespace pixpath {

class PictureStorage;

struct ReleaseDomainReport {
  int64_t released = 0;                  // releases run by this shutdown
  std::vector<std::string> unreleased;   // one line per storage it could not release
  bool clean() const { return unreleased.empty(); }
};

class ReleaseDomain : public std::enable_shared_from_this<ReleaseDomain> {
 public:
  // A domain owned by the calling thread (e.g. the UI thread).
  static std::shared_ptr<ReleaseDomain> for_current_thread(std::string name);
  // A domain that is current only inside a Scope (e.g. a GPU context): `context` is opaque.
  static std::shared_ptr<ReleaseDomain> for_context(std::string name, const void* context);

  ~ReleaseDomain();
  ReleaseDomain(const ReleaseDomain&) = delete;
  ReleaseDomain& operator=(const ReleaseDomain&) = delete;

  // Makes `domain` current on this thread for the Scope's lifetime. Scopes nest.
  class Scope {
   public:
    explicit Scope(ReleaseDomain& domain);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ReleaseDomain* domain_;
  };

  const std::string& name() const { return name_; }
  const void* context() const { return context_; }
  bool is_current() const;

  // Called (on the dropping thread, without locks held) when the queue goes from empty to
  // non-empty, so the owner can schedule a drain. Must not block. Set before use.
  void set_wakeup(std::function<void()> wakeup) PIXPATH_EXCLUDES(mutex_);

  // Runs every queued release. Fails (running nothing) where the domain is not current.
  Result<int64_t> drain() PIXPATH_EXCLUDES(mutex_);
  int64_t pending() const PIXPATH_EXCLUDES(mutex_);

  // Where current: runs every queued release and closes. Elsewhere: runs nothing, stays open,
  // and lists every queued storage as unreleased.
  ReleaseDomainReport shutdown() PIXPATH_EXCLUDES(mutex_);
  bool closed() const PIXPATH_EXCLUDES(mutex_);

 private:
  friend class PictureStorage;
  ReleaseDomain(std::string name, std::thread::id owner, const void* context);
  // Queues a storage whose last reference dropped elsewhere. Takes ownership of it.
  void enqueue(PictureStorage* storage) PIXPATH_EXCLUDES(mutex_);

  std::string name_;
  std::thread::id owner_;  // default id: no owning thread (context domain)
  const void* context_;
  mutable Mutex mutex_;
  std::vector<PictureStorage*> queue_ PIXPATH_GUARDED_BY(mutex_);
  bool closed_ PIXPATH_GUARDED_BY(mutex_) = false;
  std::function<void()> wakeup_ PIXPATH_GUARDED_BY(mutex_);
};

}  // namespace pixpath
