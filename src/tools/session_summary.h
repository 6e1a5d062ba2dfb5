// SessionSummary: the numbers `pixpath attach` / `pixpath record` print — per-coding draw
// tallies with latency and decode-time percentiles, the delta and store draws, the first
// error messages, the server's version — collected as a ClientObserver, plus the status-line
// figures (paints and latency since the last line). summary_json() makes the --json document
// (its keys are part of the command's interface) and print_summary_table() the plain one.
//
// Threads: on_server_hello and on_draw on the reader thread, on_ack on the UI thread (or the
// reader thread for draws the engine refused at submit); every method locks, so any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pixpath/client/client_pipeline.h"
#include "pixpath/core/latency_summary.h"
#include "pixpath/core/thread_annotations.h"

namespace pixpath::tools {


// Draws of one kind and where their time went.
struct Tally {
  int64_t draws = 0, painted = 0, errors = 0, skipped = 0;
  int64_t gpu = 0, cpu = 0, gpu_fallbacks = 0;  // PaintReport::decoder: gpu, cpu, gpu->cpu (also cpu)
  uint64_t bytes_in = 0;
  std::vector<int64_t> total_us, decode_us;
  void add(const DamageAck& ack, const paint::PaintReport& r);
  nlohmann::json json(const std::string& name) const;
};

class SessionSummary final : public client::ClientObserver {
 public:
  void on_server_hello(const xpra::ServerInfo& info) override;
  void on_draw(const DrawPacket& d) override;
  void on_ack(const DamageAck& ack, const paint::PaintReport& report, client::AckDelivery) override;

  // Paints and their latencies since the last call, and every error so far (status lines).
  struct Interval {
    int64_t painted = 0;
    std::vector<int64_t> latency_us;
    int64_t errors = 0;
  };
  Interval take_interval();

  std::string server_version();
  // "all", "per_coding", "delta", "store", "paints_per_s", "errors" of the JSON summary.
  void add_json(nlohmann::json& j, double duration_s);

 private:
  Mutex mu_;
  std::string server_version_ PIXPATH_GUARDED_BY(mu_);
  std::map<std::string, Tally> per_coding_ PIXPATH_GUARDED_BY(mu_);
  Tally all_ PIXPATH_GUARDED_BY(mu_), delta_ PIXPATH_GUARDED_BY(mu_), store_ PIXPATH_GUARDED_BY(mu_);
  // (wid, sequence) -> (delta, store) of draws in flight that are either.
  std::map<std::pair<int64_t, int64_t>, std::pair<bool, bool>> delta_flags_ PIXPATH_GUARDED_BY(mu_);
  std::vector<std::string> error_messages_ PIXPATH_GUARDED_BY(mu_);
  int64_t interval_painted_ PIXPATH_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> interval_latency_ PIXPATH_GUARDED_BY(mu_);
};

// What the summary says about the session beyond the tallies.
struct SessionOutcome {
  std::string command;  // "attach", "record"
  std::string url, encoding, stop_reason;
  double duration_s = 0;
  std::vector<client::ClientWindow> windows;
  std::map<int64_t, std::string> snapshot_files;  // wid -> last file written
  client::ClientPipelineStats stats;
  bool engine_idle_at_exit = false;
  std::optional<xpra::SessionEnd> end;
  std::optional<std::string> record_file;  // set for `record`
  uint64_t recorded_bytes = 0;
  std::vector<std::string> recording_errors, snapshot_errors;
};

// The --json document.
nlohmann::json summary_json(SessionSummary& summary, const SessionOutcome& outcome);
// The plain summary, from that document.
void print_summary_table(std::ostream& out, const nlohmann::json& j, const SessionOutcome& outcome);

}  // namespace pixpath::tools
