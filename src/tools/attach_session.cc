#include "attach_session.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include <poll.h>
#include <sys/eventfd.h>

#include <cctype>

#include <fmt/format.h>

#include "pixpath/client/client_pipeline.h"
#include "pixpath/core/log.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/paint/backing_registry.h"
#include "pixpath/paint/paint_engine.h"
#include "pixpath/paint/recording.h"
#include "recording_observer.h"
#include "session_summary.h"
#include "snapshot_observer.h"
#include "pixpath/paint/window_input.h"
#if PIXPATH_HAVE_X11
#include "pixpath/x11/x11_keyboard.h"
#include "window_glue.h"
#endif
#if PIXPATH_HAVE_GL
#include "pixpath/gl/gl_backing.h"
#endif

namespace pixpath::tools {
namespace {

#if !PIXPATH_HAVE_X11
struct WindowGlue {  // no X11 in this build: windows without input
  void set_pipeline(client::ClientPipeline*) {}
  std::optional<paint::WindowHints> hints(int64_t) { return std::nullopt; }
};
#endif

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::atomic<int> g_signal{0};
extern "C" void on_signal(int signo) { g_signal.store(signo); }

// Installs SIGINT/SIGTERM handlers (no SA_RESTART) for its lifetime.
class SignalScope {
 public:
  SignalScope() {
    g_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool has_backing(const std::string& name) {
  const auto names = paint::backing_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether a GL renderer name is a software rasterizer (Mesa's llvmpipe, softpipe, swrast).
bool software_renderer(std::string renderer) {
  std::transform(renderer.begin(), renderer.end(), renderer.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* s : {"llvmpipe", "softpipe", "swrast", "software"})
    if (renderer.find(s) != std::string::npos) return true;
  return false;
}

Result<std::unique_ptr<paint::Backing>> open_gl_window(WindowGlue& glue) {
#if PIXPATH_HAVE_GL
  gl::GlBackingOptions go;
  go.windowed = true;
  go.hints = [&glue](int64_t wid) { return glue.hints(wid); };
  return gl::make_gl_backing(go);
#else
  (void)glue;
  return paint::make_backing("gl-window");  // says why there is none
#endif
}

Result<std::unique_ptr<paint::Backing>> open_x11(WindowGlue& glue) {
#if PIXPATH_HAVE_X11
  x11::X11BackingOptions xo;
  xo.hints = [&glue](int64_t wid) { return glue.hints(wid); };
  PIXPATH_TRY(auto b, x11::X11Backing::create(xo));
  return std::unique_ptr<paint::Backing>(std::move(b));
#else
  (void)glue;
  return Error(ErrorCode::Unavailable, "backing", "create", "no x11 backing in this build");
#endif
}

// The windowed backing --backing names (see AttachOptions::backing).
Result<std::unique_ptr<paint::Backing>> open_window_backing(const AttachOptions& o, WindowGlue& glue,
                                                            std::ostream& err) {
  const std::string who = "pixpath " + o.command + ": ";
  if (o.backing == "x11") return open_x11(glue);
  if (o.backing == "gl-window") return open_gl_window(glue);
  // auto
  if (has_backing("gl-window")) {
    auto gl = open_gl_window(glue);
#if PIXPATH_HAVE_GL
    std::string renderer;
    if (gl.ok()) {
      if (auto* g = dynamic_cast<gl::GlBacking*>(gl->get())) renderer = g->context()->info().renderer;
    }
    if (gl.ok() && !software_renderer(renderer)) return gl;
    if (gl.ok()) {
      PIXPATH_LOG(LogLevel::Info, "GL renders in software ({}): showing windows through X11 shared memory", renderer);
    } else {
      PIXPATH_LOG(LogLevel::Info, "no GL windows ({}): showing windows through X11", gl.error().message());
    }
#endif
    auto x = open_x11(glue);
    if (x.ok() || !gl.ok()) return x;
    err << who << "cannot show windows through X11 (" << x.error().message() << "); using GL\n";
    return gl;
  }
  return open_x11(glue);
}

}  // namespace

int run_attach_session(const AttachOptions& o, std::ostream& out, std::ostream& err) {
  const std::string who = "pixpath " + o.command + ": ";
  client::apply_picture_limits(o.limits);  // process-wide; before any thread makes pictures
  const auto& registry = codecs::CodecRegistry::builtin();
  std::vector<std::string> paintable = registry.decodable_codings();
  for (const auto& v : codecs::video_codings()) paintable.push_back(v);  // h264, vp8, vp9
  std::string have;
  for (const auto& e : paintable) have += (have.empty() ? "" : ", ") + e;
  std::vector<std::string> encodings;
  for (const auto& e : o.encodings.empty() ? paintable : o.encodings) {
    if (e == "scroll") continue;  // painted by the engine itself (below)
    if (std::find(paintable.begin(), paintable.end(), e) == paintable.end()) {
      err << who << "cannot paint --encodings '" << e << "' (this build paints: " << have << ")\n";
      return 2;
    }
    if (std::find(encodings.begin(), encodings.end(), e) == encodings.end()) encodings.push_back(e);
  }
  if (std::find(encodings.begin(), encodings.end(), o.encoding) == encodings.end()) {
    err << who << "cannot paint --encoding '" << o.encoding << "' (this build paints: " << have
        << (o.encodings.empty() ? "" : "; --encodings offers only some of them") << ")\n";
    return 2;
  }
  // scroll is painted by the engine itself: offered by default, and with --encodings only
  // where listed (a user's list is what the server gets).
  if (o.encodings.empty() ||
      std::find(o.encodings.begin(), o.encodings.end(), "scroll") != o.encodings.end())
    encodings.push_back("scroll");

  // Windowed where a display exists (x11 or gl-window: choose_backing), else headless on the
  // CPU backing (silently without a display: that is the documented default, not a surprise).
  const char* display = std::getenv("DISPLAY");
  const bool windowed = !o.headless && display && *display;
  auto decoder_choice = paint::parse_decoder_choice(o.decoder);
  if (!decoder_choice.ok()) {
    err << who << decoder_choice.error().message() << "\n";
    return 2;
  }
  if (!o.snapshot_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.snapshot_dir, ec);
    if (ec) {
      err << who << o.snapshot_dir << ": cannot create the snapshot directory: " << ec.message() << "\n";
      return 1;
    }
  }
  std::optional<paint::RecordingWriter> recording_file;
  if (!o.record_file.empty()) {
    auto w = paint::RecordingWriter::create(o.record_file);
    if (!w.ok()) {
      err << who << w.error().message() << "\n";
      return 1;
    }
    recording_file.emplace(std::move(*w));
  }
  WindowGlue window_glue;
  auto backing_or = windowed ? open_window_backing(o, window_glue, err)
                             : paint::make_backing("cpu");
  if (!backing_or.ok() && windowed && o.backing == "auto") {
    err << who << "cannot open windows (" << backing_or.error().message()
        << "); running headless (CPU backing)\n";
    backing_or = paint::make_backing("cpu");
  }
  if (!backing_or.ok()) {
    err << who << backing_or.error().message() << "\n";
    return 1;
  }
  paint::Backing& backing = **backing_or;

  const bool tty = ::isatty(STDERR_FILENO) == 1;
  const bool status_lines = tty || o.progress;
  const auto start = Clock::now();

  // The observers: the summary always, snapshots and the recording when asked for.
  SessionSummary summary;
  std::optional<SnapshotObserver> snapshots;
  if (!o.snapshot_dir.empty()) snapshots.emplace(backing, o.snapshot_dir);
  std::optional<RecordingObserver> recording;
  if (recording_file) recording.emplace(std::move(*recording_file), start);

  client::ClientPipelineOptions po;
  po.observers.push_back(&summary);
  // The windows' input (x11, gl-window): WindowGlue places them and forwards what the user does.
  paint::WindowInput* window_input = nullptr;
#if PIXPATH_HAVE_X11
  std::unique_ptr<x11::Keyboard> keyboard;  // gl-window: keycodes -> keysyms, and the hello's keymap
  if (auto* x = dynamic_cast<x11::X11Backing*>(&backing)) {
    window_input = x;
    window_glue.set_backing(x);
    po.session.input = WindowGlue::keymap(x->keyboard());
  }
#if PIXPATH_HAVE_GL
  if (auto* g = dynamic_cast<gl::GlBacking*>(&backing); g && g->windowed()) {
    if (auto kb = x11::Keyboard::open(); kb.ok()) {
      keyboard = std::move(*kb);
      window_input = g;
      window_glue.set_backing(g, keyboard.get());
      po.session.input = WindowGlue::keymap(keyboard->description());
    } else {
      err << who << "the GL windows take no input: " << kb.error().message() << "\n";
    }
  }
#endif
  if (window_input) po.observers.push_back(&window_glue);
#endif
  // The UI loop sleeps in poll() on the X connection and on this eventfd, which the engine
  // signals when it has UI work (windows with input only; else on the engine's own wait).
  const int input_fd = window_input ? window_input->event_fd() : -1;
  const int wake_fd = input_fd >= 0 ? ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
  if (wake_fd >= 0) {
    po.engine.wakeup = [wake_fd] {
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
    };
  }
  struct FdCloser {
    int fd;
    ~FdCloser() {
      if (fd >= 0) ::close(fd);
    }
  } close_wake_fd{wake_fd};
  if (snapshots) po.observers.push_back(&*snapshots);
  if (recording) po.observers.push_back(&*recording);
  po.limits = o.limits;
  po.engine.decode_threads = o.decode_threads;
  po.engine.video_threads = o.video_threads;
  po.engine.decoder = *decoder_choice;
  po.engine.gpu_max_batch = o.gpu_max_batch;
  po.engine.gpu_min_pixels = o.gpu_min_pixels;
  po.engine.gpu_route_by_measurement = o.gpu_routing != "size";
  xpra::SessionOptions& so = po.session;
  so.url = o.url;
  so.encodings = encodings;
  for (const auto& v : codecs::video_codings()) so.video_csc_modes[v] = codecs::video_csc_modes(v);
  so.video_max_width = codecs::kVideoMaxWidth;
  so.video_max_height = codecs::kVideoMaxHeight;
  so.preferred_encoding = o.encoding;
  so.quality = o.quality;
  so.speed = o.speed;
  so.steal = o.steal;
  if (o.packet_encoder != "auto") {
    auto enc = xpra::parse_packet_encoder(o.packet_encoder);
    if (!enc) {
      err << who << "unknown --packet-encoder '" << o.packet_encoder << "' (auto, rencodeplus, bencode)\n";
      return 2;
    }
    so.packet_encoder = *enc;
  }
  so.transport = o.transport;
  // Off only by explicit choice; the transport logs a warning when it connects so.
  if (o.ssl_insecure || o.ssl_verify_mode == "none") so.transport.tls.verify = false;
  so.password.file = o.password_file;  // else XPRA_PASSWORD (PasswordSource's default)
  so.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.connect_timeout_s * 1000));
  so.log = [who, tty](std::string_view line) {
    std::fprintf(stderr, "%s%s%.*s\n", tty ? "\r\033[K" : "", who.c_str(), int(line.size()), line.data());
  };

