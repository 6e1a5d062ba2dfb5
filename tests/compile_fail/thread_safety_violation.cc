// Must NOT compile under clang with pixpath's flags: it writes a PIXPATH_GUARDED_BY member
// without holding its mutex. cmake/PixpathOptions.cmake builds it at configure time with clang
// (CMakeLists.txt here, through the real pixpath_flags) and stops if it compiles, or if it
// fails for any other reason than the lock contract: then -Werror=thread-safety is no longer
// in effect and lock annotations would silently go unchecked.
#include "pixpath/core/thread_annotations.h"

namespace {

class Counter {
 public:
  void add_locked() {
    pixpath::MutexLock lock(mu_);
    ++value_;  // fine: mu_ is held
  }
  void add_unlocked() { ++value_; }  // the violation the check expects to be refused

 private:
  pixpath::Mutex mu_;
  int value_ PIXPATH_GUARDED_BY(mu_) = 0;
};

}  // namespace

int pixpath_thread_safety_violation() {
  Counter c;
  c.add_locked();
  c.add_unlocked();
  return 0;
}
