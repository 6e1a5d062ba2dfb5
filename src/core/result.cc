#include "pixpath/core/result.h"

namespace pixpath {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::OutOfRange: return "out of range";
    case ErrorCode::LimitExceeded: return "limit exceeded";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::CorruptData: return "corrupt data";
    case ErrorCode::Truncated: return "truncated";
    case ErrorCode::ReadOnly: return "read-only";
    case ErrorCode::WrongMemoryKind: return "wrong memory kind";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::Io: return "i/o";
    case ErrorCode::Protocol: return "protocol";
    case ErrorCode::Unavailable: return "unavailable";
    case ErrorCode::Cancelled: return "cancelled";
    case ErrorCode::Busy: return "busy";
    case ErrorCode::Internal: return "internal";
  }
  return "unknown";
}

std::string Error::message() const {
  std::string m = subject_;
  if (!stage_.empty()) {
    if (!m.empty()) m += ' ';
    m += stage_;
  }
  m += ": ";
  m += reason_;
  if (severity_ == Severity::Warning) m += " (warning)";
  return m;
}

Error Error::within(std::string subject, std::string stage) const {
  std::string inner = subject_;
  if (!stage_.empty()) inner += (inner.empty() ? "" : " ") + stage_;
  return Error(code_, std::move(subject), std::move(stage),
               inner.empty() ? reason_ : inner + ": " + reason_, severity_);
}

Error Error::as_warning() const {
  return Error(code_, subject_, stage_, reason_, Severity::Warning);
}

}  // namespace pixpath
