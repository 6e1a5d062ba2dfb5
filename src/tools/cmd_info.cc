// `pixpath info [--json]`: what this build can do — codings, library versions, limits.
#include <iostream>
#include <memory>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "pixpath/core/limits.h"

namespace pixpath::tools {
namespace {

nlohmann::json build_info() {
  nlohmann::json j;
  j["version"] = PIXPATH_VERSION;
  const auto limits = PictureLimits::defaults();
  j["limits"] = {{"max_width", limits.max_width},
                 {"max_height", limits.max_height},
                 {"max_picture_bytes", limits.max_bytes}};
  return j;
}

void print_human(const nlohmann::json& j) {
  fmt::print("pixpath {}\n", j["version"].get<std::string>());
  fmt::print("limits: pictures up to {}x{}, {} bytes\n", j["limits"]["max_width"].get<int>(),
             j["limits"]["max_height"].get<int>(), j["limits"]["max_picture_bytes"].get<uint64_t>());
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("info", "Show the codings, libraries, GPU and limits of this build");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON for programs");
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
