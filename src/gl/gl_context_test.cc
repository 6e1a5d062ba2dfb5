#include "pixpath/gl/gl_context.h"

#include <epoxy/egl.h>
#include <gtest/gtest.h>

#include "gl/testing/gl_test_util.h"

namespace pixpath::gl {
namespace {

TEST(GlContextTest, ProbeListsEglPlatforms) {
  // An eglinfo-like probe: which EGL platforms and devices this machine can open.
  auto lines = GlContext::probe();
  ASSERT_FALSE(lines.empty());
  for (const auto& l : lines) std::printf("  %s\n", l.c_str());
}

TEST(GlContextTest, AutomaticContextIsGl33CoreOrGles3) {
  std::shared_ptr<GlContext> ctx;
  testing::make_test_context(&ctx);
  if (!ctx) return;
  const auto& caps = ctx->caps();
  EXPECT_TRUE(caps.gles ? caps.version >= 30 : caps.version >= 33) << caps.version;
  EXPECT_FALSE(ctx->info().renderer.empty());
  EXPECT_NE(ctx->egl_context(), nullptr);
  std::printf("caps: gles=%d version=%d buffer_storage=%d copy_image=%d timer_query=%d bgra=%d\n",
              caps.gles, caps.version, caps.buffer_storage, caps.copy_image, caps.timer_query,
              caps.bgra_upload);
  // The release domain is current on the GL thread.
  EXPECT_TRUE(ctx->release_domain()->is_current());
}

TEST(GlContextTest, SurfacelessPlatform) {
  if (!epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless")) {
    GTEST_SKIP() << "EGL_MESA_platform_surfaceless not offered (not Mesa)";
  }
  GlContextOptions o;
  o.platform = GlPlatform::Surfaceless;
  auto ctx = GlContext::create(o);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message();
  EXPECT_EQ((*ctx)->info().platform, GlPlatform::Surfaceless);
  std::printf("surfaceless renderer: %s\n", (*ctx)->info().renderer.c_str());
}

TEST(GlContextTest, DevicePlatform) {
  if (!epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_platform_device")) {
    GTEST_SKIP() << "EGL_EXT_platform_device not offered";
  }
  GlContextOptions o;
  o.platform = GlPlatform::Device;
  auto ctx = GlContext::create(o);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message();
  const auto& i = (*ctx)->info();
  EXPECT_EQ(i.platform, GlPlatform::Device);
  EXPECT_GE(i.egl_device_index, 0);
  std::printf("device platform: EGL device %d, CUDA device %d, renderer %s\n", i.egl_device_index,
              i.cuda_device, i.renderer.c_str());
}

TEST(GlContextTest, MissingDeviceIsUnavailable) {
  GlContextOptions o;
  o.platform = GlPlatform::Device;
  o.egl_device_index = 1000;
  auto ctx = GlContext::create(o);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.error().code(), ErrorCode::Unavailable);
}

TEST(GlContextTest, ForcedGles) {
  GlContextOptions o;
  o.force_gles = true;
  std::shared_ptr<GlContext> ctx;
  testing::make_test_context(&ctx, o);
  if (!ctx) return;
  EXPECT_TRUE(ctx->caps().gles);
  std::printf("GLES: %s\n", ctx->info().version.c_str());
}

}  // namespace
}  // namespace pixpath::gl
