// ReleaseAction: the one thing a storage does when its last reference goes, as a move-only
// callable (it may own a pool reference, a GL name, a CUDA allocation...). It runs at most
// once: run() empties it. std::move_only_function is C++23, hence this small class.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace pixpath {

class ReleaseAction {
 public:
  ReleaseAction() = default;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, ReleaseAction>>>
  ReleaseAction(F&& f)  // NOLINT: implicit from any callable
      : impl_(std::make_unique<Impl<std::decay_t<F>>>(std::forward<F>(f))) {}
  ReleaseAction(ReleaseAction&&) noexcept = default;
  ReleaseAction& operator=(ReleaseAction&&) noexcept = default;

  explicit operator bool() const { return impl_ != nullptr; }

  // Runs the action once and empties this; a no-op on an empty action.
  void run() {
    if (auto impl = std::move(impl_)) impl->call();
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void call() = 0;
  };
  template <class F>
  struct Impl final : Base {
    explicit Impl(F f) : fn(std::move(f)) {}
    void call() override { fn(); }
    F fn;
  };
  std::unique_ptr<Base> impl_;
};

}  // namespace pixpath
