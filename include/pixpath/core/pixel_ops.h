// Pixel operations on views. Each checks formats and sizes and fails with an Error naming the
// operation; none allocates. Each counts itself as one pixel copy (counters().copies) except
// xor_into, which modifies in place.
#pragma once

#include "pixpath/core/picture.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"

namespace pixpath {

// Same format, same size: copies every plane row by row (sub-image copy with crop_view).
Result<void> copy_pixels(const ConstPictureView& src, const PictureView& dst);

// Between packed RGB formats (RGB, BGR, RGBX, BGRX, XRGB, XBGR, RGBA, BGRA, ARGB, ABGR) and
// from/to GRAY8 (gray -> r = g = b; to gray: the green channel is not a luma, so only
// GRAY8 -> GRAY8 is allowed there). Same size. Alpha: copied when both have it; 0xFF when only
// the destination has it; X bytes are written as 0xFF.
Result<void> convert_pixels(const ConstPictureView& src, const PictureView& dst);

// rgb (any packed RGB format) + alpha (GRAY8, same size) -> dst (RGBA, BGRA, ARGB or ABGR).
// For jpega. Where rgb already has an alpha channel it is replaced.
Result<void> merge_alpha(const ConstPictureView& rgb, const ConstPictureView& alpha,
                         const PictureView& dst);

// dst ^= src, byte for byte, over every plane; same format and size (xpra delta buckets).
Result<void> xor_into(const PictureView& dst, const ConstPictureView& src);

// XOR `src` into `target`, in place when target is writable, else into a writable copy
// (make_writable). Returns the picture holding the result.
Result<Picture> xor_pictures(Picture target, const ConstPictureView& src);

// Scales src to dst's size (packed formats, same format on both sides), bilinear. For
// xpra's scaled_size paints.
Result<void> scale_pixels(const ConstPictureView& src, const PictureView& dst);

}  // namespace pixpath
