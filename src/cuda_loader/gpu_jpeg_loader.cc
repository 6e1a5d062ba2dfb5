// The loader of the GPU module: plain C++, no CUDA. Opens libpixpath_cuda.so with dlopen, checks
// its ABI version and wraps its engine in pixpath's types (Picture, PictureStorage with a release
// action, a SyncPoint over the CUDA event). See module_abi.h for why the module builds none of
// these itself.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cuda/module_abi.h"
#include "cuda/own_jpeg_input.h"
#include "cuda/route_costs.h"
#include "cuda/share_tuner.h"
#include "pixpath/codecs/jpeg_baseline_parse.h"
#include "pixpath/codecs/jpeg_parallel_decode.h"
#include "pixpath/codecs/jpeg_tables.h"
#include "pixpath/core/storage.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/cuda/gpu_jpeg.h"

namespace pixpath::cuda {

namespace {

constexpr const char* kModuleName = "libpixpath_cuda.so";

Error unavailable(std::string reason) {
  return Error(ErrorCode::Unavailable, "gpu", "load module", std::move(reason));
}

std::string program_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string p(buf, static_cast<size_t>(n));
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

// Loads the module once per process (never unloaded: pictures it made may outlive decoders).
Result<const abi::ModuleEntry*> load_module(const std::string& path) {
  static Mutex mu;
  static std::map<std::string, const abi::ModuleEntry*> loaded PIXPATH_GUARDED_BY(mu);
  MutexLock lock(mu);
  std::vector<std::string> candidates;
  if (!path.empty()) {
    candidates.push_back(path);
  } else if (const char* env = std::getenv("PIXPATH_CUDA_MODULE"); env && *env) {
    candidates.push_back(env);
  } else {
    candidates.push_back(kModuleName);
    const std::string dir = program_dir();
    if (!dir.empty()) {
      candidates.push_back(dir + "/" + kModuleName);
      candidates.push_back(dir + "/../lib/" + kModuleName);
    }
#ifdef PIXPATH_BUILD_LIB_DIR
    // Programs run from the build tree (build/<preset>/src/...): the module is built into
    // build/<preset>/lib.
    candidates.push_back(std::string(PIXPATH_BUILD_LIB_DIR) + "/" + kModuleName);
#endif
  }
  // Errors of candidates that do not exist say little; an existing module that cannot load
  // (its libcuda or libnvjpeg missing) says what is wrong, so it is reported alone.
  std::string errors, found_but_failed;
  for (const auto& c : candidates) {
    if (auto it = loaded.find(c); it != loaded.end()) return it->second;
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      const std::string why = e ? e : c + ": dlopen failed";
      errors += std::string(errors.empty() ? "" : "; ") + why;
      if (found_but_failed.empty() && why.find(kModuleName) == std::string::npos) {
        found_but_failed = c + ": " + why;
      }
      continue;
    }
    using EntryFn = const abi::ModuleEntry* (*)();
    auto fn = reinterpret_cast<EntryFn>(dlsym(h, abi::kEntryPoint));
    if (!fn) return unavailable(c + " has no entry point " + abi::kEntryPoint);
    const abi::ModuleEntry* entry = fn();
    if (!entry || entry->abi_version != abi::kAbiVersion || !entry->create)
      return unavailable(c + " was built for another pixpath (module ABI " +
                         std::to_string(entry ? entry->abi_version : -1) + ", loader ABI " +
                         std::to_string(abi::kAbiVersion) + ")");
    loaded[c] = entry;
    return entry;
  }
  return unavailable("the CUDA module could not be loaded (needs the NVIDIA driver's libcuda.so.1 "
                     "and nvJPEG's libnvjpeg.so.13): " +
                     (found_but_failed.empty() ? errors : found_but_failed));
}

abi::DecodeRequest request(std::span<const uint8_t> data, const GpuDecodeParams& p) {
  abi::DecodeRequest r;
  r.data = data.data();
  r.size = data.size();
  r.alpha_offset = p.alpha_offset ? *p.alpha_offset : -1;
  r.width = p.width;
  r.height = p.height;
  r.backend = static_cast<int>(p.backend);
  r.max_width = p.limits.max_width;
  r.max_height = p.limits.max_height;
  r.max_pixels = p.limits.max_pixels;
  return r;
}

// pixpath's own GPU decoder (issue 19) is the GPU route's decoder by default; nvJPEG stays for
// what names it. Why: only a Huffman decode can tell a damaged stream, and nvJPEG decodes a
// bit-flipped one silently (issue 15, docs/exactness.md); the own decoder reports it (damage
// words -> the CPU path's kind of warnings), with libjpeg-turbo's pixels. It takes baseline
// 8-bit Huffman gray and YCbCr 4:4:4 / 4:2:2 / 4:2:0 pictures (the samplings its tests cover),
// jpega's colour and alpha
// JPEGs alike, when the request leaves the backend to pixpath (GpuBackend::Auto); the route
// refuses every other picture to the CPU (gpu_exactness_refusal's own_decoder rule), so none
// is decoded silently. PIXPATH_CUDA_OWN_JPEG=0 keeps nvJPEG for everything (and its exactness
// rule: the hardware engines' pictures only); asking for an nvJPEG backend by name keeps
// nvJPEG (measurements), and so does PIXPATH_CUDA_ACCEPT_ALL=1 (the knob that measures what
// nvJPEG makes of every picture).
bool accept_all() {
  const char* all = std::getenv("PIXPATH_CUDA_ACCEPT_ALL");
  return all && std::string_view(all) == "1";
}

bool own_route_enabled() {
  const char* v = std::getenv("PIXPATH_CUDA_OWN_JPEG");
  return !accept_all() && !(v && std::string_view(v) == "0");
}

bool own_decoder_wanted(const GpuDecodeParams& p) { return own_route_enabled() && p.backend == GpuBackend::Auto; }

// The inputs of the route's rules (paint::gpu_exactness_refusal) for one request.
struct RouteRules {
  bool exact_engines, exactness, own_decoder;
};
RouteRules route_rules(const GpuDecodeParams& p, int engines) {
  const bool asked_decoupled = p.backend == GpuBackend::Hybrid || p.backend == GpuBackend::GpuHybrid;
  return {engines > 0 && !asked_decoupled, !asked_decoupled, own_decoder_wanted(p)};
}

// The GPU route's refusals (paint::gpu_exactness_refusal: what the GPU cannot decode within +-1
// of the CPU path, what nvJPEG cannot decode, truncated streams, and on the own decoder's route
// what it does not take), checked before the module sees the picture; the caller then decodes
// it on the CPU. On nvJPEG, colour pictures count as exact only on the hardware JPEG engines:
// the GPU has them and the request leaves the backend to nvJPEG; a request that names a
// decoupled backend (measurements) gets it, exact or not. PIXPATH_CUDA_ACCEPT_ALL=1 turns the
// check off (measurements only: the exactness sweep shows what nvJPEG makes of those pictures).
std::optional<Error> refusal(std::span<const uint8_t> data, const GpuDecodeParams& p, int engines) {
  if (accept_all()) return std::nullopt;
  const RouteRules r = route_rules(p, engines);
  auto check = [&](std::span<const uint8_t> part) {
    return paint::gpu_exactness_refusal(part, r.exact_engines, r.exactness, r.own_decoder);
  };
  std::optional<std::string> why;
  if (p.alpha_offset && *p.alpha_offset > 0 && uint64_t(*p.alpha_offset) < data.size()) {
    const auto split = size_t(*p.alpha_offset);
    why = check(data.first(split));
    if (!why && (why = check(data.subspan(split)))) why = "alpha: " + *why;
  } else {
    why = check(data);
  }
  if (!why) return std::nullopt;
  return Error(ErrorCode::Unsupported, "jpeg", "gpu route", *why + "; decode it on the CPU");
}

// One JPEG on the own decoder's route: its bytes and parse, the input the module takes (made
// once the picture is known to stay on the route), what the kernels found.
struct OwnPart {
  std::span<const uint8_t> data;
  codecs::jpeg::BaselineJpeg jpeg;
  codecs::jpeg::ParseDepth depth = codecs::jpeg::ParseDepth::Whole;  // how far `jpeg` was read
  own_jpeg::OwnJpegInput input;
  own_jpeg::DamageWords damage;
};

// One picture on the own decoder's route (jpega: its alpha JPEG too). Alive for the module
// call; heap-allocated, so the request's pointers into it stay valid.
struct OwnRoute {
  OwnPart color;
  std::optional<OwnPart> alpha;
  std::vector<Error> warnings() const {
    auto w = own_jpeg::damage_warnings(color.jpeg, color.damage, "gpu decode");
    if (alpha)
      for (Error& e : own_jpeg::damage_warnings(alpha->jpeg, alpha->damage, "gpu alpha")) w.push_back(std::move(e));
    return w;
  }
};

// What the own decoder does not take goes to the CPU, which decodes it and reports what is
// wrong: the route's refusal check already sent the pictures it does not take there, so what
// is left is a header the check could read and the parser (or the plan) could not.
Error not_for_own_decoder(const Error& e) {
  return Error(ErrorCode::Unsupported, "jpeg", "gpu route",
               "not for pixpath's own GPU decoder (" + e.message() + "); decode it on the CPU");
}

// Parses one JPEG for the own decoder, its headers only or whole (the plan, which unstuffs the
// entropy data, waits for own_inputs).
Result<void> own_parse(std::span<const uint8_t> data, const GpuDecodeParams& p, OwnPart& part,
                       codecs::jpeg::ParseDepth depth) {
  codecs::jpeg::BaselineLimits limits;
  limits.max_width = p.limits.max_width;
  limits.max_height = p.limits.max_height;
  limits.max_pixels = p.limits.max_pixels;
  auto parsed = codecs::jpeg::parse_baseline_jpeg(data, limits, depth);
  if (!parsed.ok()) return not_for_own_decoder(parsed.error());
  part.data = data;
  part.jpeg = std::move(parsed).value();
  part.depth = depth;
  return ok();
}

// The parsed picture (jpega: both JPEGs) on the own decoder's route, its input not made yet;
// null when the request keeps nvJPEG.
Result<std::unique_ptr<OwnRoute>> own_route_parsed(std::span<const uint8_t> data, const GpuDecodeParams& p,
                                                   codecs::jpeg::ParseDepth depth) {
  if (!own_decoder_wanted(p)) return std::unique_ptr<OwnRoute>();
  auto route = std::make_unique<OwnRoute>();
  if (p.alpha_offset) {
    if (*p.alpha_offset <= 0 || uint64_t(*p.alpha_offset) >= data.size())
      return Error(ErrorCode::CorruptData, "jpeg", "gpu route",
                   "alpha-offset " + std::to_string(*p.alpha_offset) + " outside the " +
                       std::to_string(data.size()) + "-byte draw");
    const auto split = size_t(*p.alpha_offset);
    PIXPATH_CHECK(own_parse(data.first(split), p, route->color, depth));
    route->alpha.emplace();
    PIXPATH_CHECK(own_parse(data.subspan(split), p, *route->alpha, depth));
  } else {
    PIXPATH_CHECK(own_parse(data, p, route->color, depth));
  }
  return route;
}

// Makes the module's input of a parsed route (a part parsed to its headers only is parsed
// whole first; then the plan: unstuffing, subsequences) and points the request at it: r.own
// (and r.own_alpha for jpega), with the places for the damage words.
Result<void> own_inputs(OwnRoute& route, abi::DecodeRequest& r, const GpuDecodeParams& p) {
  for (OwnPart* part : {&route.color, route.alpha ? &*route.alpha : nullptr}) {
    if (!part) continue;
    if (part->depth != codecs::jpeg::ParseDepth::Whole)
      PIXPATH_CHECK(own_parse(part->data, p, *part, codecs::jpeg::ParseDepth::Whole));
    auto input = own_jpeg::make_own_jpeg_input(part->data, part->jpeg);
    if (!input.ok()) return not_for_own_decoder(input.error());
    part->input = std::move(input).value();
  }
  r.own = &route.color.input;
  r.own_damage = &route.color.damage;
  if (route.alpha) {
    r.own_alpha = &route.alpha->input;
    r.own_alpha_damage = &route.alpha->damage;
  }
  return ok();
}

// The route's refusal for a picture the own decoder's parse (`own`: its result) may already
// have cleared: where the route's rules pass the parsed frame, the rules' own scan over the
// bytes (scan_jpeg_tables) is not made; where they would refuse it, the scan decides (the
// parse's headers-only EOI is a guess from the last two bytes). On the H200's host that scan
// cost about 0.1 ms per 4K picture (docs/performance.md, "Many windows").
std::optional<Error> refusal_after_parse(const Result<std::unique_ptr<OwnRoute>>& own, std::span<const uint8_t> data,
                                         const GpuDecodeParams& p, int engines) {
  if (own.ok() && *own) {
    const RouteRules r = route_rules(p, engines);
    auto clear = [&](const OwnPart& part) {
      return !paint::gpu_exactness_refusal(codecs::jpeg::frame_tables(part.jpeg), r.exact_engines, r.exactness, r.own_decoder);
    };
    if (clear((*own)->color) && (!(*own)->alpha || clear(*(*own)->alpha))) return std::nullopt;
  }
  return refusal(data, p, engines);
}

// A parsed picture's input on the own decoder's route: r.own (and r.own_alpha for jpega) set;
// null when the request keeps nvJPEG; the parse's error when it failed.
Result<std::unique_ptr<OwnRoute>> with_inputs(Result<std::unique_ptr<OwnRoute>> own, const GpuDecodeParams& p,
                                              abi::DecodeRequest& r) {
  PIXPATH_TRY(std::unique_ptr<OwnRoute> route, std::move(own));
  if (route) PIXPATH_CHECK(own_inputs(*route, r, p));
  return route;
}

// One picture's route check (on the own decoder's parse where it can) and then its input.
Result<std::unique_ptr<OwnRoute>> checked_route(std::span<const uint8_t> data, const GpuDecodeParams& p,
                                                int engines, abi::DecodeRequest& r) {
  auto own = own_route_parsed(data, p, codecs::jpeg::ParseDepth::Whole);
  if (auto e = refusal_after_parse(own, data, p, engines)) return *e;
  return with_inputs(std::move(own), p, r);
}

// Many windows at once (issue 19): a batch's own-decoder pictures run on the SMs one by one,
// and the hardware JPEG engines would sit idle beside them. So some of a batch's baseline colour
// pictures (4:4:4 / 4:2:2 / 4:2:0, no alpha: the pictures the engines decode exactly as the CPU
// path does, docs/exactness.md) may go to one hardware batch, which the module starts before
// the own decoder's pictures, so both run at once; only in batches of at least kFixedShareFrom
// such pictures (several windows at once), since the engines decode damaged entropy data
// silently where the own decoder reports it. A picture whose data ends without EOI (truncated,
// which the host parse sees) always stays on the own decoder.
// How many: PIXPATH_CUDA_HW_SHARE (read per batch; parse_share_setting, share_tuner.h). Unset,
// empty, "tuned" or unrecognised (the default): the decoder's ShareTuner picks the share in eighths
// by the throughput it measures under the current load. A number from 0 to 1: that share (0 keeps
// every picture on the own decoder). "measured": per batch the count that finishes it first by the
// module's measured costs (the own decoder's time per picture, the engines' time per pass) and the
// loader's own plan time per picture (route_costs.h, engine_share), with two pictures to the
// engines in one batch of kExploreEvery that it keeps off them, so their cost stays measured.
// Why tuned: on the H200 (docs/performance.md, "The engines' share tuned by measured throughput",
// 2026-12-06) one 4K window with 8 draws in flight painted ~1,270-1,340 frames/s tuned (it settles
// on 0-1 of 8) against ~1,110-1,160 with the former fixed 0.75, and eight 4K windows ~1,610-1,720
// (it settles on 5 of 8) against ~1,550-1,650; a fixed 0.625 wins eight windows (~1,730) but not
// one (~1,120), and "measured" neither (the own decoder's per-picture time inflates beside hardware
// passes, so a cost model does not see the optimum).
constexpr size_t kFixedShareFrom = 4;
constexpr unsigned kExploreEvery = 32;

// PIXPATH_CUDA_HW_SHARE as one batch sees it (read per batch: the GPU tests change it).
ShareSetting share_setting() { return parse_share_setting(std::getenv("PIXPATH_CUDA_HW_SHARE")); }

// For info_json: the setting the next batch takes.
std::string share_setting_json(const ShareSetting& s) {
  using Kind = ShareSetting::Kind;
  const char* kind = s.kind == Kind::Tuned ? "tuned" : (s.kind == Kind::Measured ? "measured" : "fixed");
  return ",\"hw_share_setting\":{\"kind\":\"" + std::string(kind) + "\",\"fixed\":" + std::to_string(s.fixed) +
         ",\"recognised\":" + (s.recognised ? "true" : "false") + "}";
}

// The loader's host time per own-decoder picture before the module call (the whole parse where
// only headers were read, and the plan), measured in module_batch.
CostPerMpixel& plan_cost() {
  static CostPerMpixel cost{kPlanPriorMsPerMpixel, CostPerMpixel::Track::Mean};
  return cost;
}

// Takes the engines' share of the batch's own-route pictures (parsed, their inputs not made
// yet) off that route, so the module's hardware batch decodes them: the last ones that qualify.
// Their plans are never made. The module's costs are read only for the measured split.
void hand_share_to_engines(std::vector<abi::DecodeRequest>& requests,
                           std::vector<std::unique_ptr<OwnRoute>>& owns, int engines,
                           abi::Engine& engine, ShareTuner& tuner) {
  if (engines <= 0) return;
  const ShareSetting setting = share_setting();
  using Kind = ShareSetting::Kind;
  const int level = setting.kind == Kind::Tuned ? tuner.on_batch(ShareTuner::Clock::now(), int(requests.size())) : 0;
  std::vector<size_t> candidates;
  int own_pictures = 0;
  int64_t candidate_pixels = 0;
  for (size_t k = 0; k < requests.size(); ++k) {
    const OwnRoute* o = owns[k].get();
    if (!o) continue;
    ++own_pictures;
    if (o->alpha || requests[k].alpha_offset >= 0 || !o->color.jpeg.has_eoi) continue;
    if (o->color.jpeg.component_count != 3) continue;
    using codecs::jpeg::Upsampling;
    const auto up = codecs::jpeg::chroma_upsampling(o->color.jpeg);
    if (!up.ok() || *up == Upsampling::H1V2) continue;
    candidates.push_back(k);
    candidate_pixels += int64_t(o->color.jpeg.width) * o->color.jpeg.height;
  }
  if (candidates.size() < kFixedShareFrom) return;
  size_t n = 0;
  if (setting.kind == Kind::Tuned) {
    n = size_t(ShareTuner::share_for(int(candidates.size()), level));
  } else if (setting.kind == Kind::Fixed) {
    if (setting.fixed <= 0) return;
    n = std::min(candidates.size(), size_t(double(candidates.size()) * setting.fixed + 0.5));
    if (n < 2) return;  // the module batches two or more
  } else {
    const abi::RouteCosts costs = engine.route_costs();
    const double mpixels = double(candidate_pixels) / double(candidates.size()) / 1e6;
    const double own_ms = (costs.own_ms_per_mpixel + plan_cost().per_mpixel()) * mpixels;
    const double pass_ms = costs.engine_pass_ms_per_mpixel * mpixels;
    n = size_t(engine_share(own_pictures, int(candidates.size()), engines, own_ms, pass_ms));
    // An estimate is only corrected by samples: while the split keeps every picture on the own
    // decoder, one batch in kExploreEvery still sends two to the engines, so a pass cost that a
    // busy moment raised comes back down when the engines are free again.
    static std::atomic<unsigned> unsplit{0};
    if (n == 0 && unsplit.fetch_add(1, std::memory_order_relaxed) % kExploreEvery == kExploreEvery - 1) n = 2;
  }
  for (size_t j = candidates.size() - n; j < candidates.size(); ++j) owns[candidates[j]].reset();
}

// A batch call's pictures for the module: a refused one gets its error at its place in `out`;
// the rest a request each (`index`: their places) with their own-route state (alive for the
// module call), and the hardware share handed to the engines.
struct ModuleBatch {
  std::vector<abi::DecodeRequest> requests;
  std::vector<size_t> index;
  std::vector<std::unique_ptr<OwnRoute>> owns;
};

template <class Job, class Out>
ModuleBatch module_batch(std::span<const Job> jobs, std::vector<Out>& out, abi::Engine& engine,
                         ShareTuner& tuner) {
  const int engines = engine.hardware_engines();
  ModuleBatch b;
  b.requests.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    // Headers only: the share handed to the engines is never read past them here.
    auto own = own_route_parsed(jobs[i].data, jobs[i].params, codecs::jpeg::ParseDepth::Headers);
    if (auto e = refusal_after_parse(own, jobs[i].data, jobs[i].params, engines)) {
      out[i] = *e;
      continue;
    }
    if (!own.ok()) {
      out[i] = own.error();
      continue;
    }
    b.requests.push_back(request(jobs[i].data, jobs[i].params));
    b.owns.push_back(std::move(own).value());
    b.index.push_back(i);
  }
  hand_share_to_engines(b.requests, b.owns, engines, engine, tuner);
  // The pictures left on the own route get their inputs; one the plan refuses goes to the CPU.
  size_t kept = 0;
  for (size_t k = 0; k < b.requests.size(); ++k) {
    if (b.owns[k]) {
      const auto plan_start = std::chrono::steady_clock::now();
      if (auto made = own_inputs(*b.owns[k], b.requests[k], jobs[b.index[k]].params); !made) {
        out[b.index[k]] = made.error();
        continue;
      }
      const auto& j = b.owns[k]->color.jpeg;
      plan_cost().add(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - plan_start).count(),
                      int64_t(j.width) * j.height);
    }
    if (kept != k) {
      b.requests[kept] = b.requests[k];
      b.owns[kept] = std::move(b.owns[k]);
      b.index[kept] = b.index[k];
    }
    ++kept;
  }
  b.requests.resize(kept);
  b.owns.resize(kept);
  b.index.resize(kept);
  return b;
}

