#include "viewer.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pixpath/codecs/registry.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/backing_registry.h"
#include "pixpath/paint/paint_engine.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/paint/recording.h"

namespace pixpath::tools {
namespace {

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

struct Percentiles {
  int64_t count = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Percentiles percentiles(std::vector<int64_t> v) {
  Percentiles p;
  p.count = static_cast<int64_t>(v.size());
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  p.p50 = rank(0.5);
  p.p90 = rank(0.9);
  p.p99 = rank(0.99);
  p.max = v.back();
  return p;
}
nlohmann::json to_json(const Percentiles& p) {
  return {{"count", p.count}, {"p50_us", p.p50}, {"p90_us", p.p90}, {"p99_us", p.p99}, {"max_us", p.max}};
}

struct Tally {
  int64_t draws = 0, painted = 0, errors = 0, skipped = 0;
  uint64_t bytes_in = 0;
  std::vector<int64_t> total_us, decode_us;
  void add(const DamageAck& ack, const paint::PaintReport& r) {
    draws++;
    bytes_in += r.bytes_in;
    if (ack.decode_time_us > 0) {
      painted++;
      total_us.push_back(r.total_us);
      decode_us.push_back(r.decode_us);
    } else if (ack.decode_time_us < 0) {
      errors++;
    } else {
      skipped++;
    }
  }
  nlohmann::json json(const std::string& name) const {
    return {{"coding", name},          {"draws", draws},
            {"painted", painted},      {"errors", errors},
            {"skipped", skipped},      {"bytes_in", bytes_in},
            {"latency", to_json(percentiles(total_us))},
            {"decode", to_json(percentiles(decode_us))}};
  }
};

struct WindowRecord {
  int64_t wid = 0;
  int x = 0, y = 0, w = 0, h = 0;
  bool override_redirect = false;
  bool lost = false;
  std::string title;
  std::string snapshot;  // last file written
};

// The session's listener: runs on the reader thread, hands everything to the engine and the
// recording writer.
class ViewerListener final : public xpra::SessionListener {
 public:
  ViewerListener(paint::PaintEngine& engine, std::optional<paint::RecordingWriter>& recording,
                 Clock::time_point start)
      : engine_(engine), recording_(recording), start_(start) {}

  void on_server_hello(const xpra::ServerInfo& info) override {
    MutexLock lock(mu_);
    server_version_ = info.version;
  }
  void on_window_new(const xpra::WindowInfo& w) override {
    {
      MutexLock lock(mu_);
      WindowRecord& r = windows_[w.wid];
      r = WindowRecord{w.wid, w.x, w.y, w.w, w.h, w.override_redirect, false, w.title, r.snapshot};
    }
    engine_.window_new(w.wid, w.w, w.h);
    paint::RecordedEvent e;
    e.type = paint::RecordType::WindowNew;
    e.wid = w.wid;
    e.x = w.x, e.y = w.y, e.w = w.w, e.h = w.h;
    record(std::move(e), Clock::now());
  }
  void on_window_lost(int64_t wid) override {
    {
      MutexLock lock(mu_);
      windows_[wid].lost = true;
    }
    engine_.window_lost(wid);
    paint::RecordedEvent e;
    e.type = paint::RecordType::WindowLost;
    e.wid = wid;
    record(std::move(e), Clock::now());
  }
  void on_metadata(const xpra::WindowMetadata& m) override {
    if (!m.title) return;
    MutexLock lock(mu_);
    windows_[m.wid].title = *m.title;
  }
  void on_move_resize(const xpra::WindowGeometry& g) override {
    bool resized = false;
    {
      MutexLock lock(mu_);
      auto it = windows_.find(g.wid);
      if (it == windows_.end()) return;
      resized = it->second.w != g.w || it->second.h != g.h;
      it->second.x = g.x, it->second.y = g.y, it->second.w = g.w, it->second.h = g.h;
    }
    if (!resized) return;
    engine_.window_resize(g.wid, g.w, g.h);
    paint::RecordedEvent e;
    e.type = paint::RecordType::WindowResize;
    e.wid = g.wid;
    e.w = g.w, e.h = g.h;
    record(std::move(e), Clock::now());
  }
  void on_draw(DrawPacket&& d) override {
    {
      MutexLock lock(mu_);
      draws_received_++;
      if (d.options.delta || d.options.store)
        delta_flags_[{d.wid, d.sequence}] = {d.options.delta.has_value(), d.options.store.has_value()};
    }
    if (recording_) {
      paint::RecordedEvent e;
      e.type = paint::RecordType::Draw;
      e.wid = d.wid;
      e.draw = d;  // the data is shared, not copied
      record(std::move(e), d.received);
    }
    engine_.submit(std::move(d));
  }
  void on_closed(const xpra::SessionEnd& end) override {
    MutexLock lock(mu_);
    end_ = end;
  }

