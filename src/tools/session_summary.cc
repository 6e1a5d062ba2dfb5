#include "session_summary.h"

#include <algorithm>

namespace pixpath::tools {
namespace {

nlohmann::json to_json(const LatencySummary& p) {
  return {{"count", p.count}, {"p50_us", p.p50}, {"p90_us", p.p90}, {"p99_us", p.p99}, {"max_us", p.max}};
}

}  // namespace

void Tally::add(const DamageAck& ack, const paint::PaintReport& r) {
  draws++;
  bytes_in += r.bytes_in;
  // Who decoded it (jpeg on nvJPEG, video on NVDEC): "gpu", "cpu", or "gpu->cpu".
  if (r.decoder == "gpu") gpu++;
  else if (r.decoder == "gpu->cpu") gpu_fallbacks++, cpu++;
  else cpu++;
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

nlohmann::json Tally::json(const std::string& name) const {
  return {{"coding", name},          {"draws", draws},
          {"painted", painted},      {"errors", errors},
          {"skipped", skipped},      {"bytes_in", bytes_in},
          {"gpu", gpu},              {"cpu", cpu},
          {"gpu_fallbacks", gpu_fallbacks},
          {"latency", to_json(summarize_latency(total_us))},
          {"decode", to_json(summarize_latency(decode_us))}};
}

void SessionSummary::on_server_hello(const xpra::ServerInfo& info) {
  MutexLock lock(mu_);
  server_version_ = info.version;
}

void SessionSummary::on_draw(const DrawPacket& d) {
  if (!d.options.delta && !d.options.store) return;
  MutexLock lock(mu_);
  delta_flags_[{d.wid, d.sequence}] = {d.options.delta.has_value(), d.options.store.has_value()};
}

void SessionSummary::on_ack(const DamageAck& ack, const paint::PaintReport& report,
                            client::AckDelivery) {
  MutexLock lock(mu_);
  bool is_delta = false, is_store = false;
  if (auto it = delta_flags_.find({ack.wid, ack.sequence}); it != delta_flags_.end()) {
    std::tie(is_delta, is_store) = it->second;
    delta_flags_.erase(it);
  }
  per_coding_[report.coding].add(ack, report);
  all_.add(ack, report);
  if (is_delta) delta_.add(ack, report);
  if (is_store) store_.add(ack, report);
  if (ack.decode_time_us > 0) {
    interval_painted_++;
    interval_latency_.push_back(report.total_us);
  } else if (ack.decode_time_us < 0 && error_messages_.size() < 20) {
    error_messages_.push_back(report.coding + " seq " + std::to_string(ack.sequence) + " wid " +
                              std::to_string(ack.wid) + ": " + ack.message);
  }
}

SessionSummary::Interval SessionSummary::take_interval() {
  MutexLock lock(mu_);
  Interval i;
  i.painted = interval_painted_;
  i.latency_us.swap(interval_latency_);
  i.errors = all_.errors;
  interval_painted_ = 0;
  return i;
}

std::string SessionSummary::server_version() {
  MutexLock lock(mu_);
  return server_version_;
}

void SessionSummary::add_json(nlohmann::json& j, double duration_s) {
  MutexLock lock(mu_);
  j["all"] = all_.json("all");
  j["per_coding"] = nlohmann::json::array();
  for (const auto& [coding, t] : per_coding_) j["per_coding"].push_back(t.json(coding));
  j["delta"] = delta_.json("delta");
  j["store"] = store_.json("store");
  j["paints_per_s"] = duration_s > 0 ? static_cast<double>(all_.painted) / duration_s : 0.0;
  j["errors"] = error_messages_;
}

nlohmann::json summary_json(SessionSummary& summary, const SessionOutcome& o) {
  nlohmann::json j;
  j["url"] = o.url;
  j["server_version"] = summary.server_version();
  j["encoding"] = o.encoding;
  j["duration_s"] = o.duration_s;
  j["stop_reason"] = o.stop_reason;
  j["windows"] = nlohmann::json::array();
  for (const auto& w : o.windows) {
    auto file = o.snapshot_files.find(w.wid);
    j["windows"].push_back({{"wid", w.wid},
                            {"title", w.title},
                            {"x", w.x},
                            {"y", w.y},
                            {"w", w.w},
                            {"h", w.h},
                            {"override_redirect", w.override_redirect},
                            {"lost", w.lost},
                            {"snapshot", file == o.snapshot_files.end() ? "" : file->second}});
  }
  summary.add_json(j, o.duration_s);
  j["draws_received"] = o.stats.draws_submitted;
  j["acks_sent"] = o.stats.session_acks_sent;
  j["acks_after_close"] = o.stats.acks_after_close;
  j["ack_failures"] = o.stats.acks_send_failed;
  j["pings_answered"] = o.stats.pings_answered;
  j["engine_idle_at_exit"] = o.engine_idle_at_exit;
  j["end"] = {{"by_client", o.end ? o.end->by_client : false},
              {"message", o.end ? o.end->message() : std::string("unknown")}};
  if (o.record_file) {
    j["recording"] = {{"file", *o.record_file}, {"bytes", o.recorded_bytes}, {"errors", o.recording_errors}};
  }
  j["snapshot_errors"] = o.snapshot_errors;
  return j;
}

void print_summary_table(std::ostream& out, const nlohmann::json& j, const SessionOutcome& o) {
  const auto& all = j["all"];
  out << o.command << " " << o.url << " (xpra " << j["server_version"].get<std::string>() << "): "
      << o.stop_reason << " after " << o.duration_s << " s; " << j["end"]["message"].get<std::string>()
      << "\n";
  out << all["draws"].get<int64_t>() << " draws, " << all["painted"].get<int64_t>() << " painted, "
      << all["errors"].get<int64_t>() << " errors, " << all["skipped"].get<int64_t>() << " skipped; "
      << j["delta"]["draws"].get<int64_t>() << " delta draws\n";
  for (const auto& c : j["per_coding"])
    out << "  " << c["coding"].get<std::string>() << ": " << c["draws"] << " draws, latency p50 "
        << c["latency"]["p50_us"] << " us, p99 " << c["latency"]["p99_us"] << " us\n";
  for (const auto& w : j["windows"])
    out << "  window " << w["wid"] << " '" << w["title"].get<std::string>() << "' " << w["w"] << "x"
        << w["h"] << (w["lost"].get<bool>() ? " (lost)" : "")
        << (w["snapshot"].get<std::string>().empty() ? "" : " -> " + w["snapshot"].get<std::string>())
        << "\n";
  if (o.record_file) out << "  recording: " << *o.record_file << " (" << o.recorded_bytes << " bytes)\n";
}

}  // namespace pixpath::tools
