// YUV -> packed RGB for the CPU backing (and for backings without their own YUV path), with
// libyuv: measured faster than libswscale for this job (docs/performance.md, "YUV to RGB";
// bench/paint/yuv_convert_benchmark.cc). Stateless, any thread.
#pragma once

#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"

namespace pixpath::paint::internal {

// src: YUV420P, YUV422P or YUV444P; dst: BGRX, BGRA, RGBX or RGBA (X/A written 0xFF), the
// same size. BT.601 or BT.709, studio or full range, as `color` says. Counts one copy.
Result<void> yuv_to_rgb(const ConstPictureView& src, codecs::VideoColor color,
                        const PictureView& dst);

}  // namespace pixpath::paint::internal
