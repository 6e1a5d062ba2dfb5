// pixpath.decode(), inspect(), codings(), libraries(), gpu_info(): the registry's CPU decoders
// (and nvJPEG for device="cuda") with the GIL released around all the work.
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <pybind11/stl.h>

#include "pixpath/codecs/image_io.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/core/storage_pool.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pypixpath.h"

namespace pixpath::python {
namespace {

struct Request {
  std::string coding;  // "" = sniff
  std::optional<PixelFormat> format;
  DrawOptions options;
  codecs::DecodeParams params;
};

Error decode_error(const std::string& coding, ErrorCode code, std::string stage, std::string reason) {
  return Error(code, coding.empty() ? std::string("picture") : coding, std::move(stage),
               std::move(reason));
}

Result<std::string> resolve_coding(const Request& rq, std::span<const uint8_t> data) {
  if (!rq.coding.empty()) return rq.coding;
  std::string sniffed = codecs::sniff_image(data);
  if (sniffed.empty()) {
    return decode_error("", ErrorCode::Unsupported, "recognise",
                        "the data is not JPEG, PNG, WebP or PNM: pass coding= (one of "
                        "pixpath.codings())");
  }
  return sniffed;
}

PixelFormat default_format(const codecs::ImageInfo& inf) {
  return inf.has_alpha ? PixelFormat::RGBA : PixelFormat::RGB;
}

// Decodes into `dst`: directly when the decoder writes its format, else into RGB/RGBA first
// and converted (one counted copy).
Result<std::vector<Error>> decode_to_view(const codecs::Decoder& dec, std::span<const uint8_t> data,
                                          const codecs::DecodeParams& params,
                                          const codecs::ImageInfo& inf, const PictureView& dst) {
  if (dec.can_write(dst.format)) {
    PIXPATH_TRY(codecs::DecodeReport rep, dec.decode_into(data, params, dst));
    return std::move(rep.warnings);
  }
  const PixelFormat tmp_format = dec.can_write(PixelFormat::RGBA) && inf.has_alpha ? PixelFormat::RGBA
                                 : dec.can_write(PixelFormat::RGB)                 ? PixelFormat::RGB
                                                                                   : PixelFormat::RGBA;
  PIXPATH_TRY(Picture tmp, Picture::allocate(tmp_format, inf.width, inf.height));
  PIXPATH_TRY(PictureView tv, tmp.write());
  PIXPATH_TRY(codecs::DecodeReport rep, dec.decode_into(data, params, tv));
  PIXPATH_TRY(ConstPictureView src, tmp.read());
  PIXPATH_CHECK(convert_pixels(src, dst));
  return std::move(rep.warnings);
}

struct Decoded {
  Picture picture;  // empty when decoded into the caller's buffer
  std::vector<Error> warnings;
};

// Files in PNM (not a draw coding): read_image, then converted when another format is asked.
Result<Decoded> decode_pnm(std::span<const uint8_t> data, std::optional<PixelFormat> format) {
  PIXPATH_TRY(Picture p, codecs::read_image(data));
  const PixelFormat want = format.value_or(info(p.format()).has_alpha ? PixelFormat::RGBA
                                                                      : PixelFormat::RGB);
  if (want == p.format()) return Decoded{std::move(p), {}};
  PIXPATH_TRY(Picture out, Picture::allocate(want, p.width(), p.height()));
  PIXPATH_TRY(ConstPictureView in, p.read());
  PIXPATH_TRY(PictureView dst, out.write());
  PIXPATH_CHECK(convert_pixels(in, dst));
  return Decoded{std::move(out), {}};
}

// The caller's buffer as a view of width x height pixels of `format` (see decode's docstring).
Result<PictureView> view_of_buffer(const Py_buffer& b, int width, int height, PixelFormat format,
                                   size_t stride, const std::string& coding) {
  const size_t bpp = static_cast<size_t>(info(format).bytes_per_pixel[0]);
  const size_t row = static_cast<size_t>(width) * bpp;
  auto bad = [&](std::string why) {
    return decode_error(coding, ErrorCode::InvalidArgument, "into", std::move(why));
  };
  if (b.readonly) return bad("the buffer is read-only");
  if (b.itemsize != 1) return bad("the buffer's items are not bytes (itemsize " + std::to_string(b.itemsize) + ")");
  if (b.suboffsets) return bad("indirect buffers are not supported");
  const std::string want = std::to_string(height) + "x" + std::to_string(width) +
                           (bpp == 1 ? "" : "x" + std::to_string(bpp));
  if (b.ndim == 3) {
    if (b.shape[0] != height || b.shape[1] != width || static_cast<size_t>(b.shape[2]) != bpp) {
      return bad("the buffer's shape is " + std::to_string(b.shape[0]) + "x" + std::to_string(b.shape[1]) +
                 "x" + std::to_string(b.shape[2]) + ", the picture needs " + want);
    }
    if (b.strides[2] != 1 || static_cast<size_t>(b.strides[1]) != bpp || b.strides[0] < 0) {
      return bad("the buffer's pixels are not packed (strides must be (stride, channels, 1))");
    }
    if (stride != 0 && stride != static_cast<size_t>(b.strides[0])) return bad("stride= differs from the buffer's stride");
    stride = static_cast<size_t>(b.strides[0]);
  } else if (b.ndim == 2) {
    if (b.shape[0] != height || static_cast<size_t>(b.shape[1]) != (bpp == 1 ? static_cast<size_t>(width) : row)) {
      return bad("the buffer's shape is " + std::to_string(b.shape[0]) + "x" + std::to_string(b.shape[1]) +
                 ", the picture needs " + want);
    }
    if (b.strides[1] != 1 || b.strides[0] < 0) return bad("the buffer's rows are not contiguous");
    if (stride != 0 && stride != static_cast<size_t>(b.strides[0])) return bad("stride= differs from the buffer's stride");
    stride = static_cast<size_t>(b.strides[0]);
  } else if (b.ndim <= 1) {
    if (b.ndim == 1 && b.strides && b.strides[0] != 1) return bad("the buffer is not contiguous");
    if (stride == 0) stride = row;
    const size_t need = stride * static_cast<size_t>(height - 1) + row;
    if (static_cast<size_t>(b.len) < need) {
      return bad("the buffer holds " + std::to_string(b.len) + " bytes, the picture needs " +
                 std::to_string(need) + " (" + want + ", stride " + std::to_string(stride) + ")");
    }
  } else {
    return bad("the buffer has " + std::to_string(b.ndim) + " dimensions (1, 2 or 3 expected)");
  }
  if (stride < row) return bad("stride " + std::to_string(stride) + " is below the row's " + std::to_string(row) + " bytes");
  return make_view(format, width, height, static_cast<uint8_t*>(b.buf), stride);
}

// The format decode() writes into a caller's buffer when format= is not given.
std::optional<PixelFormat> format_from_buffer(const Py_buffer& b, const codecs::ImageInfo& inf) {
  if (b.ndim == 3) {
    if (b.shape[2] == 3) return PixelFormat::RGB;
    if (b.shape[2] == 4) return PixelFormat::RGBA;
    if (b.shape[2] == 1) return PixelFormat::GRAY8;
  }
  if (b.ndim == 2 && b.shape[1] == inf.width) return PixelFormat::GRAY8;
  return std::nullopt;
}

// Recycled storages for decode()'s pictures. A fresh multi-megabyte allocation is new pages
// from the kernel every time (glibc maps large blocks): for a 1080p RGB picture that is ~1500
// page faults, as long as the decode itself on a loaded machine. Pictures of one size (a
// loader's batch, a window's frames) come back to a pool when their last reference goes and
// are reused. A few sizes at once, a free block per hardware thread each; small pictures use
// malloc. Blocks of 4 MiB and up are in transparent huge pages where the kernel allows it (core's
// allocate_host_block: ~5% faster TurboJPEG output at 4K than into 4 KiB pages).
class PoolCache {
 public:
  static constexpr size_t kMinBytes = 256 * 1024;
  static constexpr size_t kSizes = 4;
  static constexpr size_t kMaxIdleBytes = size_t{512} << 20;  // 17 blocks of 4K RGB

