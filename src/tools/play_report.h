// What `pixpath play` prints about a played recording (paint::PlayResult, from
// paint::play_recording): a table for people, or one JSON document for programs.
#pragma once

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "pixpath/paint/player.h"

namespace pixpath::tools {

// Every field of the result; latencies in microseconds ("p50_us", ...), per coding under
// "per_coding" and the totals under "all".
nlohmann::json play_result_json(const paint::PlayResult& result);

// A summary, then per coding (and "all"): draws, errors, decoder warnings, direct decodes, bytes in and the
// decode, paint and total latency percentiles in milliseconds; then the GPU's share, errors
// and snapshots written.
void print_play_table(const paint::PlayResult& result, std::ostream& out);

}  // namespace pixpath::tools
