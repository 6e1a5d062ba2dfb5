#include "pixpath/core/release_domain.h"

#include <cstdlib>
#include <string>

#include "internal/counters_internal.h"
#include "pixpath/core/storage.h"

namespace pixpath {
namespace {
// The domains made current on this thread by live Scopes, innermost last.
thread_local const ReleaseDomain* t_scope_domains[16];
thread_local int t_scope_depth = 0;
}  // namespace

ReleaseDomain::ReleaseDomain(std::string name, std::thread::id owner, const void* context)
    : name_(std::move(name)), owner_(owner), context_(context) {}

std::shared_ptr<ReleaseDomain> ReleaseDomain::for_current_thread(std::string name) {
  return std::shared_ptr<ReleaseDomain>(
      new ReleaseDomain(std::move(name), std::this_thread::get_id(), nullptr));
}

std::shared_ptr<ReleaseDomain> ReleaseDomain::for_context(std::string name, const void* context) {
  return std::shared_ptr<ReleaseDomain>(new ReleaseDomain(std::move(name), {}, context));
}

// Queued storages hold a shared_ptr to their domain, so a domain with a non-empty queue is
// never destroyed: what nobody drains stays visible in pending() and the live counters.
ReleaseDomain::~ReleaseDomain() = default;

ReleaseDomain::Scope::Scope(ReleaseDomain& domain) : domain_(&domain) {
  if (t_scope_depth >= 16) std::abort();  // nesting this deep is a programming error
  t_scope_domains[t_scope_depth++] = domain_;
}

ReleaseDomain::Scope::~Scope() { --t_scope_depth; }

bool ReleaseDomain::is_current() const {
  if (owner_ != std::thread::id() && owner_ == std::this_thread::get_id()) return true;
  for (int i = 0; i < t_scope_depth; ++i) {
    if (t_scope_domains[i] == this) return true;
  }
  return false;
}

void ReleaseDomain::set_wakeup(std::function<void()> wakeup) {
  MutexLock lock(mutex_);
  wakeup_ = std::move(wakeup);
}

void ReleaseDomain::enqueue(PictureStorage* storage) {
  std::function<void()> wake;
  bool closed;
  {
    MutexLock lock(mutex_);
    closed = closed_;
    if (!closed) {
      internal::count_deferred_release();
      queue_.push_back(storage);
      if (queue_.size() == 1) wake = wakeup_;
    }
  }
  if (closed) {
    // Never run a release in the wrong place: drop the storage without running its release
    // (whatever it would have freed stays allocated), visibly. Outside the lock: destroying
    // the unrun release may drop another storage of this domain, which comes back here.
    storage->abandon();
    return;
  }
  if (wake) wake();
}

Result<int64_t> ReleaseDomain::drain() {
  if (!is_current()) {
    return Error(ErrorCode::InvalidArgument, "release domain", "drain",
                 "'" + name_ + "' drained where it is not current");
  }
  std::vector<PictureStorage*> batch;
  {
    MutexLock lock(mutex_);
    batch.swap(queue_);
  }
  // A release may drop the last reference to another storage of this domain: it then runs
  // inline (we are current), never re-entering the lock above.
  for (auto* s : batch) s->release_now();
  return static_cast<int64_t>(batch.size());
}

int64_t ReleaseDomain::pending() const {
  MutexLock lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

bool ReleaseDomain::closed() const {
  MutexLock lock(mutex_);
  return closed_;
}

ReleaseDomainReport ReleaseDomain::shutdown() {
  ReleaseDomainReport report;
  if (!is_current()) {
    // Nothing may run here: report what is queued and leave it for a shutdown where current.
    MutexLock lock(mutex_);
    for (auto* s : queue_) {
      report.unreleased.push_back("storage #" + std::to_string(s->id()) + " (" +
                                  std::string(to_string(s->kind())) + ", " +
                                  std::to_string(s->size()) + " bytes): shutdown of '" + name_ +
                                  "' called where it is not current");
    }
    return report;
  }
  // Close only once the queue is empty: a release may let go of another storage of this
  // domain (it then runs inline, as we are current and still open), and other threads may
  // still be queueing until the moment we close.
  for (;;) {
    std::vector<PictureStorage*> batch;
    {
      MutexLock lock(mutex_);
      if (queue_.empty()) {
        closed_ = true;
        break;
      }
      batch.swap(queue_);
    }
    for (auto* s : batch) s->release_now();
    report.released += static_cast<int64_t>(batch.size());
  }
  return report;
}

}  // namespace pixpath
