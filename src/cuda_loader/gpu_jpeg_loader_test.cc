// The loader on any machine: a missing module is a clear Unavailable error, never a crash.
#include <gtest/gtest.h>

#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::cuda {
namespace {

TEST(GpuJpegLoader, MissingModuleIsUnavailable) {
  GpuDecoderOptions o;
  o.module_path = "/nonexistent/libpixpath_cuda.so";
  auto d = GpuJpegDecoder::create(o);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code(), ErrorCode::Unavailable);
  EXPECT_NE(d.error().reason().find("/nonexistent/libpixpath_cuda.so"), std::string::npos)
      << d.error().message();
  EXPECT_NE(d.error().reason().find("libnvjpeg"), std::string::npos) << d.error().message();
}

TEST(GpuJpegLoader, InfoWithoutModuleIsUnavailable) {
  GpuDecoderOptions o;
  o.module_path = "/nonexistent/libpixpath_cuda.so";
  auto j = gpu_info_json(o);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code(), ErrorCode::Unavailable);
}

// The paint engine's factory over the loader: where the module cannot be had, the engine's
// gpu choice fails with the loader's reason (on a GPU machine with the module, it succeeds).
TEST(GpuJpegLoader, EngineFactoryCarriesTheLoaderReason) {
  GpuDecoderOptions o;
  o.module_path = "/nonexistent/libpixpath_cuda.so";
  auto made = gpu_draw_decoder_factory(o)();
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().code(), ErrorCode::Unavailable);
  paint::CpuBacking backing;
  paint::PaintEngineConfig c;
  c.decoder = paint::DecoderChoice::Gpu;
  c.gpu_factory = gpu_draw_decoder_factory(o);
  auto e = paint::PaintEngine::create(backing, c);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code(), ErrorCode::Unavailable);
  EXPECT_NE(e.error().message().find(made.error().reason()), std::string::npos) << e.error().message();
}

TEST(GpuJpegLoader, BackendNames) {
  EXPECT_EQ(to_string(GpuBackend::GpuHybrid), "gpu_hybrid");
  EXPECT_EQ(to_string(GpuBackend::Hardware), "hardware");
}

}  // namespace
}  // namespace pixpath::cuda
