#include "pixpath/paint/player.h"

#include <chrono>
#include <filesystem>
#include <map>

#include "pixpath/core/counters.h"
#include "pixpath/paint/paint_engine.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/paint/recording.h"

namespace pixpath::paint {
namespace {

using Clock = std::chrono::steady_clock;

struct Samples {
  CodingStats stats;
  std::vector<int64_t> queue, decode, paint, total;
  void add(const DamageAck& ack, const PaintReport& r) {
    stats.draws++;
    stats.bytes_in += r.bytes_in;
    if (r.decoder == "gpu") stats.gpu++;
    else if (r.decoder == "gpu->cpu") stats.gpu_fallbacks++, stats.cpu++;
    else stats.cpu++;
    stats.warnings += r.warnings;
    if (r.warnings > 0) stats.warned_draws++;
    if (ack.decode_time_us > 0) {
      stats.painted++;
      if (r.direct) stats.direct++;
      queue.push_back(r.queue_us);
      decode.push_back(r.decode_us);
      paint.push_back(r.paint_us);
      total.push_back(r.total_us);
    } else if (ack.decode_time_us < 0) {
      stats.errors++;
    } else {
      stats.skipped++;
    }
  }
  CodingStats finish() {
    stats.queue = summarize_latency(std::move(queue));
    stats.decode = summarize_latency(std::move(decode));
    stats.paint = summarize_latency(std::move(paint));
    stats.total = summarize_latency(std::move(total));
    return stats;
  }
};

Result<void> snapshot_to(Backing& backing, int64_t wid, const std::string& path) {
  PIXPATH_TRY(std::vector<uint8_t> png, snapshot_png(backing, wid));
  return codecs::write_file(path, png);
}

}  // namespace

Result<PlayResult> play_recording(const PlayOptions& options, Backing& backing) {
  PIXPATH_TRY(RecordingReader reader, RecordingReader::open(options.file));
  PIXPATH_TRY(std::vector<RecordedEvent> events, reader.read_all());
  if (!options.snapshot_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.snapshot_dir, ec);
    if (ec) return Error(ErrorCode::Io, options.snapshot_dir, "create directory", ec.message());
  }

  PlayResult result;
  result.file = options.file;
  result.backing = std::string(backing.name());
  result.pace = options.pace == Pace::Max ? "max" : "recorded";
  result.decode_threads = options.decode_threads;
  result.events = static_cast<int64_t>(events.size());
  if (!events.empty()) result.recorded_s = static_cast<double>(events.back().time_us) / 1e6;

  std::map<std::string, Samples> per_coding;
  Samples all;
  all.stats.coding = "all";
  int64_t submitted = 0, acked = 0;
  Clock::time_point last_ack{};
  std::vector<Error> snapshot_errors;
  std::map<int64_t, int> lost_count;

  PaintEngineConfig config;
  config.decode_threads = options.decode_threads;
  config.video_threads = options.video_threads;
  config.direct_decode = options.direct_decode;
  config.decoder = options.decoder;
  config.gpu_max_batch = options.gpu_max_batch;
  config.gpu_min_pixels = options.gpu_min_pixels;
  config.gpu_route_by_measurement = options.gpu_route_by_measurement;
  config.gpu_factory = options.gpu_factory;
  config.gpu_decoder = options.gpu_decoder;
  config.on_ack = [&](const DamageAck& ack, const PaintReport& report) {
    acked++;
    last_ack = Clock::now();
    auto& s = per_coding[report.coding];
    s.stats.coding = report.coding;
    s.add(ack, report);
    all.add(ack, report);
    if (ack.decode_time_us < 0 && result.errors.size() < 20)
      result.errors.push_back("seq " + std::to_string(ack.sequence) + " wid " +
                              std::to_string(ack.wid) + ": " + ack.message);
    if (report.warnings > 0 && result.warnings.size() < 20)
      result.warnings.push_back("seq " + std::to_string(ack.sequence) + " wid " +
                                std::to_string(ack.wid) + ": " + report.warning);
  };
  if (!options.snapshot_dir.empty()) {
    config.before_window_destroy = [&](int64_t wid) {
      const std::string path = options.snapshot_dir + "/window-" + std::to_string(wid) +
                               "-lost-" + std::to_string(++lost_count[wid]) + ".png";
      auto r = snapshot_to(backing, wid, path);
      if (r.ok())
        result.snapshots.push_back(path);
      else
        snapshot_errors.push_back(r.error());
    };
  }
  PIXPATH_TRY(std::unique_ptr<PaintEngine> engine, PaintEngine::create(backing, config));
  {
    const auto st = engine->stats();
    result.decoder = st.decoder;
    result.decoder_reason = st.decoder_reason;
  }

