// pixpath.Picture: a pixpath::Picture exported through the buffer protocol (numpy, Pillow,
// memoryview), with the C++ writability rules; pixpath.ReleaseDomain; pixpath.counters().
#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/pixel_ops.h"
#include "cuda_streams.h"
#include "pypixpath.h"

namespace pixpath::python {
namespace {

// What one buffer export owns (Py_buffer::internal).
struct Export {
  Py_ssize_t shape[3];
  Py_ssize_t strides[3];
  bool writable;
};

PyPicture* picture_of(PyObject* obj) {
  try {
    return py::handle(obj).cast<PyPicture*>();
  } catch (const py::cast_error&) {
    return nullptr;
  }
}

int bytes_per_pixel(PixelFormat f) { return info(f).bytes_per_pixel[0]; }

bool exportable(PixelFormat f) { return info(f).planes == 1 && f != PixelFormat::RG8; }

int buffer_fail(Py_buffer* view, const std::string& why) {
  view->obj = nullptr;
  PyErr_SetString(PyExc_BufferError, why.c_str());
  return -1;
}

// The buffer protocol (PEP 3118): (height, width, channels) uint8 with the picture's stride;
// (height, width) for GRAY8. Writable only when the picture is writable.
int picture_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  PyPicture* self = picture_of(obj);
  if (!self) return buffer_fail(view, "pixpath.Picture: not a picture");
  Picture& p = self->picture;
  if (p.empty()) return buffer_fail(view, "pixpath.Picture: empty picture");
  if (!host_accessible(p.location().kind)) {
    return buffer_fail(view, "pixpath.Picture: the pixels are in " +
                                 std::string(to_string(p.location().kind)) +
                                 " memory; use DLPack (__dlpack__) or __cuda_array_interface__");
  }
  if (!exportable(p.format())) {
    return buffer_fail(view, "pixpath.Picture: format " + std::string(name(p.format())) +
                                 " is planar; convert() it to a packed format first");
  }
  const bool want_write = (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE;
  const bool can_write = p.writable();
  if (want_write && !can_write) {
    return buffer_fail(view, p.read_only()
                                 ? "pixpath.Picture is read-only (decoder- or caller-owned memory); "
                                   "make_writable() gives a writable copy"
                                 : "pixpath.Picture shares its storage (another picture, a crop, a "
                                   "backing or an outside owner holds it); make_writable() "
                                   "gives a writable copy");
  }
  const int bpp = bytes_per_pixel(p.format());
  const size_t stride = p.plane(0).stride;
  const bool contiguous = stride == static_cast<size_t>(p.width()) * bpp;
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !contiguous) {
    return buffer_fail(view, "pixpath.Picture: rows are padded (stride " + std::to_string(stride) +
                                 "); a consumer that takes strides is needed");
  }
  if (((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ||
       (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS ||
       (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) &&
      !contiguous) {
    return buffer_fail(view, "pixpath.Picture: rows are padded (stride " + std::to_string(stride) +
                                 "), not contiguous");
  }
  uint8_t* data;
  if (can_write) {
    // A writable export may be written at any time while it lives: the content changes.
    auto w = p.write();
    if (!w.ok()) return buffer_fail(view, w.error().message());
    data = w->planes[0].data;
  } else {
    auto r = p.read();
    if (!r.ok()) return buffer_fail(view, r.error().message());
    data = const_cast<uint8_t*>(r->planes[0].data);
  }
  auto* ex = new Export{};
  const bool gray = bpp == 1;
  ex->shape[0] = p.height();
  ex->shape[1] = p.width();
  ex->shape[2] = bpp;
  ex->strides[0] = static_cast<Py_ssize_t>(stride);
  ex->strides[1] = gray ? 1 : bpp;
  ex->strides[2] = 1;
  ex->writable = can_write;
  view->buf = data;
  view->obj = obj;
  Py_INCREF(obj);
  view->len = static_cast<Py_ssize_t>(p.height()) * p.width() * bpp;
  view->readonly = can_write ? 0 : 1;
  view->itemsize = 1;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>("B") : nullptr;
  view->ndim = gray ? 2 : 3;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? ex->shape : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? ex->strides : nullptr;
  view->suboffsets = nullptr;
  view->internal = ex;
  ++self->exports;
  if (can_write) ++self->writable_exports;
  return 0;
}

void picture_releasebuffer(PyObject* obj, Py_buffer* view) {
  auto* ex = static_cast<Export*>(view->internal);
  if (PyPicture* self = picture_of(obj)) {
    --self->exports;
    if (ex && ex->writable) --self->writable_exports;
  }
  delete ex;
}

// Host memory for Picture.allocate(): 64-byte aligned, zeroed, released in `domain`.
Picture allocate_picture(PixelFormat format, int width, int height,
                         std::shared_ptr<ReleaseDomain> domain) {
  if (width <= 0 || height <= 0) {
    raise_error(Error(ErrorCode::InvalidArgument, "picture", "allocate",
                      "width and height must be positive"));
  }
  const size_t bpp = static_cast<size_t>(bytes_per_pixel(format));
  const size_t stride = (static_cast<size_t>(width) * bpp + 63) / 64 * 64;
  const size_t bytes = stride * static_cast<size_t>(height);
  void* mem = std::aligned_alloc(64, bytes);
  if (!mem) raise_error(Error(ErrorCode::OutOfMemory, "picture", "allocate", "out of memory"));
  std::memset(mem, 0, bytes);
  auto storage = unwrap(PictureStorage::wrap(MemoryLocation::host(), mem, bytes, {},
                                             [mem] { std::free(mem); }, std::move(domain)));
  return unwrap(Picture::wrap(format, width, height, std::move(storage), 0, stride));
}

// Picture.from_buffer(): wraps a caller's buffer without a copy. The storage holds the
// Py_buffer and releases it (with the GIL) when the last reference goes; it is externally
// owned, so the picture is never writable through pixpath (and read-only when the buffer is).
Picture wrap_buffer(py::handle obj, int width, int height, PixelFormat format, size_t stride) {
  auto* buf = new Py_buffer{};
  if (PyObject_GetBuffer(obj.ptr(), buf, PyBUF_RECORDS_RO) != 0) {
    delete buf;
    throw py::error_already_set();
  }
  auto release = [buf] {
    py::gil_scoped_acquire gil;
    PyBuffer_Release(buf);
    delete buf;
  };
  const size_t bpp = static_cast<size_t>(bytes_per_pixel(format));
  if (stride == 0) {
    stride = buf->ndim >= 1 && buf->strides && buf->ndim >= 2 ? static_cast<size_t>(buf->strides[0])
                                                              : static_cast<size_t>(width) * bpp;
  }
  const bool contiguous_inner = buf->ndim == 1 || buf->ndim == 0 ||
                                (buf->strides && buf->strides[buf->ndim - 1] == 1 &&
                                 (buf->ndim < 3 || static_cast<size_t>(buf->strides[1]) == bpp));
  const bool ok = buf->itemsize == 1 && contiguous_inner && buf->suboffsets == nullptr &&
                  width > 0 && height > 0 && stride >= static_cast<size_t>(width) * bpp &&
                  static_cast<size_t>(buf->len) >=
                      stride * static_cast<size_t>(height - 1) + static_cast<size_t>(width) * bpp;
  if (!ok) {
    release();
    raise_error(Error(ErrorCode::InvalidArgument, "picture", "wrap buffer",
                      "the buffer does not hold " + std::to_string(width) + "x" +
                          std::to_string(height) + " " + std::string(name(format)) +
                          " pixels of bytes with stride " + std::to_string(stride)));
  }
  StorageFlags flags;
  flags.read_only = buf->readonly != 0;
  flags.externally_owned = true;
  auto storage = unwrap(PictureStorage::wrap(MemoryLocation::host(), buf->buf,
                                             static_cast<size_t>(buf->len), flags, release));
  return unwrap(Picture::wrap(format, width, height, std::move(storage), 0, stride));
}

Result<Picture> copy_into_new(const Picture& src, PixelFormat format) {
  PIXPATH_TRY(Picture out, Picture::allocate(format, src.width(), src.height()));
  PIXPATH_TRY(ConstPictureView in, src.read());
  PIXPATH_TRY(PictureView dst, out.write());
  PIXPATH_CHECK(format == src.format() ? copy_pixels(in, dst) : convert_pixels(in, dst));
  return out;
}

}  // namespace

Picture copy_as(const Picture& src, PixelFormat format) {
  if (!host_accessible(src.location().kind)) {
    raise_error(Error(ErrorCode::WrongMemoryKind, "picture", "copy",
                      "the pixels are in " + std::string(to_string(src.location().kind)) +
                          " memory (use DLPack to reach them)"));
  }
  std::optional<Result<Picture>> r;
  {
    py::gil_scoped_release nogil;
    r.emplace(copy_into_new(src, format));
  }
  return unwrap(std::move(*r));
}

namespace {

py::dict counters_dict() {
  CounterSnapshot c = counters();
  py::dict kinds;
  for (int k = 0; k < kMemoryKindCount; ++k) {
    const auto kind = static_cast<MemoryKind>(k);
    py::dict d;
    d["live_storages"] = c.of(kind).live_storages;
    d["live_bytes"] = c.of(kind).live_bytes;
    kinds[py::str(std::string(to_string(kind)))] = d;
  }
  py::dict d;
  d["live_storages"] = c.live_storages();
  d["live_bytes"] = c.live_bytes();
  d["storages_created"] = c.storages_created;
  d["storages_released"] = c.storages_released;
  d["copies"] = c.copies;
  d["copy_bytes"] = c.copy_bytes;
  d["deferred_releases"] = c.deferred_releases;
  d["unreleased"] = c.unreleased;
  d["pending_stream_releases"] = pending_stream_releases();
  d["kinds"] = kinds;
  const codecs::VideoBufferCounters v = codecs::video_buffer_counters();
  py::dict video;
  video["made"] = v.made;
  video["freed"] = v.freed;
  video["live"] = v.live();
  d["video_buffers"] = video;
  return d;
}

std::string device_of(const Picture& p) {
  const MemoryLocation& l = p.location();
  if (l.kind == MemoryKind::CudaDevice) return "cuda:" + std::to_string(l.device);
  if (host_accessible(l.kind)) return "cpu";
  return std::string(to_string(l.kind));
}

}  // namespace

PixelFormat parse_packed_format(const std::string& text, std::string_view stage) {
  std::optional<PixelFormat> f = text == "L" ? PixelFormat::GRAY8 : parse_pixel_format(text);
  if (!f || !exportable(*f)) {
    raise_error(Error(ErrorCode::InvalidArgument, "picture", std::string(stage),
                      "format '" + text + "' is not a packed pixpath format (RGB, RGBA, BGR, "
                      "BGRA, BGRX, RGBX, XRGB, XBGR, ARGB, ABGR, GRAY8 or L)"));
  }
  return *f;
}

py::object wrap_picture(Picture picture) {
  return py::cast(PyPicture{std::move(picture)}, py::return_value_policy::move);
}

void register_picture(py::module_& m) {
  py::class_<PyReleaseDomain>(m, "ReleaseDomain", R"doc(
Where storages must be released: the thread that created the domain. A picture allocated
with ``domain=`` whose last reference goes on another thread is not released there: its
release is queued until the owner calls ``drain()`` (never a blocking hop).)doc")
      .def(py::init([](std::string name) {
             return PyReleaseDomain{ReleaseDomain::for_current_thread(std::move(name))};
           }),
           py::arg("name"), "A domain owned by the calling thread.")
      .def_property_readonly("name", [](const PyReleaseDomain& d) { return d.domain->name(); },
                             "The name given when the domain was made.")
      .def_property_readonly("pending", [](const PyReleaseDomain& d) { return d.domain->pending(); },
                             "Releases queued, waiting for drain().")
      .def_property_readonly("is_current", [](const PyReleaseDomain& d) { return d.domain->is_current(); },
                             "The calling thread owns the domain (its releases run here at once).")
      .def_property_readonly("closed", [](const PyReleaseDomain& d) { return d.domain->closed(); },
                             "shutdown() has run on the owner thread: the domain is closed.")
      .def("drain", [](PyReleaseDomain& d) { return unwrap(d.domain->drain()); },
           "Runs every queued release (owner thread only); returns how many ran.")
      .def("shutdown", [](PyReleaseDomain& d) {
             ReleaseDomainReport r = d.domain->shutdown();
             py::dict out;
             out["released"] = r.released;
             out["unreleased"] = r.unreleased;
             return out;
           },
           "On the owner thread: runs the queue and closes the domain. Elsewhere: runs "
           "nothing and lists what is still queued. Returns {'released', 'unreleased'}.");

  py::class_<PyPicture> cls(m, "Picture", py::buffer_protocol(), R"doc(
Pixels in pixpath's picture model: a handle to refcounted storage, format, size and stride.

Host pictures export the buffer protocol as uint8 (height, width, channels) with their
stride ((height, width) for GRAY8): ``numpy.asarray(picture)``, ``memoryview(picture)``.
The export is writable only when the picture is writable (not read-only, storage not shared);
numpy arrays on other pictures are not writeable. Every export and every crop keeps the
storage alive. CUDA pictures export DLPack (``torch.from_dlpack``, ``cupy.from_dlpack``) and
``__cuda_array_interface__``.)doc");
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
  heap->as_buffer.bf_getbuffer = picture_getbuffer;
  heap->as_buffer.bf_releasebuffer = picture_releasebuffer;
  PyType_Modified(reinterpret_cast<PyTypeObject*>(cls.ptr()));

  cls.def_property_readonly("width", [](const PyPicture& p) { return p.picture.width(); }, "Pixels per row.")
      .def_property_readonly("height", [](const PyPicture& p) { return p.picture.height(); }, "Rows.")
      .def_property_readonly("format", [](const PyPicture& p) { return std::string(name(p.picture.format())); },
                             "pixpath's format name: 'RGB', 'RGBA', 'BGRX', 'GRAY8', ...")
      .def_property_readonly("channels", [](const PyPicture& p) { return bytes_per_pixel(p.picture.format()); },
                             "Bytes per pixel of a packed format (3 for RGB, 4 for RGBA/BGRX, 1 for GRAY8).")
      .def_property_readonly("stride", [](const PyPicture& p) { return p.picture.plane(0).stride; },
                             "Bytes from one row to the next (>= width * channels).")
      .def_property_readonly("shape", [](const PyPicture& p) {
        // py::tuple on both paths: pybind11 3.1's make_tuple returns a typed tuple per
        // argument list, so the two lengths are different types (no ?: between them).
        const int c = bytes_per_pixel(p.picture.format());
        if (c == 1) return py::tuple(py::make_tuple(p.picture.height(), p.picture.width()));
        return py::tuple(py::make_tuple(p.picture.height(), p.picture.width(), c));
      }, "(height, width, channels), or (height, width) for GRAY8: numpy's shape of the export.")
      .def_property_readonly("strides", [](const PyPicture& p) {
        const int c = bytes_per_pixel(p.picture.format());
        const size_t s = p.picture.plane(0).stride;
        if (c == 1) return py::tuple(py::make_tuple(s, 1));
        return py::tuple(py::make_tuple(s, c, 1));
      }, "Byte strides of the export, numpy's order: (stride, channels, 1).")
      .def_property_readonly("readonly", [](const PyPicture& p) { return p.picture.read_only(); },
                             "Read-only storage (decoder- or caller-owned): never writable.")
      .def_property_readonly("shared", [](const PyPicture& p) { return p.picture.shared(); },
                             "The storage has other holders (crops, snapshots, an outside owner).")
      .def_property_readonly("writable", [](const PyPicture& p) { return p.picture.writable(); },
                             "Not read-only and not shared: buffer exports are writable.")
      .def_property_readonly("device", [](const PyPicture& p) { return device_of(p.picture); },
                             "'cpu' or 'cuda:N'.")
      .def_property_readonly("exports", [](const PyPicture& p) { return p.exports; },
                             "Live buffer-protocol and DLPack exports of this object.")
      .def_property_readonly("content_id", [](const PyPicture& p) {
        auto id = p.picture.content_id();
        return py::make_tuple(id.storage, id.generation);
      }, "(storage id, generation): changes whenever the pixels may have changed.")
      .def("crop", [](PyPicture& self, int x, int y, int w, int h) {
        Picture c = unwrap(self.picture.crop(x, y, w, h));
        // While a writable export lives, the storage may be written through it: a crop then
        // gets its own copy instead of sharing memory someone is writing.
        if (self.writable_exports > 0) c = copy_as(c, c.format());
        return wrap_picture(std::move(c));
      }, py::arg("x"), py::arg("y"), py::arg("width"), py::arg("height"),
         "A sub-rectangle sharing the storage (no copy): both become shared, so neither "
         "exports writable memory until the other is gone.")
      .def("copy", [](const PyPicture& self) { return wrap_picture(copy_as(self.picture, self.picture.format())); },
           "A writable copy (counted in counters()['copies']).")
      .def("convert", [](const PyPicture& self, const std::string& format) {
        return wrap_picture(copy_as(self.picture, parse_packed_format(format, "convert")));
      }, py::arg("format"), "A writable copy in another packed format (e.g. 'BGRA', 'RGB').")
      .def("make_writable", [](py::object self) -> py::object {
        auto& p = self.cast<PyPicture&>();
        if (p.picture.writable()) return self;
        return wrap_picture(copy_as(p.picture, p.picture.format()));
      }, "This picture when it is writable (no copy), else a writable copy (copy-on-write).")
      .def("tobytes", [](const PyPicture& self) {
        auto v = unwrap(self.picture.read());
        const auto& pl = v.planes[0];
        const size_t row = pl.row_bytes();
        py::bytes out(nullptr, row * static_cast<size_t>(pl.height));
        char* dst = PyBytes_AS_STRING(out.ptr());
        for (int y = 0; y < pl.height; ++y) std::memcpy(dst + row * static_cast<size_t>(y), pl.unchecked_row(y), row);
        return out;
      }, "The pixels as bytes, rows packed (no padding).")
      .def_static("allocate", [](int width, int height, const std::string& format,
                                 std::optional<PyReleaseDomain> domain) {
        return wrap_picture(allocate_picture(parse_packed_format(format, "allocate"), width, height,
                                             domain ? domain->domain : nullptr));
      }, py::arg("width"), py::arg("height"), py::arg("format") = "RGB", py::kw_only(),
         py::arg("domain") = py::none(),
         "A new zeroed, writable host picture; with ``domain`` its storage is released in that "
         "ReleaseDomain.")
      .def_static("from_buffer", [](py::object obj, int width, int height, const std::string& format,
                                    size_t stride) {
        return wrap_picture(wrap_buffer(obj, width, height, parse_packed_format(format, "wrap buffer"),
                                        stride));
      }, py::arg("buffer"), py::arg("width"), py::arg("height"), py::arg("format") = "RGB",
         py::arg("stride") = 0,
         "Wraps a caller's buffer (bytes, bytearray, numpy, mmap) without a copy. The picture "
         "keeps the buffer exported while it lives; it is never writable through pixpath "
         "(the memory has another owner; read-only buffers stay read-only).")
      .def("__repr__", [](const PyPicture& p) {
        if (p.picture.empty()) return std::string("<pixpath.Picture empty>");
        return "<pixpath.Picture " + std::to_string(p.picture.width()) + "x" +
               std::to_string(p.picture.height()) + " " + std::string(name(p.picture.format())) +
               " stride " + std::to_string(p.picture.plane(0).stride) + " on " + device_of(p.picture) +
               (p.picture.read_only() ? ", read-only" : p.picture.shared() ? ", shared" : "") + ">";
      });
  register_dlpack(cls);

  m.def("counters", &counters_dict, R"doc(
pixpath's process-wide counters: live storages and bytes (in total and per memory kind),
storages created and released, pixel copies made, releases deferred to a release domain,
releases dropped after their domain shut down, video frame buffers made and freed
(video_buffers: libavcodec's frames, host and GPU; live = made - freed), and CUDA pictures whose DLPack consumer has let
go but whose stream is still busy (pending_stream_releases: dropped once it is done). Compare two snapshots to measure leaks and
copies.)doc");
}

}  // namespace pixpath::python
