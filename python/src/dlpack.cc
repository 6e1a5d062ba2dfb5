// DLPack (__dlpack__, __dlpack_device__) for host and CUDA pictures, and
// __cuda_array_interface__ (version 3) for CUDA pictures.
//
// What an export owns. The DLPack capsule's manager context holds a pixpath::Picture (C++
// references to the storages, no Python object), so the consumer's deleter may run on any
// thread without the GIL and drops exactly those references; a CUDA storage then goes back to
// its pool stream-ordered, in the device's primary context (src/cuda_loader).
//
// Writability. DLPack 1.x (versioned) capsules carry DLPACK_FLAG_BITMASK_READ_ONLY unless the
// picture was writable when exported; the export itself takes a reference, so the Python
// picture is shared (read-only to the buffer protocol) while the consumer holds it.
//
// Streams (cuda_streams.h). A CUDA picture's pixels are written asynchronously; its storage
// carries a CUDA event (core/storage.h SyncPoint). __dlpack__(stream=S) makes S wait for that
// event on the device; None means the legacy default stream, 1 legacy, 2 per-thread, -1 no
// synchronisation (the consumer's promise), as the array API standard says. Where the driver
// refuses, the host waits for the event instead. When the consumer drops the tensor (the
// deleter), its kernels on S may still be queued: the picture is then dropped only after the
// work queued on S so far (an event recorded on S, waited for by pixpath's releaser thread), so
// the memory never goes back to pixpath's pool under the consumer's reads.
// __cuda_array_interface__ (v3) exports "stream": a stream of pixpath's that waits for the
// write, on which the consumer synchronises (None when nothing is pending). Its lifetime rule
// is the interface's: the consumer keeps the Picture object alive while it uses the memory,
// including its queued kernels (the interface names no consumer stream pixpath could order the
// release after).

#include <cstdint>
#include <optional>
#include <string>

#include "cuda_streams.h"
#include "pypixpath.h"

