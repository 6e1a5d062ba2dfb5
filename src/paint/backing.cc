#include "pixpath/paint/backing.h"

#include "pixpath/paint/png_file.h"

namespace pixpath::paint {

Result<std::vector<uint8_t>> snapshot_png(Backing& backing, int64_t wid) {
  PIXPATH_TRY(Picture pic, backing.snapshot(wid));
  PIXPATH_TRY(ConstPictureView v, pic.read());
  return encode_png(v);
}

}  // namespace pixpath::paint
