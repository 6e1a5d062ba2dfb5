#include "pixpath/paint/backing_registry.h"

#include <map>

#include "pixpath/core/thread_annotations.h"
#include "pixpath/paint/cpu_backing.h"

namespace pixpath::paint {
namespace {

struct Registry {
  Mutex mu;
  std::map<std::string, BackingFactory> factories PIXPATH_GUARDED_BY(mu);
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
  Registry& r = registry();
  MutexLock lock(r.mu);
  r.factories[std::move(name)] = std::move(factory);
}

Result<std::unique_ptr<Backing>> make_backing(const std::string& name) {
  BackingFactory f;
  {
    Registry& r = registry();
    MutexLock lock(r.mu);
    auto it = r.factories.find(name);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [n, _] : r.factories) known += (known.empty() ? "" : ", ") + n;
      return Error(ErrorCode::Unavailable, "backing", "create",
                   "no backing '" + name + "' in this build (have: " + known + ")");
    }
    f = it->second;
  }
  return f();
}

std::vector<std::string> backing_names() {
  Registry& r = registry();
  MutexLock lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [n, _] : r.factories) out.push_back(n);
  return out;
}

}  // namespace pixpath::paint
