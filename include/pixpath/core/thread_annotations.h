// Clang thread-safety annotations (checked with -Wthread-safety under clang, no-ops elsewhere),
// and a Mutex that carries them: lock contracts are written where they apply and the compiler
// checks them.
#pragma once

#include <mutex>

#if defined(__clang__)
#define PIXPATH_TSA(x) __attribute__((x))
#else
#define PIXPATH_TSA(x)
#endif

#define PIXPATH_CAPABILITY(x) PIXPATH_TSA(capability(x))
#define PIXPATH_SCOPED_CAPABILITY PIXPATH_TSA(scoped_lockable)
#define PIXPATH_GUARDED_BY(x) PIXPATH_TSA(guarded_by(x))
#define PIXPATH_REQUIRES(...) PIXPATH_TSA(requires_capability(__VA_ARGS__))
#define PIXPATH_ACQUIRE(...) PIXPATH_TSA(acquire_capability(__VA_ARGS__))
#define PIXPATH_RELEASE(...) PIXPATH_TSA(release_capability(__VA_ARGS__))
#define PIXPATH_EXCLUDES(...) PIXPATH_TSA(locks_excluded(__VA_ARGS__))
// Turns the check off for one function (or lambda) whose locking clang cannot follow, e.g. a
// lock taken conditionally inside a callback; say why where it is used.
#define PIXPATH_NO_THREAD_SAFETY_ANALYSIS PIXPATH_TSA(no_thread_safety_analysis)

namespace pixpath {

class PIXPATH_CAPABILITY("mutex") Mutex {
 public:
  void lock() PIXPATH_ACQUIRE() { m_.lock(); }
  void unlock() PIXPATH_RELEASE() { m_.unlock(); }
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

class PIXPATH_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) PIXPATH_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~MutexLock() PIXPATH_RELEASE() { m_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& m_;
};

// A capability that no lock stands for: "running as this thread" (a thread role). Data that one
// thread alone touches is PIXPATH_GUARDED_BY(the role); that thread's loop holds the role for its
// whole life (ScopedRole) and the functions it calls that touch the data say
// PIXPATH_REQUIRES(role), so clang checks that nothing else reaches the data. Another thread may
// take the role only while the owner cannot run (before it starts, after it was joined); say so
// where it does.
class PIXPATH_CAPABILITY("role") ThreadRole {
 public:
  void acquire() PIXPATH_ACQUIRE() {}
  void release() PIXPATH_RELEASE() {}
};

class PIXPATH_SCOPED_CAPABILITY ScopedRole {
 public:
  explicit ScopedRole(ThreadRole& r) PIXPATH_ACQUIRE(r) : r_(r) { r_.acquire(); }
  ~ScopedRole() PIXPATH_RELEASE() { r_.release(); }
  ScopedRole(const ScopedRole&) = delete;
  ScopedRole& operator=(const ScopedRole&) = delete;

 private:
  ThreadRole& r_;
};

}  // namespace pixpath
