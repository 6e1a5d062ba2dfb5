#include "pixpath/paint/backing_registry.h"

#include <map>
#include <mutex>

#include "pixpath/paint/cpu_backing.h"

namespace pixpath::paint {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, BackingFactory> factories;
  Registry() {
    factories["cpu"] = []() -> Result<std::unique_ptr<Backing>> {
      return std::unique_ptr<Backing>(std::make_unique<CpuBacking>());
    };
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_backing(std::string name, BackingFactory factory) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().factories[std::move(name)] = std::move(factory);
}

Result<std::unique_ptr<Backing>> make_backing(const std::string& name) {
  BackingFactory f;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    auto it = registry().factories.find(name);
    if (it == registry().factories.end()) {
      std::string known;
      for (const auto& [n, _] : registry().factories) known += (known.empty() ? "" : ", ") + n;
      return Error(ErrorCode::Unavailable, "backing", "create",
                   "no backing '" + name + "' in this build (have: " + known + ")");
    }
    f = it->second;
  }
  return f();
}

std::vector<std::string> backing_names() {
  std::lock_guard<std::mutex> lock(registry().mu);
  std::vector<std::string> out;
  for (const auto& [n, _] : registry().factories) out.push_back(n);
  return out;
}

}  // namespace pixpath::paint
