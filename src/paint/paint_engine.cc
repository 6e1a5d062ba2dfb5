#include "pixpath/paint/paint_engine.h"

#include <algorithm>

#include "internal/draw_decoding.h"
#include "internal/paint_engine_impl.h"
#include "pixpath/codecs/registry.h"

namespace pixpath::paint {

namespace internal {

bool gpu_codable(const DrawPacket& p) {
  if (p.coding != "jpeg" && p.coding != "jpega") return false;
  if (p.coding == "jpega" && !p.options.alpha_offset) return false;
  return !p.options.delta && !p.options.store && p.options.paint && !internal::is_scaled(p) &&
         p.w > 0 && p.h > 0;
}

}  // namespace internal

namespace {

using internal::Clock;
using internal::gpu_codable;
using internal::GpuMode;
using internal::Item;
using internal::Kind;
using internal::Route;
using internal::State;

}  // namespace

std::string_view to_string(DecoderChoice choice) {
  switch (choice) {
    case DecoderChoice::Cpu: return "cpu";
    case DecoderChoice::Gpu: return "gpu";
    case DecoderChoice::Auto: return "auto";
  }
  return "?";
}

Result<DecoderChoice> parse_decoder_choice(std::string_view text) {
  if (text == "cpu") return DecoderChoice::Cpu;
  if (text == "gpu") return DecoderChoice::Gpu;
  if (text == "auto") return DecoderChoice::Auto;
  return Error(ErrorCode::InvalidArgument, "decoder", "parse",
               "'" + std::string(text) + "' is not cpu, gpu or auto");
}

DecoderLookup builtin_decoders() {
  return [](std::string_view coding) { return codecs::CodecRegistry::builtin().decoder(coding); };
}

PaintEngine::PaintEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PaintEngine::~PaintEngine() { impl_->shutdown(); }

void PaintEngine::window_new(int64_t wid, int w, int h) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::WindowNew;
  item->wid = wid;
  item->w = w;
  item->h = h;
  impl_->enqueue(std::move(item));
}

void PaintEngine::window_resize(int64_t wid, int w, int h) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::WindowResize;
  item->wid = wid;
  item->w = w;
  item->h = h;
  impl_->enqueue(std::move(item));
}

void PaintEngine::window_lost(int64_t wid) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::WindowLost;
  item->wid = wid;
  impl_->enqueue(std::move(item));
}

void PaintEngine::submit(DrawPacket packet) {
  auto item = std::make_shared<Item>();
  item->kind = Kind::Draw;
  item->wid = packet.wid;
  item->received =
      packet.received == Clock::time_point{} ? Clock::now() : packet.received;
  item->packet = std::move(packet);
  const DrawPacket& p = item->packet;
  if (internal::is_builtin_coding(p.coding)) {
    item->state = State::Ready;
  } else if (codecs::is_video_coding(p.coding)) {
    item->route = Route::Video;  // decoded on the window's video lane (video_draws.cc)
    item->state = State::Queued;
  } else if ((item->decoder = impl_->config.decoders(p.coding)) == nullptr) {
    item->state = State::Ready;
    item->error = Error(ErrorCode::Unsupported, p.coding.empty() ? "draw" : p.coding, "decode",
                        "unknown coding '" + p.coding + "'");
  } else {
    item->state = State::Queued;
    const bool direct_capable = impl_->config.direct_decode &&
                                internal::direct_capable(p, *item->decoder, impl_->format);
    const int64_t pixels = int64_t(p.w) * p.h;
    if (impl_->gpu_mode == GpuMode::Texture && gpu_codable(p)) {
      item->routing = impl_->gpu_route.choose(pixels);
    } else if (impl_->gpu_mode == GpuMode::Host && gpu_codable(p)) {
      item->routing.gpu = pixels >= impl_->config.gpu_min_pixels;  // the threshold alone
    }
    if (item->routing.gpu && impl_->gpu_refuses(p)) item->routing = {};  // not measured: the CPU's
    if (item->routing.gpu) {
      item->route = impl_->gpu_mode == GpuMode::Texture ? Route::GpuTexture : Route::GpuHost;
    } else {  // the CPU's, GPU-codable draws routed there and ones the GPU refuses included
      item->direct = direct_capable;
    }
  }
  impl_->enqueue(std::move(item));
}

int PaintEngine::run_ui_once() { return impl_->run_ui_once(); }

void PaintEngine::wait_for_work(std::chrono::microseconds timeout) {
  MutexLock lock(impl_->mu);
  impl_->ui_cv.wait_for(impl_->mu, timeout, [&]() PIXPATH_REQUIRES(impl_->mu) {
    return impl_->ui_work || impl_->shut_down;
  });
}

bool PaintEngine::idle() const {
  MutexLock lock(impl_->mu);
  return impl_->is_idle();
}

bool PaintEngine::wait_idle(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    run_ui_once();
    if (idle()) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    wait_for_work(std::min<std::chrono::microseconds>(
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - now),
        std::chrono::milliseconds(50)));
  }
}

void PaintEngine::shutdown() { impl_->shutdown(); }

PaintEngineStats PaintEngine::stats() const {
  PaintEngineStats s;
  {
    MutexLock lock(impl_->mu);
    s = impl_->stats;
  }
  const auto& route = impl_->gpu_route;
  if (impl_->gpu_mode == GpuMode::Texture && route.measured()) {
    s.gpu_routing = "measured";
    s.gpu_route_explored = route.explored();
    s.gpu_route_table = route.describe();
  } else if (impl_->gpu_mode != GpuMode::Off) {
    s.gpu_routing = "size";
  }
  return s;
}

}  // namespace pixpath::paint