  SignalScope signals;
  auto pipeline_or = client::ClientPipeline::start(backing, std::move(po));
  if (!pipeline_or.ok()) {
    err << who << pipeline_or.error().message() << "\n";
    return 1;
  }
  client::ClientPipeline& pipeline = **pipeline_or;
  if (snapshots) snapshots->set_window_table(pipeline);
  window_glue.set_pipeline(&pipeline);
  if (auto ready = pipeline.wait_until_ready(std::chrono::milliseconds(
          static_cast<int64_t>(o.connect_timeout_s * 1000)));
      !ready.ok()) {
    err << who << ready.error().message() << "\n";
    pipeline.stop("client exit");
    return 1;
  }

  // The UI loop.
  const auto snapshot_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o.snapshot_interval_s));
  auto next_snapshot =
      snapshots && o.snapshot_interval_s > 0 ? start + snapshot_every : Clock::time_point::max();
  const auto status_every = tty ? 1s : 5s;
  auto next_status = start + status_every;
  auto interval_start = start;
  std::string stop_reason;
  auto status_line = [&](bool final_line) {
    const auto now = Clock::now();
    SessionSummary::Interval i = summary.take_interval();
    const double dt = std::max(1e-3, seconds(now - interval_start));
    interval_start = now;
    const auto p = summarize_latency(std::move(i.latency_us));
    std::fprintf(stderr, "%s%s%.0f s: %zu windows, %.1f paints/s, latency p50 %.2f ms, %lld errors%s",
                 tty ? "\r\033[K" : "", who.c_str(), seconds(now - start), backing.windows().size(),
                 static_cast<double>(i.painted) / dt, static_cast<double>(p.p50) / 1000.0,
                 static_cast<long long>(i.errors), tty && !final_line ? "" : "\n");
  };

