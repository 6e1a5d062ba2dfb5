// A draw's options between Python dicts and DrawOptions: the keys of xpra's draw packet
// (as the wire parser reads them; "alpha_offset" also as "alpha-offset"), both ways, each the
// other's inverse: python/tests/test_video.py replays the sample recordings' option dicts from
// read_recording() through PaintEngine.submit() and gets pixpath.play()'s pictures.
// Threading: callers hold the GIL.
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "pypixpath.h"

namespace pixpath::python {

DrawOptions draw_options(const py::dict& o) {
  DrawOptions d;
  for (auto item : o) {
    const std::string k = item.first.cast<std::string>();
    py::handle v = item.second;
    if (k == "rgb_format") d.rgb_format = v.cast<std::string>();
    else if (k == "zlib") d.zlib = v.cast<int>();
    else if (k == "lz4") d.lz4 = v.cast<int>();
    else if (k == "store") d.store = v.cast<int64_t>();
    else if (k == "delta") d.delta = v.cast<int64_t>();
    else if (k == "bucket") d.bucket = v.cast<int>();
    else if (k == "flush") d.flush = v.cast<int64_t>();
    else if (k == "alpha-offset" || k == "alpha_offset") d.alpha_offset = v.cast<int64_t>();
    else if (k == "scaled_size") {
      auto t = v.cast<std::pair<int, int>>();
      d.scaled_width = t.first;
      d.scaled_height = t.second;
    } else if (k == "paint") d.paint = v.cast<bool>();
    else if (k == "quality") d.quality = v.cast<int>();
    else if (k == "csc") d.csc = v.cast<std::string>();
    else if (k == "frame") d.frame = v.cast<int64_t>();
    else if (k == "delayed") d.delayed = v.cast<int64_t>();
    else if (k == "scroll") {
      for (auto r : v.cast<py::list>()) {
        auto t = r.cast<std::vector<int>>();
        if (t.size() != 6) {
          raise_error(Error(ErrorCode::InvalidArgument, "scroll", "options",
                            "each scroll rectangle is (x, y, w, h, dx, dy)"));
        }
        d.scroll.push_back(ScrollRect{t[0], t[1], t[2], t[3], t[4], t[5]});
      }
    }  // other keys are dropped, as the wire parser drops them
  }
  return d;
}

py::dict options_dict(const DrawOptions& o) {
  py::dict d;
  if (!o.rgb_format.empty()) d["rgb_format"] = o.rgb_format;
  if (o.zlib) d["zlib"] = o.zlib;
  if (o.lz4) d["lz4"] = o.lz4;
  if (o.store) d["store"] = *o.store;
  if (o.delta) d["delta"] = *o.delta;
  if (o.bucket) d["bucket"] = o.bucket;
  if (o.flush) d["flush"] = *o.flush;
  if (o.alpha_offset) d["alpha_offset"] = *o.alpha_offset;
  if (o.scaled_width && o.scaled_height) d["scaled_size"] = py::make_tuple(*o.scaled_width, *o.scaled_height);
  if (!o.scroll.empty()) {
    py::list rects;
    for (const ScrollRect& r : o.scroll) rects.append(py::make_tuple(r.x, r.y, r.w, r.h, r.dx, r.dy));
    d["scroll"] = rects;
  }
  if (!o.paint) d["paint"] = false;
  if (o.quality >= 0) d["quality"] = o.quality;
  if (!o.csc.empty()) d["csc"] = o.csc;
  if (o.frame) d["frame"] = *o.frame;
  if (o.delayed) d["delayed"] = o.delayed;
  return d;
}

}  // namespace pixpath::python