  // Any thread: was this draw a delta / store draw? (forgets it)
  std::pair<bool, bool> take_delta_flags(int64_t wid, int64_t sequence) {
    MutexLock lock(mu_);
    auto it = delta_flags_.find({wid, sequence});
    if (it == delta_flags_.end()) return {false, false};
    auto f = it->second;
    delta_flags_.erase(it);
    return f;
  }
  std::optional<WindowRecord> window(int64_t wid) {
    MutexLock lock(mu_);
    auto it = windows_.find(wid);
    if (it == windows_.end()) return std::nullopt;
    return it->second;
  }
  void set_snapshot(int64_t wid, const std::string& path) {
    MutexLock lock(mu_);
    windows_[wid].snapshot = path;
  }
  std::vector<WindowRecord> windows() {
    MutexLock lock(mu_);
    std::vector<WindowRecord> v;
    for (const auto& [_, w] : windows_) v.push_back(w);
    return v;
  }
  std::optional<xpra::SessionEnd> end() {
    MutexLock lock(mu_);
    return end_;
  }
  std::string server_version() {
    MutexLock lock(mu_);
    return server_version_;
  }
  int64_t draws_received() {
    MutexLock lock(mu_);
    return draws_received_;
  }
  std::vector<std::string> recording_errors() {
    MutexLock lock(mu_);
    return recording_errors_;
  }

 private:
  void record(paint::RecordedEvent e, Clock::time_point when) {
    if (!recording_) return;
    MutexLock lock(mu_);
    // Arrival times never go backwards in a recording (a packet parsed from the same read
    // as the previous one may carry an earlier stamp than that one's callback).
    int64_t t = std::chrono::duration_cast<std::chrono::microseconds>(when - start_).count();
    e.time_us = std::max({t, last_time_us_, int64_t{0}});
    last_time_us_ = e.time_us;
    auto r = recording_->write(e);
    if (!r.ok() && recording_errors_.size() < 5) recording_errors_.push_back(r.error().message());
  }

