#include "play_report.h"

#include <cstdio>
#include <iomanip>
#include <ostream>
#include <string>

namespace pixpath::tools {
namespace {

using paint::CodingStats;
using paint::LatencySummary;
using paint::PlayResult;

nlohmann::json latency_json(const LatencySummary& l) {
  return {{"count", l.count}, {"p50_us", l.p50}, {"p90_us", l.p90}, {"p99_us", l.p99},
          {"max_us", l.max},  {"mean_us", l.mean}};
}

nlohmann::json coding_json(const CodingStats& s) {
  return {{"coding", s.coding},       {"draws", s.draws},
          {"painted", s.painted},     {"errors", s.errors},
          {"skipped", s.skipped},     {"direct", s.direct},
          {"bytes_in", s.bytes_in},   {"gpu", s.gpu},
          {"cpu", s.cpu},             {"gpu_fallbacks", s.gpu_fallbacks},
          {"warnings", s.warnings},   {"warned_draws", s.warned_draws},
          {"queue", latency_json(s.queue)},
          {"decode", latency_json(s.decode)}, {"paint", latency_json(s.paint)},
          {"total", latency_json(s.total)}};
}

std::string ms(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(us) / 1000.0);
  return buf;
}

void row(std::ostream& out, const CodingStats& s) {
  out << std::left << std::setw(8) << s.coding << std::right << std::setw(7) << s.draws
      << std::setw(7) << s.errors << std::setw(7) << s.warnings << std::setw(7) << s.direct << std::setw(11) << s.bytes_in;
  for (const LatencySummary* l : {&s.decode, &s.paint, &s.total})
    out << "  " << std::setw(6) << ms(l->p50) << std::setw(7) << ms(l->p90) << std::setw(7)
        << ms(l->p99) << std::setw(8) << ms(l->max);
  out << "\n";
}

}  // namespace

nlohmann::json play_result_json(const PlayResult& r) {
  nlohmann::json j = {{"file", r.file},
                      {"backing", r.backing},
                      {"pace", r.pace},
                      {"decode_threads", r.decode_threads},
                      {"video_threads", r.video_threads},
                      {"events", r.events},
                      {"recorded_s", r.recorded_s},
                      {"wall_s", r.wall_s},
                      {"fps", r.fps},
                      {"mbytes_per_s", r.mbytes_per_s},
                      {"copies", r.copies},
                      {"copy_bytes", r.copy_bytes},
                      {"decoder", r.decoder},
                      {"decoder_reason", r.decoder_reason},
                      {"gpu_copy_calls", r.gpu_copy_calls},
                      {"gpu_decodes", r.gpu_decodes},
                      {"gpu_decode_calls", r.gpu_decode_calls},
                      {"gpu_batched_max", r.gpu_batched_max},
                      {"gpu_max_batch", r.gpu_max_batch},
                      {"last_gpu_error", r.last_gpu_error},
                      {"gpu_routed_to_cpu", r.gpu_routed_to_cpu},
                      {"last_gpu_route_reason", r.last_gpu_route_reason},
                      {"gpu_routing", r.gpu_routing},
                      {"gpu_route_explored", r.gpu_route_explored},
                      {"gpu_route_table", r.gpu_route_table},
                      {"warnings", r.warnings},
                      {"all", coding_json(r.all)},
                      {"errors", r.errors},
                      {"snapshots", r.snapshots}};
  nlohmann::json per = nlohmann::json::array();
  for (const auto& s : r.per_coding) per.push_back(coding_json(s));
  j["per_coding"] = per;
  return j;
}

void print_play_table(const PlayResult& r, std::ostream& out) {
  out << r.file << ": " << r.all.draws << " draws in " << std::fixed << std::setprecision(3)
      << r.wall_s << " s (recorded " << r.recorded_s << " s), backing " << r.backing << ", pace "
      << r.pace << ", " << r.decode_threads << " decode threads\n";
  out << std::setprecision(1) << r.fps << " draws/s, " << r.mbytes_per_s << " MB/s in, "
      << r.copies << " pixel copies (" << r.copy_bytes << " bytes)\n";
  out << "decoder " << r.decoder << " (" << r.decoder_reason << ")\n";
  out << "latency in ms        decode p50/p90/p99/max        paint p50/p90/p99/max        "
         "total p50/p90/p99/max\n";
  out << "coding    draws   errs  warns direct   bytes_in\n";
  for (const auto& s : r.per_coding) row(out, s);
  row(out, r.all);
  for (const auto& s : r.per_coding)
    if (s.gpu > 0 || s.gpu_fallbacks > 0)
      out << s.coding << ": gpu " << s.gpu << ", cpu " << s.cpu << ", of which gpu fallbacks "
          << s.gpu_fallbacks << "\n";
  if (r.gpu_decode_calls > 0)
    out << "gpu: " << r.gpu_decodes << " pictures in " << r.gpu_decode_calls
        << " decode calls (largest batch " << r.gpu_batched_max << ", limit " << r.gpu_max_batch
        << "), " << r.gpu_copy_calls
        << " texture copy calls\n";
  if (!r.last_gpu_error.empty()) out << "last gpu error: " << r.last_gpu_error << "\n";
  if (r.gpu_routed_to_cpu > 0)
    out << "gpu route: " << r.gpu_routed_to_cpu << " draws decoded on the CPU instead (last: "
        << r.last_gpu_route_reason << ")\n";
  if (!r.gpu_route_table.empty())
    out << "gpu routing by measurement (" << r.gpu_route_explored << " draws explored the other route): "
        << r.gpu_route_table << "\n";
  for (const auto& e : r.errors) out << "error: " << e << "\n";
  for (const auto& w : r.warnings) out << "warning: " << w << "\n";
  for (const auto& s : r.snapshots) out << "snapshot: " << s << "\n";
}

}  // namespace pixpath::tools