  StoragePool* pool_for(size_t bytes) {
    if (bytes < kMinBytes) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < pools_.size(); ++i) {
      if (pools_[i]->block_bytes() == bytes) {
        std::rotate(pools_.begin(), pools_.begin() + static_cast<std::ptrdiff_t>(i),
                    pools_.begin() + static_cast<std::ptrdiff_t>(i) + 1);  // most recent first
        return pools_.front().get();
      }
    }
    StoragePoolConfig c;
    c.name = "python decode " + std::to_string(bytes);
    c.block_bytes = bytes;
    // One free block per hardware thread and one more, so that every thread of a loader
    // decoding at once finds one (a fixed 5 for 4K RGB was fewer than 8 threads hold), at
    // most kMaxIdleBytes of idle blocks per size and at least 2 blocks.
    const size_t threads = std::max(1u, std::thread::hardware_concurrency());
    c.max_free_blocks = std::clamp<size_t>(threads + 1, 2, std::max<size_t>(2, kMaxIdleBytes / bytes));
    auto pool = StoragePool::create(std::move(c));
    if (!pool.ok()) return nullptr;
    // The evicted pool's outstanding storages keep its state alive and free their blocks.
    if (pools_.size() == kSizes) pools_.pop_back();
    pools_.insert(pools_.begin(), std::move(*pool));
    return pools_.front().get();
  }

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<StoragePool>> pools_;  // most recently used first
};

PoolCache& pool_cache() {
  static PoolCache* cache = new PoolCache();  // never destroyed: storages may outlive exit
  return *cache;
}

// The bytes Picture::allocate takes for a packed picture with its default 64-byte row
// alignment (the pool's block size).
size_t packed_bytes(PixelFormat f, int width, int height) {
  const size_t row = static_cast<size_t>(width) * static_cast<size_t>(info(f).bytes_per_pixel[0]);
  return (row + 63) / 64 * 64 * static_cast<size_t>(height);
}

Result<Decoded> decode_cpu(const Request& rq, std::span<const uint8_t> data, const Py_buffer* into,
                           size_t into_stride) {
  PIXPATH_TRY(std::string coding, resolve_coding(rq, data));
  if (coding == "pnm") {
    if (into) return decode_error(coding, ErrorCode::Unsupported, "into", "PNM files decode into new pictures only");
    return decode_pnm(data, rq.format);
  }
  const codecs::Decoder* dec = codecs::CodecRegistry::builtin().decoder(coding);
  if (!dec) {
    std::string known;
    for (const auto& c : codecs::CodecRegistry::builtin().decodable_codings()) known += (known.empty() ? "" : ", ") + c;
    return decode_error(coding, ErrorCode::Unsupported, "decode", "unknown coding (known: " + known + ")");
  }
  codecs::DecodeParams params = rq.params;
  params.options = &rq.options;
  PIXPATH_TRY(codecs::ImageInfo inf, dec->inspect(data, params));
  std::optional<PixelFormat> f = rq.format;
  if (!f && into) f = format_from_buffer(*into, inf);
  const PixelFormat fmt = f.value_or(default_format(inf));
  if (into) {
    PIXPATH_TRY(PictureView dst, view_of_buffer(*into, inf.width, inf.height, fmt, into_stride, coding));
    PIXPATH_TRY(std::vector<Error> warnings, decode_to_view(*dec, data, params, inf, dst));
    return Decoded{Picture(), std::move(warnings)};
  }
  AllocateOptions ao;
  ao.limits = PictureLimits::defaults();
  if (info(fmt).planes == 1) ao.pool = pool_cache().pool_for(packed_bytes(fmt, inf.width, inf.height));
  auto pic = Picture::allocate(fmt, inf.width, inf.height, ao);
  if (!pic.ok() && ao.pool) {  // a picture the pool cannot serve: plain memory
    ao.pool = nullptr;
    pic = Picture::allocate(fmt, inf.width, inf.height, ao);
  }
  if (!pic.ok()) return pic.error().within(coding, "allocate");
  PIXPATH_TRY(PictureView dst, pic->write());
  PIXPATH_TRY(std::vector<Error> warnings, decode_to_view(*dec, data, params, inf, dst));
  return Decoded{std::move(*pic), std::move(warnings)};
}

// One GPU decoder for the process, made on first use (its failure is kept and raised again).
std::mutex g_gpu_mu;
std::shared_ptr<cuda::GpuJpegDecoder> g_gpu;
std::optional<Error> g_gpu_error;

}  // namespace