  paint::PaintEngine& engine_;
  std::optional<paint::RecordingWriter>& recording_;  // written only on the reader thread
  const Clock::time_point start_;
  Mutex mu_;
  std::map<int64_t, WindowRecord> windows_ PIXPATH_GUARDED_BY(mu_);
  std::map<std::pair<int64_t, int64_t>, std::pair<bool, bool>> delta_flags_ PIXPATH_GUARDED_BY(mu_);
  std::optional<xpra::SessionEnd> end_ PIXPATH_GUARDED_BY(mu_);
  std::string server_version_ PIXPATH_GUARDED_BY(mu_);
  int64_t draws_received_ PIXPATH_GUARDED_BY(mu_) = 0;
  int64_t last_time_us_ PIXPATH_GUARDED_BY(mu_) = 0;
  std::vector<std::string> recording_errors_ PIXPATH_GUARDED_BY(mu_);
};

// Writes via a temporary name and a rename, so readers never see half a file.
Result<void> write_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  PIXPATH_CHECK(codecs::write_file(tmp, bytes));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error(ErrorCode::Io, path, "rename snapshot", ec.message());
  return ok();
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::string sanitise_title(const std::string& title) {
  std::string s;
  for (char c : title) {
    if (s.size() >= 64) break;
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
    s += keep ? c : '_';
  }
  if (s.empty() || s == "." || s == "..") s = "untitled";
  return s;
}

int run_viewer(const ViewerOptions& o, std::ostream& out, std::ostream& err) {
  const std::string who = "pixpath " + o.command + ": ";
  client::apply_picture_limits(o.limits);  // process-wide; before any thread makes pictures
  const auto& registry = codecs::CodecRegistry::builtin();
  std::vector<std::string> encodings = registry.decodable_codings();
  if (std::find(encodings.begin(), encodings.end(), o.encoding) == encodings.end()) {
    std::string have;
    for (const auto& e : encodings) have += (have.empty() ? "" : ", ") + e;
    err << who << "cannot paint --encoding '" << o.encoding << "' (this build paints: " << have << ")\n";
    return 2;
  }
  encodings.push_back("scroll");  // painted by the engine itself

  // Windowed through the GL backing where a display exists, else headless on the CPU backing
  // (silently without a display: that is the documented default, not a surprise).
  std::string backing_name = "cpu";
  const char* display = std::getenv("DISPLAY");
  if (!o.headless && display && *display) {
    const auto names = paint::backing_names();
    if (std::find(names.begin(), names.end(), "gl-window") == names.end())
      err << who << "no GL backing in this build; running headless (CPU backing)\n";
    else
      backing_name = "gl-window";
  }
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
  std::optional<paint::RecordingWriter> recording;
  if (!o.record_file.empty()) {
    auto w = paint::RecordingWriter::create(o.record_file);
    if (!w.ok()) {
      err << who << w.error().message() << "\n";
      return 1;
    }
    recording.emplace(std::move(*w));
  }
  auto backing_or = paint::make_backing(backing_name);
  if (!backing_or.ok() && backing_name != "cpu") {
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

  // Acks and statistics (UI thread; after shutdown possibly the reader thread, hence mu).
  std::mutex stats_mu;
  std::map<std::string, Tally> per_coding;
  Tally all, delta, store;
  std::vector<int64_t> interval_latency;
  int64_t interval_painted = 0;
  std::vector<std::string> error_messages;
  std::atomic<xpra::Session*> session_ptr{nullptr};
  std::atomic<int64_t> ack_failures{0};
  // Acks made after the server had closed the connection (a draw that arrived just before our
  // goodbye and was painted after the server hung up): produced, but nobody to send them to.
  std::atomic<int64_t> acks_after_close{0};
  ViewerListener* listener_ptr = nullptr;

  std::map<int64_t, std::string> snapshot_names;  // UI thread
  std::vector<std::string> snapshot_errors;       // UI thread
  auto snapshot_window = [&](int64_t wid) -> bool {
    if (o.snapshot_dir.empty() || !listener_ptr) return true;
    auto png = paint::snapshot_png(backing, wid);
    if (!png.ok()) return false;  // e.g. a direct decode in flight: try again later
    auto info = listener_ptr->window(wid);
    const std::string path = o.snapshot_dir + "/" + std::to_string(wid) + "-" +
                             sanitise_title(info ? info->title : "") + ".png";
    auto& previous = snapshot_names[wid];
    if (!previous.empty() && previous != path) std::filesystem::remove(previous);
    auto w = write_atomically(path, *png);
    if (!w.ok()) {
      if (snapshot_errors.size() < 5) snapshot_errors.push_back(w.error().message());
      return true;
    }
    previous = path;
    listener_ptr->set_snapshot(wid, path);
    return true;
  };

  paint::PaintEngineConfig config;
  config.decode_threads = o.decode_threads;
  client::apply_limits(o.limits, config);
  config.decoder = *decoder_choice;
  config.gpu_factory = cuda::gpu_draw_decoder_factory();
  config.gpu_max_batch = o.gpu_max_batch;
  config.gpu_min_pixels = o.gpu_min_pixels;
  config.on_ack = [&](const DamageAck& ack, const paint::PaintReport& report) {
    xpra::Session* s = session_ptr.load();
    if (!s || s->state() == xpra::Session::State::Closed) {
      acks_after_close++;
    } else if (!s->send_ack(ack).ok()) {
      // The connection may close between the state check and the send: that is the same case.
      if (s->state() == xpra::Session::State::Closed) {
        acks_after_close++;
      } else {
        ack_failures++;
      }
    }
    auto [is_delta, is_store] =
        listener_ptr ? listener_ptr->take_delta_flags(ack.wid, ack.sequence) : std::pair{false, false};
    std::lock_guard lock(stats_mu);
    per_coding[report.coding].add(ack, report);
    all.add(ack, report);
    if (is_delta) delta.add(ack, report);
    if (is_store) store.add(ack, report);
    if (ack.decode_time_us > 0) {
      interval_painted++;
      interval_latency.push_back(report.total_us);
    } else if (ack.decode_time_us < 0 && error_messages.size() < 20) {
      error_messages.push_back(report.coding + " seq " + std::to_string(ack.sequence) + " wid " +
                               std::to_string(ack.wid) + ": " + ack.message);
    }
  };
  config.before_window_destroy = [&](int64_t wid) { snapshot_window(wid); };
  auto engine_or = paint::PaintEngine::create(backing, config);
  if (!engine_or.ok()) {
    err << who << engine_or.error().message() << "\n";
    return 1;
  }
  paint::PaintEngine& engine = **engine_or;
  ViewerListener listener(engine, recording, start);
  listener_ptr = &listener;

  xpra::SessionOptions so;
  so.url = o.url;
  so.encodings = encodings;
  so.preferred_encoding = o.encoding;
  so.quality = o.quality;
  so.steal = o.steal;
  so.password.file = o.password_file;  // else XPRA_PASSWORD (PasswordSource's default)
  so.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.connect_timeout_s * 1000));
  client::apply_limits(o.limits, so);
  so.log = [who, tty](std::string_view line) {
    std::fprintf(stderr, "%s%s%.*s\n", tty ? "\r\033[K" : "", who.c_str(), int(line.size()), line.data());
  };

