#include "limit_options.h"

#include <chrono>
#include <cstdint>

#include "option_values.h"

namespace pixpath::tools {
namespace {

// ClientLimits' setters refuse with a Result; CLI11 wants an exception naming the option.
void apply(const Result<void>& set, const std::string& option) {
  if (!set.ok()) throw CLI::ValidationError(option, set.error().reason());
}

}  // namespace

void add_limit_options(CLI::App& app, client::ClientLimits& limits, const std::string& group) {
  app.add_option_function<std::string>(
         "--max-picture-size",
         [&limits](const std::string& text) {
           const PictureSize size = *parse_picture_size(text);  // checked below
           apply(limits.set_max_picture_size(size.width, size.height), "--max-picture-size");
         },
         "Largest picture a draw may decode to, WxH")
      ->check(picture_size_check())
      ->default_str(std::to_string(limits.decode.max_width) + "x" + std::to_string(limits.decode.max_height))
      ->group(group);
  app.add_option_function<uint64_t>(
         "--max-packet-size",
         [&limits](const uint64_t& v) { apply(limits.set_max_packet_size(v), "--max-packet-size"); },
         "Largest packet as sent, all its chunks (bytes; suffixes KiB, MiB, GiB)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str(std::to_string(limits.frame.max_packet_size))
      ->group(group);
  app.add_option_function<uint64_t>(
         "--max-decompressed-size",
         [&limits](const uint64_t& v) {
           apply(limits.set_max_decompressed_size(v), "--max-decompressed-size");
         },
         "Largest zlib/lz4 output of one packet or one draw's data (bytes)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str(std::to_string(limits.frame.max_decompressed_size))
      ->group(group);
  app.add_option("--max-windows", limits.max_windows, "Windows at once; more are refused")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str()
      ->group(group);
  app.add_option("--max-queued-packets", limits.max_queued_draws,
                 "Draws waiting to be painted; more are refused (acknowledged -1)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str()
      ->group(group);
  app.add_option("--max-queued-bytes", limits.max_queued_bytes,
                 "Data bytes of the draws waiting to be painted")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str()
      ->group(group);
  app.add_option_function<int64_t>(
         "--send-timeout",
         [&limits](const int64_t& ms) { limits.send_timeout = std::chrono::milliseconds(ms); },
         "Milliseconds a send may wait for the server to read before the session ends")
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}))
      ->default_str(std::to_string(limits.send_timeout.count()))
      ->group(group);
  app.add_option_function<int64_t>(
         "--stall-timeout",
         [&limits](const int64_t& ms) { limits.stall_timeout = std::chrono::milliseconds(ms); },
         "Milliseconds a started packet may stay unfinished before the session ends (0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->default_str(std::to_string(limits.stall_timeout.count()))
      ->group(group);
}

}  // namespace pixpath::tools
