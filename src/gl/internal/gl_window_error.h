// The GL window's errors (gl_window.cc, gl_window_upload.cc): subject "gl window", the stage
// ("create", "paint", "readback"...) and the reason; GL and EGL codes in hex.
#pragma once

#include <cstdio>
#include <string>

#include "pixpath/core/result.h"

namespace pixpath::gl::internal {

inline Error gl_error(std::string stage, std::string reason,
                      ErrorCode code = ErrorCode::InvalidArgument) {
  return Error(code, "gl window", std::move(stage), std::move(reason));
}

inline std::string hex(long v) {
  char s[32];
  std::snprintf(s, sizeof s, "0x%lx", v);
  return s;
}

}  // namespace pixpath::gl::internal