  SignalScope signals;
  auto session_or = xpra::Session::start(so, listener);
  if (!session_or.ok()) {
    err << who << session_or.error().message() << "\n";
    engine.shutdown();
    return 1;
  }
  std::unique_ptr<xpra::Session> session = std::move(*session_or);
  session_ptr.store(session.get());
  if (auto ready = session->wait_until_ready(std::chrono::milliseconds(
          static_cast<int64_t>(o.connect_timeout_s * 1000)));
      !ready.ok()) {
    err << who << ready.error().message() << "\n";
    session_ptr.store(nullptr);
    (void)session->disconnect("client exit");
    engine.shutdown();
    return 1;
  }

  // The UI loop.
  const auto snapshot_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o.snapshot_interval_s));
  auto next_snapshot = o.snapshot_interval_s > 0 ? start + snapshot_every : Clock::time_point::max();
  const auto status_every = tty ? 1s : 5s;
  auto next_status = start + status_every;
  auto interval_start = start;
  std::string stop_reason;
  auto status_line = [&](bool final_line) {
    const auto now = Clock::now();
    int64_t painted, errors;
    std::vector<int64_t> lat;
    {
      std::lock_guard lock(stats_mu);
      painted = interval_painted;
      lat.swap(interval_latency);
      interval_painted = 0;
      errors = all.errors;
    }
    const double dt = std::max(1e-3, seconds(now - interval_start));
    interval_start = now;
    const auto p = percentiles(std::move(lat));
    std::fprintf(stderr, "%s%s%.0f s: %zu windows, %.1f paints/s, latency p50 %.2f ms, %lld errors%s",
                 tty ? "\r\033[K" : "", who.c_str(), seconds(now - start), backing.windows().size(),
                 static_cast<double>(painted) / dt, static_cast<double>(p.p50) / 1000.0,
                 static_cast<long long>(errors), tty && !final_line ? "" : "\n");
  };