abi::TextureTarget texture_target(const GlTextureRegion& t) {
  return abi::TextureTarget{t.texture, t.texture_width, t.texture_height, t.x, t.y};
}

// A CUDA event recorded after a GPU write; back to the engine's pool when the last holder goes.
class CudaEventSyncPoint final : public SyncPoint {
 public:
  CudaEventSyncPoint(std::shared_ptr<abi::Engine> engine, void* event)
      : engine_(std::move(engine)), event_(event) {}
  ~CudaEventSyncPoint() override { engine_->recycle_event(event_); }
  Result<void> wait_host() const override { return engine_->wait_event(event_); }
  void* native() const override { return event_; }

 private:
  std::shared_ptr<abi::Engine> engine_;
  void* event_;
};

Result<Picture> wrap_device_image(const std::shared_ptr<abi::Engine>& engine,
                                  const abi::DeviceImage& img) {
  auto sync = std::make_shared<CudaEventSyncPoint>(engine, img.event);
  MemoryLocation where;
  where.kind = MemoryKind::CudaDevice;
  where.device = img.device;
  where.context = img.context;
  // The release frees stream-ordered after the write, in the device's primary context, from
  // any thread: no release domain is needed.
  PIXPATH_TRY(StorageRef storage,
              PictureStorage::wrap(where, img.ptr, img.bytes, StorageFlags{},
                                   [engine, ptr = img.ptr, stream = img.stream] {
                                     engine->release_device(ptr, stream);
                                   }));
  storage->set_sync_point(std::move(sync));
  return Picture::wrap(PixelFormat::RGBA, img.width, img.height, std::move(storage), 0, img.pitch);
}