  const int max_in_flight =
      options.max_in_flight > 0 ? options.max_in_flight : 4 * options.decode_threads;
  const auto before = counters();
  const auto start = Clock::now();
  auto last_progress = start;
  auto report_progress = [&](int64_t done, bool force) {
    if (!options.progress) return;
    const auto now = Clock::now();
    if (!force && now - last_progress < std::chrono::milliseconds(100)) return;
    last_progress = now;
    options.progress({done, result.events, acked,
                      std::chrono::duration<double>(now - start).count()});
  };

  int64_t done = 0;
  for (RecordedEvent& e : events) {
    if (options.pace == Pace::Recorded) {
      const auto due = start + std::chrono::microseconds(e.time_us);
      for (;;) {
        engine->run_ui_once();
        const auto now = Clock::now();
        if (now >= due) break;
        engine->wait_for_work(std::chrono::duration_cast<std::chrono::microseconds>(due - now));
      }
    } else if (e.type == RecordType::Draw) {
      while (submitted - acked >= max_in_flight) {
        if (engine->run_ui_once() == 0) engine->wait_for_work(std::chrono::milliseconds(5));
      }
    }
    switch (e.type) {
      case RecordType::WindowNew:
        engine->window_new(e.wid, e.w, e.h);
        break;
      case RecordType::WindowResize:
        engine->window_resize(e.wid, e.w, e.h);
        break;
      case RecordType::WindowLost:
        engine->window_lost(e.wid);
        break;
      case RecordType::Draw:
        e.draw.received = Clock::now();
        submitted++;
        engine->submit(std::move(e.draw));
        break;
    }
    engine->run_ui_once();
    report_progress(++done, false);
  }
  const bool idle = engine->wait_idle(std::chrono::seconds(120));
  if (!options.snapshot_dir.empty()) {
    for (int64_t wid : backing.windows()) {
      const std::string path = options.snapshot_dir + "/window-" + std::to_string(wid) + ".png";
      auto r = snapshot_to(backing, wid, path);
      if (r.ok())
        result.snapshots.push_back(path);
      else
        snapshot_errors.push_back(r.error());
    }
  }
  engine->shutdown();
  const auto after = counters();
  {
    const auto st = engine->stats();
    result.video_threads = st.video_threads;
    result.gpu_copy_calls = st.gpu_copy_calls;
    result.gpu_decodes = st.gpu_decodes;
    result.gpu_decode_calls = st.gpu_decode_calls;
    result.gpu_batched_max = st.gpu_batched_max;
    result.gpu_max_batch = st.gpu_max_batch;
    result.last_gpu_error = st.last_gpu_error;
    result.gpu_routed_to_cpu = st.gpu_routed_to_cpu;
    result.last_gpu_route_reason = st.last_gpu_route_reason;
    result.gpu_routing = st.gpu_routing;
    result.gpu_route_explored = st.gpu_route_explored;
    result.gpu_route_table = st.gpu_route_table;
  }
  report_progress(done, true);

  if (last_ack == Clock::time_point{}) last_ack = Clock::now();
  result.wall_s = std::chrono::duration<double>(last_ack - start).count();
  result.copies = after.copies - before.copies;
  result.copy_bytes = after.copy_bytes - before.copy_bytes;
  for (auto& [coding, s] : per_coding) result.per_coding.push_back(s.finish());
  result.all = all.finish();
  if (result.wall_s > 0) {
    result.fps = static_cast<double>(result.all.painted) / result.wall_s;
    result.mbytes_per_s = static_cast<double>(result.all.bytes_in) / 1e6 / result.wall_s;
  }
  if (!idle)
    return Error(ErrorCode::Internal, "play", "wait for the engine",
                 "still busy after 120 s; " + std::to_string(acked) + " of " +
                     std::to_string(submitted) + " draws acknowledged");
  if (!snapshot_errors.empty()) return snapshot_errors.front().within("play", "snapshot");
  return result;
}

}  // namespace pixpath::paint