  for (;;) {
    engine.run_ui_once();
    const auto now = Clock::now();
    if (int sig = g_signal.load()) {
      stop_reason = sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)";
      break;
    }
    if (o.exit_after_s > 0 && now - start >= std::chrono::duration<double>(o.exit_after_s)) {
      stop_reason = "--exit-after reached";
      break;
    }
    if (session->state() == xpra::Session::State::Closed) {
      stop_reason = "the session ended";
      break;
    }
    if (now >= next_snapshot) {
      bool all_done = true;
      for (int64_t wid : backing.windows()) all_done &= snapshot_window(wid);
      next_snapshot = all_done ? now + snapshot_every : now + 50ms;
    }
    if (status_lines && now >= next_status) {
      status_line(false);
      next_status = now + status_every;
    }
    engine.wait_for_work(50ms);
  }

  // Clean end: paint and ack what arrived, say goodbye while still painting and acking what
  // comes meanwhile, then the final snapshots.
  const bool open = session->state() != xpra::Session::State::Closed;
  if (open) engine.wait_idle(2s);
  std::atomic<bool> disconnected{false};
  std::thread goodbye([&] {
    (void)session->disconnect("client request: " + stop_reason);
    disconnected.store(true);
  });
  while (!disconnected.load()) {
    engine.run_ui_once();
    engine.wait_for_work(20ms);
  }
  goodbye.join();
  session_ptr.store(nullptr);
  const bool idle = engine.wait_idle(10s);
  for (int64_t wid : backing.windows()) snapshot_window(wid);
  engine.shutdown();
  if (status_lines) status_line(true);
  const double duration = seconds(Clock::now() - start);

  uint64_t recorded_bytes = 0;
  std::vector<std::string> rec_errors = listener.recording_errors();
  if (recording) {
    recorded_bytes = recording->bytes_written();
    if (auto c = recording->close(); !c.ok()) rec_errors.push_back(c.error().message());
  }

  const auto end = listener.end();
  const bool failed = end && end->error.has_value();
  nlohmann::json j;
  j["url"] = o.url;
  j["server_version"] = listener.server_version();
  j["encoding"] = o.encoding;
  j["duration_s"] = duration;
  j["stop_reason"] = stop_reason;
  j["windows"] = nlohmann::json::array();
  for (const auto& w : listener.windows()) {
    j["windows"].push_back({{"wid", w.wid},
                            {"title", w.title},
                            {"x", w.x},
                            {"y", w.y},
                            {"w", w.w},
                            {"h", w.h},
                            {"override_redirect", w.override_redirect},
                            {"lost", w.lost},
                            {"snapshot", w.snapshot}});
  }
  {
    std::lock_guard lock(stats_mu);
    j["all"] = all.json("all");
    j["per_coding"] = nlohmann::json::array();
    for (const auto& [coding, t] : per_coding) j["per_coding"].push_back(t.json(coding));
    j["delta"] = delta.json("delta");
    j["store"] = store.json("store");
    j["paints_per_s"] = duration > 0 ? static_cast<double>(all.painted) / duration : 0.0;
    j["errors"] = error_messages;
  }
  j["draws_received"] = listener.draws_received();
  j["acks_sent"] = session->acks_sent();
  j["acks_after_close"] = acks_after_close.load();
  j["ack_failures"] = ack_failures.load();
  j["pings_answered"] = session->pings_answered();
  j["engine_idle_at_exit"] = idle;
  j["end"] = {{"by_client", end ? end->by_client : false},
              {"message", end ? end->message() : std::string("unknown")}};
  if (recording) j["recording"] = {{"file", o.record_file}, {"bytes", recorded_bytes}, {"errors", rec_errors}};
  j["snapshot_errors"] = snapshot_errors;

  if (o.json) {
    out << j.dump(2) << "\n";
  } else {
    out << o.command << " " << o.url << " (xpra " << j["server_version"].get<std::string>() << "): "
        << stop_reason << " after " << duration << " s; "
        << j["end"]["message"].get<std::string>() << "\n";
    out << all.draws << " draws, " << all.painted << " painted, " << all.errors << " errors, "
        << all.skipped << " skipped; " << delta.draws << " delta draws\n";
    for (const auto& c : j["per_coding"])
      out << "  " << c["coding"].get<std::string>() << ": " << c["draws"] << " draws, latency p50 "
          << c["latency"]["p50_us"] << " us, p99 " << c["latency"]["p99_us"] << " us\n";
    for (const auto& w : j["windows"])
      out << "  window " << w["wid"] << " '" << w["title"].get<std::string>() << "' " << w["w"] << "x"
          << w["h"] << (w["lost"].get<bool>() ? " (lost)" : "")
          << (w["snapshot"].get<std::string>().empty() ? "" : " -> " + w["snapshot"].get<std::string>())
          << "\n";
    if (recording) out << "  recording: " << o.record_file << " (" << recorded_bytes << " bytes)\n";
  }
  for (const auto& e : rec_errors) err << who << "recording: " << e << "\n";
  for (const auto& e : snapshot_errors) err << who << "snapshot: " << e << "\n";
  if (failed) {
    err << who << end->message() << "\n";
    return 1;
  }
  return rec_errors.empty() && snapshot_errors.empty() ? 0 : 1;
}

}  // namespace pixpath::tools