  for (;;) {
    pipeline.run_ui_once();
    const auto now = Clock::now();
    if (int sig = g_signal.load()) {
      stop_reason = sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)";
      break;
    }
    if (o.exit_after_s > 0 && now - start >= std::chrono::duration<double>(o.exit_after_s)) {
      stop_reason = "--exit-after reached";
      break;
    }
    if (pipeline.closed()) {
      stop_reason = "the session ended";
      break;
    }
    if (now >= next_snapshot) next_snapshot = snapshots->snapshot_all() ? now + snapshot_every : now + 50ms;
    if (status_lines && now >= next_status) {
      status_line(false);
      next_status = now + status_every;
    }
#if PIXPATH_HAVE_X11
    if (window_input) {
      if (auto pumped = window_glue.pump(); !pumped.ok()) {
        stop_reason = pumped.error().message();
        break;
      }
      if (wake_fd >= 0) {
        pollfd fds[2] = {{input_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        ::poll(fds, 2, 50);
        uint64_t count;
        [[maybe_unused]] ssize_t n = ::read(wake_fd, &count, sizeof count);
        continue;
      }
    }
#endif
    pipeline.wait_for_work(50ms);
  }

  // The clean end (client_pipeline.h): paint and ack what arrived, say goodbye while still
  // painting and acking what comes meanwhile, then the final snapshots (SnapshotObserver).
  const bool idle = pipeline.stop("client request: " + stop_reason);
  if (status_lines) status_line(true);

  SessionOutcome outcome;
  outcome.command = o.command;
  outcome.url = o.url;
  outcome.encoding = o.encoding;
  outcome.stop_reason = stop_reason;
  outcome.duration_s = seconds(Clock::now() - start);
  outcome.windows = pipeline.windows();
  outcome.stats = pipeline.stats();
  outcome.engine_idle_at_exit = idle;
  outcome.end = pipeline.end();
  if (recording) {
    outcome.record_file = o.record_file;
    outcome.recorded_bytes = recording->bytes_written();
    outcome.recording_errors = recording->close();
  }
  if (snapshots) {
    for (const auto& w : outcome.windows) outcome.snapshot_files[w.wid] = snapshots->file_of(w.wid);
    outcome.snapshot_errors = snapshots->errors();
  }

  const nlohmann::json j = summary_json(summary, outcome);
  if (o.json) {
    out << j.dump(2) << "\n";
  } else {
    print_summary_table(out, j, outcome);
  }
  for (const auto& e : outcome.recording_errors) err << who << "recording: " << e << "\n";
  for (const auto& e : outcome.snapshot_errors) err << who << "snapshot: " << e << "\n";
  if (outcome.end && outcome.end->error) {
    err << who << outcome.end->message() << "\n";
    return 1;
  }
  return outcome.recording_errors.empty() && outcome.snapshot_errors.empty() ? 0 : 1;
}

}  // namespace pixpath::tools
