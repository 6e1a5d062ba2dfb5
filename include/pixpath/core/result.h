// pixpath's one error convention.
//
// Every fallible public function returns Result<T> (or Result<void>), marked [[nodiscard]].
// A failure is an Error that names
//   - the subject: the coding ("jpeg", "rgb24", ...) or the object ("picture", "storage",
//     "xpra") the operation worked on,
//   - the stage: what it was doing ("decode", "inflate", "crop", "parse chunk header", ...),
//   - the reason, in words a user can act on,
// and says whether the result is still usable (Severity::Warning, e.g. a JPEG that ended early
// but decoded) or not (Severity::Fatal). Functions that can succeed with a warning return the
// warning inside their success value (see e.g. DecodeInfo::warnings); an Error inside a failed
// Result is always fatal.
//
// Example message: "jpeg decode: data ends at byte 1200 of 5000 (truncated)".
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace pixpath {

enum class Severity { Warning, Fatal };

enum class ErrorCode {
  InvalidArgument,  // the caller passed something that can never work
  OutOfRange,       // a rectangle, offset or index outside what exists
  LimitExceeded,    // a configured limit (size, memory, count) would be exceeded
  Unsupported,      // valid but not handled (a coding, a format, a memory kind)
  CorruptData,      // input that does not parse
  Truncated,        // input that ends early
  ReadOnly,         // a write was asked of read-only or shared memory
  WrongMemoryKind,  // e.g. a host view of device memory
  OutOfMemory,
  Io,
  Protocol,     // a peer broke the wire protocol
  Unavailable,  // a backend (GPU, GL, a server) is not there
  Cancelled,    // shut down before it ran
  Busy,         // in use right now (e.g. a window a draw is decoding into): asking again can work
  Internal,
};

std::string_view to_string(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string subject, std::string stage, std::string reason,
        Severity severity = Severity::Fatal)
      : code_(code),
        severity_(severity),
        subject_(std::move(subject)),
        stage_(std::move(stage)),
        reason_(std::move(reason)) {}

  ErrorCode code() const { return code_; }
  Severity severity() const { return severity_; }
  bool fatal() const { return severity_ == Severity::Fatal; }
  const std::string& subject() const { return subject_; }
  const std::string& stage() const { return stage_; }
  const std::string& reason() const { return reason_; }

  // "<subject> <stage>: <reason>", with " (warning)" appended to warnings.
  std::string message() const;

  // The same error seen from an outer layer, e.g. a picture error inside a jpeg decode:
  // keeps code and reason, replaces subject and stage, and prefixes the old ones to the reason.
  Error within(std::string subject, std::string stage) const;
  Error as_warning() const;

 private:
  ErrorCode code_;
  Severity severity_;
  std::string subject_;
  std::string stage_;
  std::string reason_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { check(); return std::get<0>(v_); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

  // Precondition: !ok().
  const Error& error() const {
    if (ok()) std::abort();
    return std::get<1>(v_);
  }

 private:
  void check() const {
    if (!ok()) std::abort();  // reading the value of a failed result is a programming error
  }
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    if (!failed_) std::abort();
    return error_;
  }

 private:
  Error error_{ErrorCode::Internal, "", "", ""};
  bool failed_ = false;
};

inline Result<void> ok() { return {}; }

}  // namespace pixpath

// PIXPATH_TRY(auto x, expr): evaluates expr (a Result), returns its error from the enclosing
// function on failure, else binds the value.
#define PIXPATH_CONCAT_INNER(a, b) a##b
#define PIXPATH_CONCAT(a, b) PIXPATH_CONCAT_INNER(a, b)
#define PIXPATH_TRY(decl, expr) PIXPATH_TRY_IMPL(PIXPATH_CONCAT(pixpath_try_, __LINE__), decl, expr)
#define PIXPATH_TRY_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                      \
  if (!tmp.ok()) return tmp.error();      \
  decl = std::move(tmp).value()
// PIXPATH_CHECK(expr): for Result<void>.
#define PIXPATH_CHECK(expr)                                        \
  do {                                                             \
    auto pixpath_check_result_ = (expr);                           \
    if (!pixpath_check_result_.ok()) return pixpath_check_result_.error(); \
  } while (0)
