// A CPU backing whose windows claim to be textures (texture name = 1000 + wid), for the paint
// engine's GPU route without a GPU: every call goes to the CpuBacking inside (`cpu`, whose
// snapshots the tests read), and texture_written() is counted (`written`).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "pixpath/paint/backing.h"
#include "pixpath/paint/cpu_backing.h"

namespace pixpath::paint::testing {

class FakeTextureBacking final : public Backing {
 public:
  std::string_view name() const override { return "fake-gl"; }
  PixelFormat format() const override { return cpu.format(); }
  Result<void> create_window(int64_t wid, int w, int h) override { return cpu.create_window(wid, w, h); }
  Result<void> resize_window(int64_t wid, int w, int h) override { return cpu.resize_window(wid, w, h); }
  Result<void> destroy_window(int64_t wid) override { return cpu.destroy_window(wid); }
  std::optional<Size> window_size(int64_t wid) const override { return cpu.window_size(wid); }
  std::vector<int64_t> windows() const override { return cpu.windows(); }
  Result<DirectTarget> begin_direct(int64_t wid, Rect r) override { return cpu.begin_direct(wid, r); }
  Result<void> end_direct(DirectTarget t, bool done) override { return cpu.end_direct(t, done); }
  Result<void> paint(int64_t wid, int x, int y, const Picture& p, int w, int h) override {
    return cpu.paint(wid, x, y, p, w, h);
  }
  Result<void> paint_yuv(int64_t wid, int x, int y, const Picture& p, codecs::VideoColor c,
                         int w, int h) override {
    return cpu.paint_yuv(wid, x, y, p, c, w, h);
  }
  Result<void> scroll(int64_t wid, std::span<const ScrollRect> r) override { return cpu.scroll(wid, r); }
  Result<Picture> snapshot(int64_t wid) override { return cpu.snapshot(wid); }
  bool has_window_textures() const override { return true; }
  std::optional<WindowTexture> window_texture(int64_t wid) override {
    auto s = cpu.window_size(wid);
    if (!s) return std::nullopt;
    return WindowTexture{uint32_t(1000 + wid), s->w, s->h};
  }
  Result<void> texture_written(int64_t, Rect) override {
    ++written;
    return ok();
  }

  CpuBacking cpu;
  int written = 0;  // texture_written() calls
};

}  // namespace pixpath::paint::testing
