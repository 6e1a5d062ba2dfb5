// The extension module pixpath._pixpath; python/pixpath/__init__.py re-exports it.
#include "pypixpath.h"

PYBIND11_MODULE(_pixpath, m) {
  using namespace pixpath::python;
  m.doc() = "pixpath's picture path for Python (see the pixpath package docstring).";
  m.attr("__version__") = PIXPATH_VERSION;
  register_errors(m);
  register_picture(m);
  register_decode(m);
  register_video(m);
  register_paint(m);
  register_client(m);
}
