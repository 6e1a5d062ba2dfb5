// `pixpath info [--json]`: what this build can do — version, limits, codings and their
// libraries, backings, GPU.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "pixpath/client/client_limits.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/limits.h"
#include "pixpath/net/xpra/auth.h"
#include "pixpath/net/xpra/endpoint.h"
#include "pixpath/net/xpra/tls_transport.h"
#include "pixpath/net/xpra/packet_format.h"
#include "pixpath/paint/backing_registry.h"

namespace pixpath::tools {
namespace {

// The registry: {"codecs": [{coding, decode, encode, library, outputs, options}...],
// "libraries": [{name, version}...], "decodable": [...], "limits": the decoders' defaults}.
nlohmann::json codecs_json(const codecs::CodecRegistry& registry) {
  nlohmann::json j;
  j["codecs"] = nlohmann::json::array();
  for (const auto& d : registry.describe()) {
    j["codecs"].push_back({{"coding", d.coding},
                           {"decode", d.decode},
                           {"encode", d.encode},
                           {"library", d.library},
                           {"outputs", d.outputs},
                           {"options", d.options}});
  }
  j["libraries"] = nlohmann::json::array();
  for (const auto& l : registry.library_versions()) {
    j["libraries"].push_back({{"name", l.name}, {"version", l.version}});
  }
  j["decodable"] = registry.decodable_codings();
  const codecs::DecodeLimits limits;
  j["limits"] = {{"max_width", limits.max_width},
                 {"max_height", limits.max_height},
                 {"max_pixels", limits.max_pixels},
                 {"max_decompressed_bytes", limits.max_decompressed_bytes}};
  return j;
}

nlohmann::json build_info() {
  nlohmann::json j;
  j["version"] = PIXPATH_VERSION;
  const auto limits = PictureLimits::defaults();
  j["limits"] = {{"max_width", limits.max_width},
                 {"max_height", limits.max_height},
                 {"max_picture_bytes", limits.max_bytes}};
  const nlohmann::json codecs = codecs_json(codecs::CodecRegistry::builtin());
  j["codecs"] = codecs["codecs"];
  j["libraries"] = codecs["libraries"];
  j["decodable"] = codecs["decodable"];
  j["decode_limits"] = codecs["limits"];
  // Video draws: the stream decoders (libavcodec on the CPU; NVDEC through libavcodec's CUDA
  // hwaccel where this libavcodec has it for the coding and CUDA device 0 opens).
  nlohmann::json video;
  video["library"] = "libavcodec " + codecs::video_library_version();
  auto probe = codecs::probe_video_gpu(0);
  video["decoders"] = nlohmann::json::array();
  for (const auto& d : codecs::describe_video_codecs()) {
    const bool nvdec = std::find(d.hwaccels.begin(), d.hwaccels.end(), "nvdec") != d.hwaccels.end();
    nlohmann::json entry = {{"coding", d.coding},
                            {"decoder", "cpu"},
                            {"libavcodec_decoder", d.decoder},
                            {"hwaccels", d.hwaccels},
                            {"nvdec", nvdec ? (probe.ok() ? "available" : "no CUDA device") : "not in this libavcodec"},
                            {"csc_modes", d.csc_modes},
                            {"max_width", d.max_width},
                            {"max_height", d.max_height}};
    // NVDEC's own limits on device 0 (a stream beyond them decodes on the CPU).
    if (nvdec && probe.ok()) {
      auto caps = codecs::nvdec_caps(d.coding, 0);
      if (!caps.ok()) {
        entry["nvdec_limits_error"] = caps.error().reason();
      } else if (caps->csc_modes.empty()) {
        entry["nvdec"] = "not on this GPU";
      } else {
        entry["nvdec_limits"] = {{"csc_modes", caps->csc_modes}, {"max_width", caps->max_width},
                                 {"max_height", caps->max_height}, {"min_width", caps->min_width},
                                 {"min_height", caps->min_height}, {"engines", caps->engines}};
      }
    }
    video["decoders"].push_back(std::move(entry));
  }
  video["gpu"] = probe.ok() ? "NVDEC through libavcodec's CUDA hwaccel on CUDA device 0 (the GL "
                              "backing's GPU route; a stream NVDEC refuses decodes on the CPU)"
                            : "none: " + probe.error().reason();
  j["video"] = video;
  j["backings"] = paint::backing_names();
  // The network client: what it speaks with xpra servers (3.1: bencode + zlib/lz4; 6.x:
  // rencodeplus + lz4/brotli) and the URL forms it connects to.
  nlohmann::json xpra;
  xpra["packet_encoders"] = nlohmann::json::array();
  for (auto e : xpra::supported_packet_encoders()) xpra["packet_encoders"].push_back(xpra::to_string(e));
  xpra["packet_compressors"] = nlohmann::json::array();
  for (auto c : xpra::supported_packet_compressors())
    xpra["packet_compressors"].push_back(xpra::to_string(c));
  xpra["transports"] = nlohmann::json::array();
  for (const char* const* f = xpra::supported_url_forms(); *f; ++f) xpra["transports"].push_back(*f);
  xpra["tls"] = fmt::format("{} (TLS 1.2 or newer, certificate and host name verified)",
                            xpra::tls_library_version());
  xpra["auth_digests"] = nlohmann::json::array();
  for (auto d : xpra::kSupportedDigests) xpra["auth_digests"].push_back(d);
  j["xpra"] = xpra;
  j["gpu"] = gpu_info();
  // The defaults attach and record run with (their --max-... options change them).
  j["client_limits"] = client::limits_json(client::ClientLimits{});
  return j;
}

std::string join(const nlohmann::json& list) {
  std::string s;
  for (const auto& v : list) s += (s.empty() ? "" : ", ") + v.get<std::string>();
  return s.empty() ? "-" : s;
}

void print_human(const nlohmann::json& j) {
  fmt::print("pixpath {}\n", j["version"].get<std::string>());
  fmt::print("library picture limits: up to {}x{}, {} bytes\n", j["limits"]["max_width"].get<int>(),
             j["limits"]["max_height"].get<int>(), j["limits"]["max_picture_bytes"].get<uint64_t>());
  std::string client_limits;
  for (const auto& [k, v] : j["client_limits"].items()) {
    client_limits += (client_limits.empty() ? "" : ", ") + k + " " + v.dump();
  }
  fmt::print("attach/record limits (--max-... options): {}\n", client_limits);
  fmt::print("codecs:\n");
  for (const auto& c : j["codecs"]) {
    fmt::print("  {:<7} {}{}  {:<14} writes: {}\n", c["coding"].get<std::string>(),
               c["decode"].get<bool>() ? "decode" : "      ", c["encode"].get<bool>() ? " encode" : "       ",
               c["library"].get<std::string>(), join(c["outputs"]));
  }
  fmt::print("video ({}; GPU: {}):\n", j["video"]["library"].get<std::string>(),
             j["video"]["gpu"].get<std::string>());
  for (const auto& d : j["video"]["decoders"]) {
    std::string nvdec = d["nvdec"].get<std::string>();
    if (d.contains("nvdec_limits")) {
      const auto& l = d["nvdec_limits"];
      nvdec += fmt::format(" (csc: {}, up to {}x{}, {} engines)", join(l["csc_modes"]), l["max_width"].get<int>(),
                           l["max_height"].get<int>(), l["engines"].get<int>());
    } else if (d.contains("nvdec_limits_error")) {
      nvdec += " (limits unknown: " + d["nvdec_limits_error"].get<std::string>() + ")";
    }
    fmt::print("  {:<7} decode  csc: {}  up to {}x{}  nvdec: {}\n", d["coding"].get<std::string>(),
               join(d["csc_modes"]), d["max_width"].get<int>(), d["max_height"].get<int>(), nvdec);
  }
  fmt::print("libraries:");
  for (const auto& l : j["libraries"])
    fmt::print(" {} {};", l["name"].get<std::string>(), l["version"].get<std::string>());
  fmt::print("\n");
  fmt::print("backings: {}\n", join(j["backings"]));
  fmt::print("xpra packet encoders: {}; packet compressors: {}\n", join(j["xpra"]["packet_encoders"]),
             join(j["xpra"]["packet_compressors"]));
  fmt::print("xpra transports: {}; authentication: {}\n", join(j["xpra"]["transports"]),
             join(j["xpra"]["auth_digests"]));
  fmt::print("xpra tls: {}\n", j["xpra"]["tls"].get<std::string>());
  const auto& gpu = j["gpu"];
  if (gpu.value("available", false))
    fmt::print("gpu: {}\n", gpu.dump());
  else
    fmt::print("gpu: {}\n", gpu.value("reason", std::string("not available")));
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("info", "Show the version, limits, codings, libraries, backings and GPU of this build");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON document (for programs)");
  cmd->callback([json, &exit_code] {
    const auto j = build_info();
    if (*json) {
      std::cout << j.dump(2) << "\n";
    } else {
      print_human(j);
    }
    exit_code = 0;
  });
}

}  // namespace pixpath::tools
