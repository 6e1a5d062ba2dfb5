#include "internal/gpu_route_chooser.h"

#include <bit>
#include <cstdio>

namespace pixpath::paint::internal {
namespace {

int class_count(const GpuRouteChooser::Options& o) {
  if (!o.measured || o.floor <= 0 || o.ceiling <= o.floor) return 0;
  const int n = std::bit_width(uint64_t(o.ceiling / o.floor)) - 1;
  return n < GpuRouteChooser::kMaxClasses ? n : GpuRouteChooser::kMaxClasses;
}

std::string size_name(int64_t pixels) {
  // Square sizes read best ("64x64"); the others as a pixel count.
  for (int64_t s = 1; s * s <= pixels; ++s)
    if (s * s == pixels) return std::to_string(s) + "x" + std::to_string(s);
  return std::to_string(pixels) + "px";
}

}  // namespace

GpuRouteChooser::GpuRouteChooser(Options o) : o_(o), classes_(class_count(o)) {}

bool GpuRouteChooser::prefers_gpu(const SizeClass& c, int64_t pixels) const {
  if (c.cpu.samples >= o_.min_samples && c.gpu.samples >= o_.min_samples) return c.gpu.us < c.cpu.us;
  return pixels >= o_.threshold;
}

GpuRouteChooser::Choice GpuRouteChooser::choose(int64_t pixels) {
  Choice choice;
  choice.gpu = pixels >= o_.threshold;
  if (classes_ == 0 || pixels < o_.floor || pixels >= o_.floor << classes_) return choice;
  choice.size_class = std::bit_width(uint64_t(pixels / o_.floor)) - 1;
  MutexLock lock(mu_);
  SizeClass& c = sizes_[size_t(choice.size_class)];
  choice.gpu = prefers_gpu(c, pixels);
  const Estimate& best = choice.gpu ? c.gpu : c.cpu;
  const Estimate& other = choice.gpu ? c.cpu : c.gpu;
  // A route measured far slower is explored less often (up to 8x): each such draw costs its
  // latency (measured on the H200: 128x128 alone, the GPU 1.1 ms against the CPU's 0.28).
  int every = o_.learn_every;
  if (other.samples >= o_.min_samples) {
    const double ratio = best.us > 0 ? other.us / best.us : 1.0;
    every = o_.explore_every * (ratio >= 8 ? 8 : ratio >= 1 ? int(ratio) : 1);
  }
  if (++c.draws % every == 0) {
    choice.gpu = !choice.gpu;
    choice.explored = true;
    ++explored_;
  }
  return choice;
}

void GpuRouteChooser::record(const Choice& choice, int64_t total_us) {
  if (choice.size_class < 0 || choice.size_class >= classes_ || total_us <= 0) return;
  MutexLock lock(mu_);
  SizeClass& c = sizes_[size_t(choice.size_class)];
  Estimate& e = choice.gpu ? c.gpu : c.cpu;
  const double w = choice.explored ? o_.explored_weight : o_.weight;
  e.us = e.samples == 0 ? double(total_us) : e.us + w * (double(total_us) - e.us);
  ++e.samples;
}

int64_t GpuRouteChooser::explored() const {
  MutexLock lock(mu_);
  return explored_;
}

std::vector<GpuRouteChooser::ClassView> GpuRouteChooser::table() const {
  std::vector<ClassView> out;
  MutexLock lock(mu_);
  for (int k = 0; k < classes_; ++k) {
    const SizeClass& c = sizes_[size_t(k)];
    ClassView v;
    v.from_pixels = o_.floor << k;
    v.to_pixels = o_.floor << (k + 1);
    v.cpu_us = int64_t(c.cpu.us + 0.5);
    v.gpu_us = int64_t(c.gpu.us + 0.5);
    v.cpu_samples = c.cpu.samples;
    v.gpu_samples = c.gpu.samples;
    v.prefers_gpu = prefers_gpu(c, v.from_pixels);
    out.push_back(v);
  }
  return out;
}

std::string GpuRouteChooser::describe() const {
  if (classes_ == 0) return "";
  std::string s;
  char buf[160];
  for (const ClassView& v : table()) {
    if (v.cpu_samples + v.gpu_samples == 0) continue;
    std::snprintf(buf, sizeof buf, "%s%s+ cpu %.2f ms (%lld) gpu %.2f ms (%lld) -> %s", s.empty() ? "" : "; ",
                  size_name(v.from_pixels).c_str(), double(v.cpu_us) / 1000.0, (long long)v.cpu_samples,
                  double(v.gpu_us) / 1000.0, (long long)v.gpu_samples, v.prefers_gpu ? "gpu" : "cpu");
    s += buf;
  }
  return s;
}

}  // namespace pixpath::paint::internal
