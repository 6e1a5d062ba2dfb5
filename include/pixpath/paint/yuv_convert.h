// YUV -> packed RGB on the CPU: the CPU backing's video path (and backings without their own
// YUV path), and video frames handed to Python (python/src/video.cc). With libyuv: measured
// faster than libswscale for this job (docs/performance.md, "YUV to RGB";
// bench/paint/yuv_convert_benchmark.cc). Stateless, any thread.
#pragma once

#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"

namespace pixpath::paint {

// src: YUV420P, YUV422P or YUV444P; dst: RGB, BGR, BGRX, BGRA, RGBX or RGBA (X/A written
// 0xFF), the same size. BT.601 or BT.709, studio or full range, as `color` says. Counts one
// copy.
Result<void> yuv_to_rgb(const ConstPictureView& src, codecs::VideoColor color,
                        const PictureView& dst);

}  // namespace pixpath::paint