// A video frame in CUDA memory -> RGBA pool memory (convert_video_frame). The frame is let go
// as soon as the conversion has read it (a host wait on its event: tens of microseconds), not
// when the RGBA picture goes: libavcodec's NVDEC surfaces and frames are few, and a window's
// pictures wait for their texture copies' fences, so holding frames that long starved the
// decoder on the H200 (a decode error after about 26 frames in flight). The RGBA memory is
// freed stream-ordered when its picture goes.
Result<Picture> convert_video(const std::shared_ptr<abi::Engine>& engine, const codecs::VideoFrame& frame,
                              std::string_view coding) {
  const std::string subject(coding.empty() ? "video" : coding);
  auto fail = [&](std::string why) { return Error(ErrorCode::InvalidArgument, subject, "gpu video convert", why); };
  const Picture& pic = frame.picture;
  const MemoryLocation where = pic.location();
  if (where.kind != MemoryKind::CudaDevice) return fail("the frame is not in CUDA memory");
  if (where.device != engine->device())
    return fail("the frame is on CUDA device " + std::to_string(where.device) + ", the GPU decoder on " +
                std::to_string(engine->device()));
  abi::YuvRequest r;
  switch (pic.format()) {
    case PixelFormat::NV12: r.layout = 0; break;
    case PixelFormat::YUV420P: r.layout = 1; break;
    case PixelFormat::YUV444P: r.layout = 2; break;
    default: return fail("frame format " + std::string(name(pic.format())) + " is not converted on the GPU");
  }
  if (frame.color.gbr) return fail("G, B, R planes are not converted on the GPU");
  for (int i = 0; i < pic.plane_count() && i < 3; ++i) {
    const auto& p = pic.plane(i);
    r.planes[i] = static_cast<const uint8_t*>(p.storage->data()) + p.offset;
    r.pitch[i] = p.stride;
  }
  r.width = pic.width();
  r.height = pic.height();
  r.bt709 = frame.color.bt709;
  r.full_range = frame.color.full_range;
  r.src_stream = frame.cuda_stream;
  r.legacy_stream = frame.cuda_legacy_stream || frame.cuda_stream == nullptr;
  auto img = engine->convert_yuv_to_device(r);
  if (!img.ok())
    return Error(img.error().code(), subject, img.error().stage(), img.error().reason());
  auto sync = std::make_shared<CudaEventSyncPoint>(engine, img->event);
  if (auto waited = sync->wait_host(); !waited.ok()) {
    engine->release_device(img->ptr, img->stream);
    return Error(waited.error().code(), subject, "gpu video convert", waited.error().reason());
  }
  MemoryLocation out_where;
  out_where.kind = MemoryKind::CudaDevice;
  out_where.device = img->device;
  out_where.context = img->context;
  PIXPATH_TRY(StorageRef storage,
              PictureStorage::wrap(out_where, img->ptr, img->bytes, StorageFlags{},
                                   [engine, ptr = img->ptr, stream = img->stream] {
                                     engine->release_device(ptr, stream);
                                   }));
  storage->set_sync_point(std::move(sync));
  return Picture::wrap(PixelFormat::RGBA, img->width, img->height, std::move(storage), 0, img->pitch);
}

