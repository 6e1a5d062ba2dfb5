// The loader on any machine: a missing module is a clear Unavailable error, never a crash.
#include <gtest/gtest.h>

#include "pixpath/cuda/gpu_jpeg.h"

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

TEST(GpuJpegLoader, BackendNames) {
  EXPECT_EQ(to_string(GpuBackend::GpuHybrid), "gpu_hybrid");
  EXPECT_EQ(to_string(GpuBackend::Hardware), "hardware");
}

}  // namespace
}  // namespace pixpath::cuda
