// Backings by name, for the command line ("cpu" built in; the GL module registers "gl").
// Threading: register at start-up; make_backing() may then be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/paint/backing.h"

namespace pixpath::paint {

using BackingFactory = std::function<Result<std::unique_ptr<Backing>>()>;

void register_backing(std::string name, BackingFactory factory);
// A new backing; ErrorCode::Unavailable when no backing of that name was built/registered.
Result<std::unique_ptr<Backing>> make_backing(const std::string& name);
std::vector<std::string> backing_names();

}  // namespace pixpath::paint