Result<std::shared_ptr<cuda::GpuJpegDecoder>> shared_gpu_decoder() {
  std::lock_guard<std::mutex> lock(g_gpu_mu);
  if (g_gpu) return g_gpu;
  if (g_gpu_error) return *g_gpu_error;
  cuda::GpuDecoderOptions o;
  o.module_path = cuda_module_beside_extension();
  auto d = cuda::GpuJpegDecoder::create(o);
  if (!d.ok()) {
    g_gpu_error = d.error();
    return d.error();
  }
  g_gpu = std::shared_ptr<cuda::GpuJpegDecoder>(std::move(*d));
  return g_gpu;
}

namespace {

Result<Decoded> decode_gpu(const Request& rq, std::span<const uint8_t> data) {
  PIXPATH_TRY(std::string coding, resolve_coding(rq, data));
  if (coding != "jpeg" && coding != "jpega") {
    return decode_error(coding, ErrorCode::Unsupported, "gpu decode",
                        "device='cuda' decodes jpeg and jpega only");
  }
  if (rq.format && *rq.format != PixelFormat::RGBA) {
    return decode_error(coding, ErrorCode::Unsupported, "gpu decode", "GPU pictures are RGBA");
  }
  PIXPATH_TRY(auto gpu, shared_gpu_decoder());
  cuda::GpuDecodeParams gp;
  gp.width = rq.params.width;
  gp.height = rq.params.height;
  gp.limits = rq.params.limits;
  if (coding == "jpega") gp.alpha_offset = rq.options.alpha_offset;
  PIXPATH_TRY(Picture p, gpu->decode_to_device(data, gp));
  return Decoded{std::move(p), {}};
}

Request make_request(const std::optional<std::string>& coding, const std::optional<std::string>& format,
                     int width, int height, int rowstride, const std::optional<std::string>& rgb_format,
                     int zlib, int lz4, std::optional<int64_t> alpha_offset) {
  Request rq;
  rq.coding = coding.value_or("");
  if (format) rq.format = parse_packed_format(*format, "decode");
  rq.params.width = width;
  rq.params.height = height;
  rq.params.rowstride = rowstride;
  if (rgb_format) rq.options.rgb_format = *rgb_format;
  rq.options.zlib = zlib;
  rq.options.lz4 = lz4;
  rq.options.alpha_offset = alpha_offset;
  return rq;
}

py::object decode(py::handle data, const std::optional<std::string>& coding, py::handle into,
                  const std::optional<std::string>& format, int width, int height, int rowstride,
                  const std::optional<std::string>& rgb_format, int zlib, int lz4,
                  std::optional<int64_t> alpha_offset, size_t stride, const std::string& device) {
  Request rq = make_request(coding, format, width, height, rowstride, rgb_format, zlib, lz4, alpha_offset);
  HeldBuffer in(data, PyBUF_SIMPLE);
  std::optional<HeldBuffer> out;
  if (!into.is_none()) {
    if (device != "cpu") raise_error(decode_error(rq.coding, ErrorCode::Unsupported, "into", "into= is for CPU decoding"));
    out.emplace(into, PyBUF_RECORDS);
  }
  if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0) {
    raise_error(decode_error(rq.coding, ErrorCode::InvalidArgument, "decode",
                             "device must be 'cpu' or 'cuda', not '" + device + "'"));
  }
  std::optional<Result<Decoded>> r;
  {
    py::gil_scoped_release nogil;
    r.emplace(device == "cpu" ? decode_cpu(rq, in.bytes(), out ? &out->get() : nullptr, stride)
                              : decode_gpu(rq, in.bytes()));
  }
  Decoded d = unwrap(std::move(*r));
  for (const Error& w : d.warnings) warn(w);
  if (out) return py::reinterpret_borrow<py::object>(into);
  return wrap_picture(std::move(d.picture));
}

