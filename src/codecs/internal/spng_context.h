// An owned libspng context (spng_ctx_free on destruction), for the png decoder and encoder.
#pragma once

#include <spng.h>

#include <memory>

namespace pixpath::codecs::internal {

struct SpngContextDeleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};
using SpngContext = std::unique_ptr<spng_ctx, SpngContextDeleter>;

}  // namespace pixpath::codecs::internal