// The CUDA MemoryKindCopier (make_writable() of CUDA pictures): uses the engine of the most
// recently created decoder.
Mutex g_copier_mu;
std::weak_ptr<abi::Engine> g_copier_engine PIXPATH_GUARDED_BY(g_copier_mu);

std::shared_ptr<abi::Engine> copier_engine() {
  MutexLock lock(g_copier_mu);
  return g_copier_engine.lock();
}

Result<Picture> cuda_allocate_like(const Picture& like) {
  auto engine = copier_engine();
  if (!engine) return Error(ErrorCode::Unavailable, "picture", "allocate cuda", "no GPU decoder is alive");
  if (like.plane_count() != 1)
    return Error(ErrorCode::Unsupported, "picture", "allocate cuda", "only packed formats in CUDA memory");
  const size_t pitch = (like.row_bytes(0) + 255) / 256 * 256;
  const size_t bytes = pitch * static_cast<size_t>(like.height());
  PIXPATH_TRY(void* ptr, engine->allocate_device(bytes));
  MemoryLocation where = like.location();
  PIXPATH_TRY(StorageRef storage, PictureStorage::wrap(where, ptr, bytes, StorageFlags{},
                                                       [engine, ptr] { engine->release_device(ptr, nullptr); }));
  return Picture::wrap(like.format(), like.width(), like.height(), std::move(storage), 0, pitch);
}

