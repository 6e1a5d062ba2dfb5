// Shared declarations of the extension module pixpath._pixpath (python/src).
//
// Ownership. A Python `Picture` (PyPicture) holds a pixpath::Picture: references to its
// storages, never the bytes. Every export (buffer protocol, DLPack, __cuda_array_interface__
// through the object it is a member of) keeps the Python object, hence the storages, alive;
// a slice (crop) is another PyPicture sharing the storages. The last Python reference going
// drops the C++ references on whatever thread Python runs the deallocation; a storage bound to
// a release domain is then released there or queued to its domain (core/release_domain.h).
//
// Writability follows the C++ rules (core/picture.h): a picture exports writable memory only
// when none of its storages is read-only or shared. While a writable export is alive, sharing
// the storage (crop) copies instead, so shared storage is never written.
//
// Threading: every function here runs with the GIL held unless it says otherwise; decoding,
// converting and painting release it around the work (pybind11::gil_scoped_release).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "pixpath/core/picture.h"
#include "pixpath/core/release_domain.h"
#include "pixpath/core/result.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath {
struct DamageAck;
namespace cuda {
class GpuJpegDecoder;
}
namespace paint {
struct PaintReport;
}
}  // namespace pixpath

namespace pixpath::python {

namespace py = pybind11;

struct PyPicture {
  Picture picture;
  int exports = 0;           // live buffer-protocol and DLPack exports (GIL-protected)
  int writable_exports = 0;  // ... of which writable
};

struct PyReleaseDomain {
  std::shared_ptr<ReleaseDomain> domain;
};

// A buffer export held for the duration of a call (released with the GIL held).
class HeldBuffer {
 public:
  HeldBuffer(py::handle obj, int flags) {
    if (PyObject_GetBuffer(obj.ptr(), &buf_, flags) != 0) throw py::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&buf_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  const Py_buffer& get() const { return buf_; }
  std::span<const uint8_t> bytes() const {
    return {static_cast<const uint8_t*>(buf_.buf), static_cast<size_t>(buf_.len)};
  }

 private:
  Py_buffer buf_{};
};

// errors.cc: pixpath.Error (code, coding, stage, reason) and pixpath.DecodeWarning.
void register_errors(py::module_& m);
// Raises pixpath.Error built from `error` (throws py::error_already_set).
[[noreturn]] void raise_error(const Error& error);
// Issues a pixpath.DecodeWarning (may throw when warnings are errors).
void warn(const Error& warning);
template <class T>
T unwrap(Result<T> r) {
  if (!r.ok()) raise_error(r.error());
  return std::move(r).value();
}
inline void check(const Result<void>& r) {
  if (!r.ok()) raise_error(r.error());
}

// picture.cc: Picture (buffer protocol), ReleaseDomain, counters().
void register_picture(py::module_& m);
py::object wrap_picture(Picture picture);
// A writable host copy in `format` (same format: copy_pixels, else convert_pixels), the GIL
// released while copying.
Picture copy_as(const Picture& src, PixelFormat format);
// "RGB", "BGRX", ... or "GRAY8"/"L"; packed formats only (what the buffer protocol exports).
PixelFormat parse_packed_format(const std::string& name, std::string_view stage);

// dlpack.cc: __dlpack__, __dlpack_device__, __cuda_array_interface__ on Picture.
void register_dlpack(py::class_<PyPicture>& cls);

// decode.cc: decode(), inspect(), codings(), libraries().
void register_decode(py::module_& m);
// The process's one GPU decoder (the CUDA module beside the extension), made on first use; its
// failure is kept and returned again. Any thread, GIL released or not.
Result<std::shared_ptr<cuda::GpuJpegDecoder>> shared_gpu_decoder();

// video.cc: VideoDecoder, read_recording().
void register_video(py::module_& m);

// draw_options.cc: a draw's options from a Python dict (unknown keys dropped, as on the wire)
// and back.
DrawOptions draw_options(const py::dict& o);
py::dict options_dict(const DrawOptions& o);

// paint.cc: CpuBacking, PaintEngine, play().
void register_paint(py::module_& m);
// One ack as the dict the `on_ack` callbacks get (PaintEngine and attach: the same keys).
py::dict ack_dict(const DamageAck& ack, const paint::PaintReport& report);
// client.cc: attach() and Client.
void register_client(py::module_& m);

// The path of libpixpath_cuda.so beside the extension, or "" (the loader's own search).
std::string cuda_module_beside_extension();

}  // namespace pixpath::python
