// The paint engine's GPU-route options, shared by `pixpath play` and `pixpath attach`
// (PaintEngineConfig::gpu_max_batch, gpu_min_pixels, gpu_route_by_measurement):
//   --gpu-batch N             the most jpeg draws one GPU decode call takes (0: auto)
//   --gpu-min-pixels N        smaller jpeg draws are decoded on the CPU (0: none)
//   --gpu-routing measured|size
// Header-only: both commands include CLI11 already, and each file that includes it compiles
// the parser again (CMakeLists.txt says what that costs).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace pixpath::tools {

// Adds the options to `cmd`; parsed values land in the references, which must outlive the
// parse and whose values are shown as the defaults. `gpu_routing` is "measured" or "size".
inline void add_gpu_route_options(CLI::App& cmd, int& gpu_max_batch, int64_t& gpu_min_pixels,
                                  std::string& gpu_routing) {
  cmd.add_option("--gpu-batch", gpu_max_batch,
                 "--decoder gpu/auto: the most jpeg draws one GPU decode call takes (draws "
                 "waiting together share the hardware JPEG engines; 1: one at a time; 0: auto, one "
                 "per hardware engine plus one on the own decoder's route, 2 per engine on nvJPEG's)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd.add_option("--gpu-min-pixels", gpu_min_pixels,
                 "--decoder gpu/auto: a jpeg draw of fewer pixels than this is decoded on the "
                 "CPU, faster for it (straight into the framebuffer when it can); 0: every jpeg "
                 "draw on the GPU")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--gpu-routing", gpu_routing,
                 "--decoder gpu/auto: which jpeg draws from 64x64 to under 1024x1024 take the GPU: "
                 "measured (per size class, whichever route painted such draws sooner lately, "
                 "queue waits included; --gpu-min-pixels until both were measured) or size "
                 "(--gpu-min-pixels alone)")
      ->check(CLI::IsMember({"measured", "size"}))
      ->capture_default_str();
}

}  // namespace pixpath::tools