py::dict inspect(py::handle data, const std::optional<std::string>& coding, int width, int height,
                 int rowstride, const std::optional<std::string>& rgb_format, int zlib, int lz4,
                 std::optional<int64_t> alpha_offset) {
  Request rq = make_request(coding, std::nullopt, width, height, rowstride, rgb_format, zlib, lz4, alpha_offset);
  HeldBuffer in(data, PyBUF_SIMPLE);
  std::string c = unwrap(resolve_coding(rq, in.bytes()));
  const codecs::Decoder* dec = codecs::CodecRegistry::builtin().decoder(c);
  if (!dec) raise_error(decode_error(c, ErrorCode::Unsupported, "inspect", "no decoder for this coding"));
  codecs::DecodeParams params = rq.params;
  params.options = &rq.options;
  codecs::ImageInfo inf = unwrap(dec->inspect(in.bytes(), params));
  py::dict d;
  d["coding"] = c;
  d["width"] = inf.width;
  d["height"] = inf.height;
  d["natural_format"] = std::string(name(inf.natural_format));
  d["has_alpha"] = inf.has_alpha;
  d["detail"] = inf.detail;
  return d;
}

}  // namespace

std::string cuda_module_beside_extension() {
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(&cuda_module_beside_extension), &dl) == 0 || !dl.dli_fname) return "";
  std::string path = dl.dli_fname;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  std::string candidate = path.substr(0, slash) + "/libpixpath_cuda.so";
  struct stat st {};
  return stat(candidate.c_str(), &st) == 0 ? candidate : "";
}