namespace pixpath::python {
namespace {

// The DLPack ABI (dlpack.h, v1.0): stable C structs, declared here to avoid a dependency.
struct DLDevice {
  int32_t device_type;  // kDLCPU = 1, kDLCUDA = 2
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLUInt = 1
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLPackReadOnly = 1;
constexpr uint64_t kDLPackIsCopied = 2;
constexpr int32_t kDLCPU = 1, kDLCUDA = 2;

struct ExportContext {
  Picture picture;  // keeps the storages alive
  int64_t shape[3];
  int64_t strides[3];
  std::optional<int64_t> consumer_stream;  // CUDA: the stream named at export
};

// The consumer is done with the tensor (any thread, GIL or not). A CUDA picture is dropped
// after the work queued on the consumer's stream (release_after_stream), host ones at once.
template <class Managed>
void delete_managed(Managed* m) {
  auto* ctx = static_cast<ExportContext*>(m->manager_ctx);
  if (ctx->consumer_stream) release_after_stream(std::move(ctx->picture), *ctx->consumer_stream);
  delete ctx;
  delete m;
}

template <class Managed>
void capsule_destructor(PyObject* capsule) {
  // Only an unconsumed capsule still owns its tensor (consumers rename it to "used_...").
  const char* name = std::is_same_v<Managed, DLManagedTensor> ? "dltensor" : "dltensor_versioned";
  if (PyCapsule_IsValid(capsule, name)) {
    auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}

// Orders the consumer's stream after the picture's pending write (see the header comment).
void sync_for_consumer(const Picture& p, int64_t stream) {
  Result<void> r = [&] {
    py::gil_scoped_release nogil;
    return consumer_waits(p, stream);
  }();
  check(r);
}

template <class Managed>
py::capsule make_capsule(Picture picture, bool read_only, bool copied,
                         std::optional<int64_t> consumer_stream) {
  auto* ctx = new ExportContext{std::move(picture), {}, {}, consumer_stream};
  const Picture& p = ctx->picture;
  const int bpp = info(p.format()).bytes_per_pixel[0];
  ctx->shape[0] = p.height();
  ctx->shape[1] = p.width();
  ctx->shape[2] = bpp;
  ctx->strides[0] = static_cast<int64_t>(p.plane(0).stride);
  ctx->strides[1] = bpp;
  ctx->strides[2] = 1;
  auto* m = new Managed{};
  DLTensor& t = m->dl_tensor;
  t.data = static_cast<uint8_t*>(p.plane(0).storage->data()) + p.plane(0).offset;
  const MemoryLocation& loc = p.location();
  t.device = loc.kind == MemoryKind::CudaDevice ? DLDevice{kDLCUDA, loc.device} : DLDevice{kDLCPU, 0};
  t.ndim = bpp == 1 ? 2 : 3;
  if (bpp == 1) ctx->strides[1] = 1;
  t.dtype = DLDataType{1, 8, 1};
  t.shape = ctx->shape;
  t.strides = ctx->strides;
  t.byte_offset = 0;
  m->manager_ctx = ctx;
  m->deleter = &delete_managed<Managed>;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    m->version = DLPackVersion{1, 0};
    m->flags = (read_only ? kDLPackReadOnly : 0) | (copied ? kDLPackIsCopied : 0);
  }
  const char* name = std::is_same_v<Managed, DLManagedTensor> ? "dltensor" : "dltensor_versioned";
  PyObject* cap = PyCapsule_New(m, name, &capsule_destructor<Managed>);
  if (!cap) {
    delete_managed(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

py::tuple dlpack_device(const Picture& p) {
  const MemoryLocation& loc = p.location();
  if (loc.kind == MemoryKind::CudaDevice) return py::make_tuple(kDLCUDA, loc.device);
  if (host_accessible(loc.kind)) return py::make_tuple(kDLCPU, 0);
  raise_error(Error(ErrorCode::WrongMemoryKind, "picture", "dlpack",
                    std::string(to_string(loc.kind)) + " memory has no DLPack device"));
}

}  // namespace

void register_dlpack(py::class_<PyPicture>& cls) {
  cls.def("__dlpack_device__", [](const PyPicture& self) { return dlpack_device(self.picture); },
          "(device type, device id): (1, 0) for host pictures, (2, N) for CUDA device N.");
  cls.def(
      "__dlpack__",
      [](PyPicture& self, py::object stream_obj, py::object max_version_obj, py::object dl_device_obj,
         py::object copy_obj) -> py::object {
        std::optional<int64_t> stream;
        if (!stream_obj.is_none()) stream = stream_obj.cast<int64_t>();
        std::optional<py::tuple> max_version, dl_device;
        if (!max_version_obj.is_none()) max_version = py::tuple(max_version_obj);
        if (!dl_device_obj.is_none()) dl_device = py::tuple(dl_device_obj);
        std::optional<bool> copy;
        if (!copy_obj.is_none()) copy = copy_obj.cast<bool>();
        Picture& p = self.picture;
        if (p.empty()) raise_error(Error(ErrorCode::InvalidArgument, "picture", "dlpack", "empty picture"));
        py::tuple dev = dlpack_device(p);
        if (dl_device && !dl_device->equal(dev)) {
          PyErr_SetString(PyExc_BufferError,
                          "pixpath.Picture: export to another device is not supported (copy it "
                          "with the consumer)");
          throw py::error_already_set();
        }
        const bool cuda = p.location().kind == MemoryKind::CudaDevice;
        if (!cuda && stream && *stream != -1) {
          raise_error(Error(ErrorCode::InvalidArgument, "picture", "dlpack",
                            "a host picture takes no stream (stream=None)"));
        }
        if (info(p.format()).planes != 1) {
          raise_error(Error(ErrorCode::Unsupported, "picture", "dlpack",
                            "planar formats are not exported; convert() first"));
        }
        Picture out = p;
        bool copied = false;
        if (copy.value_or(false)) {
          if (cuda) {
            PyErr_SetString(PyExc_BufferError, "pixpath.Picture: copy=True of a CUDA picture is "
                                               "not supported (copy with the consumer)");
            throw py::error_already_set();
          }
          out = copy_as(p, p.format());
          copied = true;
        }
        // None: the legacy default stream (the array API's reading for CUDA).
        const std::optional<int64_t> consumer_stream = cuda ? std::optional<int64_t>(stream.value_or(1)) : std::nullopt;
        if (cuda) sync_for_consumer(out, *consumer_stream);
        // Writable for the consumer only when nobody else could see the writes: this object's
        // own reference is the one other holder, and it has no live buffer exports.
        const bool read_only = !copied && (p.read_only() || p.plane(0).storage->flags().externally_owned ||
                                           p.plane(0).storage->use_count() > 2 || self.exports > 0);
        const bool versioned = max_version && max_version->size() >= 1 && (*max_version)[0].cast<int>() >= 1;
        if (versioned) return make_capsule<DLManagedTensorVersioned>(std::move(out), read_only, copied, consumer_stream);
        return make_capsule<DLManagedTensor>(std::move(out), read_only, copied, consumer_stream);
      },
      py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
      py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
      "DLPack export (array API protocol): a capsule holding a reference to the storage. "
      "CUDA pictures: `stream` is the consumer's stream, which is made to wait for the decode "
      "(None = legacy default stream, -1 = no synchronisation); when the consumer drops the "
      "tensor, the memory goes back to pixpath after the work then queued on that stream. "
      "DLPack >= 1.0 (max_version) gets a versioned capsule flagged read-only unless the "
      "picture was writable.");
  cls.def_property_readonly(
      "__cuda_array_interface__",
      [](PyPicture& self) -> py::dict {
        Picture& p = self.picture;
        if (p.empty() || p.location().kind != MemoryKind::CudaDevice) {
          PyErr_SetString(PyExc_AttributeError,
                          "__cuda_array_interface__: this picture is in host memory (use the "
                          "buffer protocol or DLPack)");
          throw py::error_already_set();
        }
        PictureStorage* s = p.plane(0).storage.get();
        Result<std::optional<uintptr_t>> stream = [&] {
          py::gil_scoped_release nogil;
          return export_stream_after(p);
        }();
        const std::optional<uintptr_t> st = unwrap(std::move(stream));
        const int bpp = info(p.format()).bytes_per_pixel[0];
        py::dict d;
        d["shape"] = py::make_tuple(p.height(), p.width(), bpp);
        d["strides"] = py::make_tuple(p.plane(0).stride, bpp, 1);
        d["typestr"] = "|u1";
        const auto ptr = reinterpret_cast<uintptr_t>(static_cast<uint8_t*>(s->data()) + p.plane(0).offset);
        d["data"] = py::make_tuple(ptr, !p.writable());
        d["version"] = 3;
        if (st) {
          d["stream"] = *st;
        } else {
          d["stream"] = py::none();
        }
        return d;
      },
      "CUDA Array Interface v3 (CuPy, Numba, PyTorch): 'stream' is a stream of pixpath's that "
      "waits for the decode (the consumer synchronises on it before reading), or None when "
      "nothing is pending. The consumer keeps this picture alive while it (and its queued "
      "kernels) use the memory.");
}

}  // namespace pixpath::python