Result<void> cuda_copy(const Picture& src, Picture& dst) {
  auto engine = copier_engine();
  if (!engine) return Error(ErrorCode::Unavailable, "picture", "copy cuda", "no GPU decoder is alive");
  for (int i = 0; i < src.plane_count(); ++i) {
    const auto& s = src.plane(i);
    const auto& d = dst.plane(i);
    if (auto sync = s.storage->sync_point()) PIXPATH_CHECK(sync->wait_host());
    PIXPATH_CHECK(engine->copy_device_2d(static_cast<uint8_t*>(d.storage->data()) + d.offset, d.stride,
                                         static_cast<const uint8_t*>(s.storage->data()) + s.offset,
                                         s.stride, src.row_bytes(i), src.height()));
    d.storage->mark_written();
  }
  return ok();
}

class CudaFence final : public GpuFence {
 public:
  CudaFence(std::shared_ptr<abi::Engine> engine, void* event) : engine_(std::move(engine)), event_(event) {}
  ~CudaFence() override { engine_->release_fence(event_); }
  bool ready() const override { return engine_->query_fence(event_) != 0; }
  Result<void> wait() const override { return engine_->wait_fence(event_); }

 private:
  std::shared_ptr<abi::Engine> engine_;
  void* event_;
};

class LoadedGpuJpegDecoder final : public GpuJpegDecoder {
 public:
  explicit LoadedGpuJpegDecoder(std::shared_ptr<abi::Engine> engine) : engine_(std::move(engine)) {}

