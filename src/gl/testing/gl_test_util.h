// Helpers for the GL tests: a context for the platform the environment asks for
// (PIXPATH_GL_PLATFORM=surfaceless|device|x11; default: automatic, i.e. the EGL device platform
// on NVIDIA and Mesa's surfaceless platform elsewhere), skipping visibly only when no EGL
// display can be created at all.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "pixpath/gl/gl_context.h"

namespace pixpath::gl::testing {

// Sets *out to a context, or to null after GTEST_SKIP / a failure (callers return then).
inline void make_test_context(std::shared_ptr<GlContext>* out, GlContextOptions options = {}) {
  *out = nullptr;
  auto ctx = GlContext::create(options);
  if (!ctx.ok()) {
    // A platform forced through the environment must work: fail, never skip.
    if (options.platform == GlPlatform::Auto && ctx.error().code() == ErrorCode::Unavailable &&
        !std::getenv("PIXPATH_GL_PLATFORM")) {
      // Only skip when no EGL display works at all; a broken platform that exists is a failure.
      auto fallback = GlContext::create(GlContextOptions{});
      if (!fallback.ok()) GTEST_SKIP() << "no EGL display can be created: " << ctx.error().message();
    }
    FAIL() << ctx.error().message();
  }
  *out = *ctx;
  static bool printed = false;
  if (!printed) {
    printed = true;
    const auto& i = (*out)->info();
    std::printf("GL: platform %s, renderer \"%s\", version \"%s\", EGL vendor \"%s\"\n",
                std::string(to_string(i.platform)).c_str(), i.renderer.c_str(), i.version.c_str(),
                i.egl_vendor.c_str());
  }
}

}  // namespace pixpath::gl::testing
