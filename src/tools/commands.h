// Each subcommand of the `pixpath` tool lives in its own cmd_*.cc and registers itself on the
// CLI11 app through one function declared here; main.cc calls them in order.
//
// Conventions shared by every subcommand:
//   - exit status 0 on success, 1 when the work failed (file, network, decode), 2 on bad
//     arguments (main.cc maps CLI11's parse errors to 2 as well), 3 (kDecodedWithWarnings,
//     `decode` only) when the picture decoded with warnings (damaged data; output written);
//   - errors are one line on stderr, "pixpath SUBCOMMAND: reason";
//   - --json prints one JSON document on stdout and nothing else there.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace pixpath::tools {

// `pixpath decode`: the picture decoded, but the decoder warned (damaged data).
inline constexpr int kDecodedWithWarnings = 3;

// Registers the subcommand; its callback sets `exit_code` when it runs.
void add_info_command(CLI::App& app, int& exit_code);
void add_decode_command(CLI::App& app, int& exit_code);
void add_encode_command(CLI::App& app, int& exit_code);
void add_play_command(CLI::App& app, int& exit_code);
void add_attach_command(CLI::App& app, int& exit_code);
void add_record_command(CLI::App& app, int& exit_code);

// The GPU section of `pixpath info` (gpu_info.cc): {"available": bool, "reason" | details}.
// The one place the GPU module hooks into the tool.
nlohmann::json gpu_info();

}  // namespace pixpath::tools