  Result<codecs::ImageInfo> inspect(std::span<const uint8_t> data,
                                    const GpuDecodeParams& params) const override {
    PIXPATH_TRY(abi::ImageHeader h, engine_->inspect(request(data, params)));
    codecs::ImageInfo info;
    info.width = h.width;
    info.height = h.height;
    info.has_alpha = h.has_alpha;
    info.natural_format = h.has_alpha ? PixelFormat::RGBA : (h.components == 1 ? PixelFormat::GRAY8 : PixelFormat::RGB);
    info.detail = h.detail;
    return info;
  }

  Result<Picture> decode_to_device(std::span<const uint8_t> data,
                                   const GpuDecodeParams& params) const override {
    abi::DecodeRequest r = request(data, params);
    PIXPATH_TRY(auto own, checked_route(data, params, engine_->hardware_engines(), r));  // its warnings: decode_batch_to_device
    PIXPATH_TRY(abi::DeviceImage img, engine_->decode_to_device(r));
    return wrap_device_image(engine_, img);
  }

  Result<codecs::DecodeResult> decode_to_host(std::span<const uint8_t> data,
                                              const GpuDecodeParams& params) const override {
    auto parsed = own_route_parsed(data, params, codecs::jpeg::ParseDepth::Whole);
    if (auto e = refusal_after_parse(parsed, data, params, engine_->hardware_engines())) return *e;
    // nvJPEG's parse first: its errors (the size limits among them) as on the nvJPEG route.
    PIXPATH_TRY(abi::ImageHeader h, engine_->inspect(request(data, params)));
    PIXPATH_TRY(Picture pic, Picture::allocate(PixelFormat::RGBA, h.width, h.height));
    PIXPATH_TRY(PictureView view, pic.write());
    const auto& plane = view.plane(0);
    abi::DecodeRequest r = request(data, params);
    PIXPATH_TRY(auto own, with_inputs(std::move(parsed), params, r));
    PIXPATH_CHECK(engine_->decode_to_host(r, plane.data, plane.stride, h.width, h.height));
    codecs::DecodeResult result;
    result.picture = std::move(pic);
    if (own) result.warnings = own->warnings();
    return result;
  }