void register_decode(py::module_& m) {
  m.def("decode", &decode, py::arg("data"), py::arg("coding") = py::none(), py::kw_only(),
        py::arg("into") = py::none(), py::arg("format") = py::none(), py::arg("width") = 0,
        py::arg("height") = 0, py::arg("rowstride") = 0, py::arg("rgb_format") = py::none(),
        py::arg("zlib") = 0, py::arg("lz4") = 0, py::arg("alpha_offset") = py::none(),
        py::arg("stride") = 0, py::arg("device") = "cpu", R"doc(
Decodes one picture; the GIL is released while decoding.

data: bytes-like (bytes, bytearray, memoryview, numpy uint8), read without a copy.
coding: 'jpeg', 'jpega', 'png', 'png/L', 'png/P', 'webp', 'rgb24', 'rgb32' (pixpath.codings()),
    or None to recognise JPEG, PNG, WebP and PNM files by their content.
into: a writable buffer to decode into (numpy array (h, w, c) or (h, w*c) with any row
    stride, bytearray, mmap; 1-D buffers take `stride`, default width*channels). Returned.
format: 'RGB', 'RGBA', 'BGRA', 'BGRX', 'GRAY8', ...; default RGB, or RGBA where the picture
    has alpha (with into=: from the buffer's channel count).
width, height: the expected size (required for rgb24/rgb32; 0 = from the data).
rowstride, rgb_format, zlib, lz4: the xpra draw options of rgb24/rgb32 data.
alpha_offset: jpega's byte offset of the alpha JPEG.
device: 'cpu', or 'cuda' (nvJPEG through the GPU module; jpeg and jpega, RGBA in CUDA memory,
    exported with DLPack and __cuda_array_interface__).

Returns a writable Picture (or `into`). Raises pixpath.Error (code, coding, stage, reason);
recoverable problems are pixpath.DecodeWarning warnings.)doc");
  m.def("inspect", &inspect, py::arg("data"), py::arg("coding") = py::none(), py::kw_only(),
        py::arg("width") = 0, py::arg("height") = 0, py::arg("rowstride") = 0,
        py::arg("rgb_format") = py::none(), py::arg("zlib") = 0, py::arg("lz4") = 0,
        py::arg("alpha_offset") = py::none(),
        "The headers only: {'coding', 'width', 'height', 'natural_format', 'has_alpha', 'detail'}.");
  m.def("codings", [] { return codecs::CodecRegistry::builtin().decodable_codings(); },
        "The codings decode() takes, in xpra's preference order.");
  m.def("libraries", [] {
    py::dict d;
    for (const auto& l : codecs::CodecRegistry::builtin().library_versions()) d[py::str(l.name)] = l.version;
    return d;
  }, "The codec libraries behind the decoders and their versions.");
  m.def("gpu_info", [] {
    cuda::GpuDecoderOptions o;
    o.module_path = cuda_module_beside_extension();
    std::optional<Result<std::string>> r;
    {
      py::gil_scoped_release nogil;
      r.emplace(cuda::gpu_info_json(o));
    }
    return unwrap(std::move(*r));
  }, "The GPU module's description of every CUDA device, as JSON; raises pixpath.Error "
     "(code 'Unavailable') where the module, driver or nvJPEG is missing.");
}

}  // namespace pixpath::python
