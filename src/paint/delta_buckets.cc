#include "pixpath/paint/delta_buckets.h"

#include "pixpath/core/pixel_ops.h"

namespace pixpath::paint {
namespace {

Error delta_error(const std::string& coding, std::string reason) {
  return Error(ErrorCode::CorruptData, coding, "delta", std::move(reason));
}

std::string size_string(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

void DeltaBuckets::clear() {
  for (auto& b : buckets_) b.reset();
}

Result<Picture> DeltaBuckets::apply(Picture decoded, const DrawOptions& options,
                                    const std::string& coding) {
  if (!options.delta && !options.store) return decoded;
  const int b = options.bucket;
  if (b < 0 || b >= count())
    return delta_error(coding, "bucket " + std::to_string(b) + " does not exist (0.." +
                                   std::to_string(count() - 1) + ")");
  Picture result = std::move(decoded);
  if (options.delta) {
    const auto& stored = buckets_[static_cast<size_t>(b)];
    if (!stored)
      return delta_error(coding, "bucket " + std::to_string(b) + " is empty (delta " +
                                     std::to_string(*options.delta) + ")");
    if (stored->sequence != *options.delta)
      return delta_error(coding, "bucket " + std::to_string(b) + " holds sequence " +
                                     std::to_string(stored->sequence) + ", not " +
                                     std::to_string(*options.delta));
    const Picture& ref = stored->picture;
    if (ref.width() != result.width() || ref.height() != result.height())
      return delta_error(coding, "bucket " + std::to_string(b) + " holds " +
                                     size_string(ref.width(), ref.height()) + ", not " +
                                     size_string(result.width(), result.height()));
    if (ref.format() != result.format() || stored->rgb_format != options.rgb_format)
      return delta_error(coding, "bucket " + std::to_string(b) + " holds " +
                                     std::string(name(ref.format())) + " '" +
                                     stored->rgb_format + "', not " +
                                     std::string(name(result.format())) + " '" +
                                     options.rgb_format + "'");
    PIXPATH_TRY(ConstPictureView ref_view, ref.read());
    auto xored = xor_pictures(std::move(result), ref_view);
    if (!xored.ok()) return xored.error().within(coding, "delta");
    result = std::move(xored).value();
  }
  if (options.store) {
    buckets_[static_cast<size_t>(b)] = Stored{result, *options.store, options.rgb_format};
  }
  return result;
}

}  // namespace pixpath::paint