  Result<std::shared_ptr<GpuFence>> decode_to_texture(std::span<const uint8_t> data,
                                                      const GpuDecodeParams& params,
                                                      const GlTextureRegion& target) const override {
    abi::DecodeRequest r = request(data, params);
    PIXPATH_TRY(auto own, checked_route(data, params, engine_->hardware_engines(), r));  // no warnings channel here
    PIXPATH_TRY(void* event, engine_->decode_to_texture(r, texture_target(target)));
    return std::shared_ptr<GpuFence>(std::make_shared<CudaFence>(engine_, event));
  }

  std::vector<Result<Picture>> decode_batch_to_device(std::span<const GpuDecodeJob> jobs) const override {
    // Refused pictures get their error in place; the rest go to the module as one batch.
    std::vector<Result<Picture>> out(jobs.size(), Result<Picture>(Error(ErrorCode::Internal, "jpeg", "gpu batch",
                                                                        "the GPU module returned no result")));
    auto [requests, index, owns] = module_batch(jobs, out, *engine_, tuner_);
    if (requests.empty()) return out;
    auto images = engine_->decode_batch_to_device(requests.data(), requests.size());
    for (size_t k = 0; k < images.size() && k < index.size(); ++k) {
      if (images[k].ok()) {
        out[index[k]] = wrap_device_image(engine_, *images[k]);
        if (owns[k] && jobs[index[k]].warnings) {
          for (Error& w : owns[k]->warnings()) jobs[index[k]].warnings->push_back(std::move(w));
        }
      } else {
        out[index[k]] = images[k].error();
      }
    }
    return out;
  }

  std::vector<Result<void>> decode_batch_to_textures(std::span<const GpuTextureJob> jobs) const override {
    std::vector<Result<void>> out(jobs.size(), Result<void>(ok()));
    // The own-route states live through the module call; this call has no warnings channel.
    auto [requests, index, owns] = module_batch(jobs, out, *engine_, tuner_);
    if (requests.empty()) return out;
    std::vector<abi::TextureTarget> targets;
    targets.reserve(index.size());
    for (size_t i : index) targets.push_back(texture_target(jobs[i].target));
    auto results = engine_->decode_batch_to_textures(requests.data(), targets.data(), requests.size());
    for (size_t k = 0; k < results.size() && k < index.size(); ++k) out[index[k]] = std::move(results[k]);
    return out;
  }

  Result<std::shared_ptr<GpuFence>> copy_to_textures(std::span<const GpuCopyJob> jobs) const override {
    std::vector<abi::DeviceCopy> copies;
    copies.reserve(jobs.size());
    for (const auto& j : jobs) {
      if (!j.picture || j.picture->format() != PixelFormat::RGBA || j.picture->plane_count() != 1 ||
          j.picture->location().kind != MemoryKind::CudaDevice)
        return Error(ErrorCode::InvalidArgument, "jpeg", "gpu texture",
                     "copy_to_textures takes RGBA pictures in CUDA memory (decode_to_device)");
      const auto& plane = j.picture->plane(0);
      abi::DeviceCopy c;
      c.src = static_cast<const uint8_t*>(plane.storage->data()) + plane.offset;
      c.src_pitch = plane.stride;
      c.width = j.picture->width();
      c.height = j.picture->height();
      if (auto sync = plane.storage->sync_point()) c.src_event = sync->native();
      c.target = texture_target(j.target);
      copies.push_back(c);
    }
    PIXPATH_TRY(void* event, engine_->copy_to_textures(copies.data(), copies.size()));
    return std::shared_ptr<GpuFence>(std::make_shared<CudaFence>(engine_, event));
  }
  void forget_texture(uint32_t texture) const override { engine_->forget_texture(texture); }
  Result<void> prepare_texture(const GlTextureRegion& texture) const override {
    return engine_->prepare_texture(texture_target(texture));
  }
  int hardware_engines() const override { return engine_->hardware_engines(); }
  bool reports_damage() const override { return own_route_enabled(); }
  std::string info_json() const override {
    std::string j = engine_->info_json();
    if (!j.empty() && j.back() == '}')
      j.insert(j.size() - 1, ",\"share_tuner\":{\"best_level\":" + std::to_string(tuner_.best_level()) +
                                 ",\"epochs\":" + std::to_string(tuner_.epochs()) +
                                 ",\"surveys\":" + std::to_string(tuner_.surveys()) + "}" +
                                 share_setting_json(share_setting()));
    return j;
  }
  int cuda_device() const override { return engine_->device(); }
  const void* cuda_context() const override { return engine_->context(); }
  Result<Picture> convert_video_frame(const codecs::VideoFrame& frame,
                                      std::string_view coding) const override {
    return convert_video(engine_, frame, coding);
  }

 private:
  std::shared_ptr<abi::Engine> engine_;
  mutable ShareTuner tuner_;  // the engines' share of this decoder's batches (any thread)
};

}  // namespace

Result<std::unique_ptr<GpuJpegDecoder>> GpuJpegDecoder::create(const GpuDecoderOptions& options) {
  PIXPATH_TRY(const abi::ModuleEntry* entry, load_module(options.module_path));
  abi::EngineOptions eo;
  eo.device = options.device;
  eo.self_test = options.self_test;
  eo.self_test_decodes = options.self_test_decodes;
  PIXPATH_TRY(std::shared_ptr<abi::Engine> engine, entry->create(eo));
  {
    MutexLock lock(g_copier_mu);
    g_copier_engine = engine;
  }
  static std::once_flag registered;
  std::call_once(registered, [] {
    register_memory_kind_copier(MemoryKind::CudaDevice, MemoryKindCopier{&cuda_allocate_like, &cuda_copy});
  });
  return std::unique_ptr<GpuJpegDecoder>(new LoadedGpuJpegDecoder(std::move(engine)));
}

paint::GpuDrawDecoderFactory gpu_draw_decoder_factory(GpuDecoderOptions options) {
  return [options = std::move(options)]() -> Result<std::shared_ptr<const paint::GpuDrawDecoder>> {
    PIXPATH_TRY(std::unique_ptr<GpuJpegDecoder> decoder, GpuJpegDecoder::create(options));
    return std::shared_ptr<const paint::GpuDrawDecoder>(std::move(decoder));
  };
}

Result<std::string> gpu_info_json(const GpuDecoderOptions& options) {
  PIXPATH_TRY(const abi::ModuleEntry* entry, load_module(options.module_path));
  if (!entry->describe_devices) return unavailable("the CUDA module cannot describe devices");
  return entry->describe_devices();
}

}  // namespace pixpath::cuda
