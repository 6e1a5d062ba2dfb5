// pixpath.VideoDecoder (one h264, vp8 or vp9 stream, on the CPU with libavcodec or on the GPU
// with NVDEC) and pixpath.read_recording() (the draws of a .pxrec file, e.g. to feed one).
//
// Frames come out as Pictures of packed RGB: on the CPU converted from the decoder's YUV with
// libyuv (paint/yuv_convert.h, one copy into new writable storage; the decoder's frame buffer
// goes back to its pool at once); on the GPU converted from NVDEC's frame by the CUDA module
// into new RGBA CUDA memory (GpuDrawDecoder::convert_video_frame: a GPU-side wait for
// libavcodec's stream, no host wait), exported with DLPack and __cuda_array_interface__.
//
// Threading: a VideoDecoder may be shared by Python threads; decode() and flush() release the
// GIL and take the decoder's mutex (libavcodec's decoder is used by one thread at a time).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/paint/recording.h"
#include "pixpath/paint/yuv_convert.h"
#include "pypixpath.h"

namespace pixpath::python {
namespace {

Error video_error(const std::string& coding, ErrorCode code, std::string stage, std::string reason) {
  return Error(code, coding, std::move(stage), std::move(reason));
}

// What one decode() or flush() call made: the pictures, and a warning to issue once the GIL is
// held again (a GPU-requested stream decoded on the CPU).
struct Converted {
  std::vector<Picture> pictures;
  std::optional<Error> warning;
};

class PyVideoDecoder {
 public:
  PyVideoDecoder(std::string coding, int width, int height, std::string csc, std::string device,
                 std::optional<std::string> format, int threads) {
    params_.coding = std::move(coding);
    params_.width = width;
    params_.height = height;
    params_.csc = std::move(csc);
    params_.threads = threads;
    if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0) {
      raise_error(video_error(params_.coding, ErrorCode::InvalidArgument, "video decoder",
                              "device must be 'cpu' or 'cuda', not '" + device + "'"));
    }
    cuda_ = device != "cpu";
    if (cuda_) {
      format_ = format ? parse_packed_format(*format, "video decoder") : PixelFormat::RGBA;
      if (format_ != PixelFormat::RGBA) {
        raise_error(video_error(params_.coding, ErrorCode::Unsupported, "video decoder",
                                "GPU frames are RGBA"));
      }
      std::optional<Result<std::shared_ptr<cuda::GpuJpegDecoder>>> gpu;
      {
        py::gil_scoped_release nogil;
        gpu.emplace(shared_gpu_decoder());
      }
      gpu_ = unwrap(std::move(*gpu));
      if (gpu_->cuda_device() < 0) {
        raise_error(video_error(params_.coding, ErrorCode::Unavailable, "video decoder",
                                "the GPU module has no CUDA device for video"));
      }
      params_.gpu_device = gpu_->cuda_device();
      params_.gpu_context = gpu_->cuda_context();
    } else {
      format_ = format ? parse_packed_format(*format, "video decoder") : PixelFormat::RGB;
      switch (format_) {
        case PixelFormat::RGB: case PixelFormat::BGR: case PixelFormat::RGBX:
        case PixelFormat::RGBA: case PixelFormat::BGRX: case PixelFormat::BGRA: break;
        default:
          raise_error(video_error(params_.coding, ErrorCode::Unsupported, "video decoder",
                                  "frames are RGB, BGR, RGBX, RGBA, BGRX or BGRA, not " +
                                      std::string(name(format_))));
      }
    }
    std::optional<Result<std::unique_ptr<codecs::VideoDecoder>>> made;
    {
      py::gil_scoped_release nogil;
      made.emplace(codecs::VideoDecoder::create(params_));
    }
    MutexLock lock(mu_);
    decoder_ = unwrap(std::move(*made));
  }

  py::object decode(py::handle data) {
    HeldBuffer in(data, PyBUF_SIMPLE);
    std::optional<Result<Converted>> r;
    {
      py::gil_scoped_release nogil;
      r.emplace(decode_locked(in.bytes()));
    }
    Converted c = unwrap(std::move(*r));
    if (c.warning) warn(*c.warning);
    if (c.pictures.empty()) return py::none();
    return wrap_picture(std::move(c.pictures.back()));
  }

  py::list flush() {
    std::optional<Result<Converted>> r;
    {
      py::gil_scoped_release nogil;
      r.emplace(flush_locked());
    }
    Converted c = unwrap(std::move(*r));
    if (c.warning) warn(*c.warning);
    py::list out;
    for (Picture& p : c.pictures) out.append(wrap_picture(std::move(p)));
    return out;
  }

  py::dict stats() {
    codecs::VideoDecoderStats s;
    {
      MutexLock lock(mu_);
      s = decoder_->stats();
    }
    py::dict d;
    d["packets"] = s.packets;
    d["frames"] = s.frames;
    d["no_picture"] = s.no_picture;
    d["gpu_requested"] = s.gpu_requested;
    d["gpu"] = s.gpu;
    d["gpu_frames"] = s.gpu_frames;
    d["gpu_note"] = s.gpu_note;
    return d;
  }

  const codecs::VideoStreamParams& params() const { return params_; }
  std::string format_name() const { return std::string(name(format_)); }
  std::string device() const {
    return cuda_ ? "cuda:" + std::to_string(params_.gpu_device) : std::string("cpu");
  }

 private:
  Result<Converted> decode_locked(std::span<const uint8_t> data) PIXPATH_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    PIXPATH_TRY(std::optional<codecs::VideoFrame> frame, decoder_->decode(data));
    Converted out;
    if (frame) {
      PIXPATH_TRY(Picture p, convert(*frame));
      out.pictures.push_back(std::move(p));
      out.warning = warning_for(*frame);
    }
    return out;
  }

  Result<Converted> flush_locked() PIXPATH_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    PIXPATH_TRY(std::vector<codecs::VideoFrame> frames, decoder_->flush());
    Converted out;
    for (const codecs::VideoFrame& f : frames) {
      PIXPATH_TRY(Picture p, convert(f));
      out.pictures.push_back(std::move(p));
      if (!out.warning) out.warning = warning_for(f);
    }
    return out;
  }

  Result<Picture> convert(const codecs::VideoFrame& frame) PIXPATH_REQUIRES(mu_) {
    if (frame.on_gpu()) return gpu_->convert_video_frame(frame, params_.coding);
    // A CPU frame (device "cpu", or a stream NVDEC did not take): RGB on the host.
    const Picture& yuv = frame.picture;
    auto out = Picture::allocate(format_, yuv.width(), yuv.height());
    if (!out.ok()) return out.error().within(params_.coding, "allocate");
    PIXPATH_TRY(ConstPictureView src, yuv.read());
    PIXPATH_TRY(PictureView dst, out->write());
    auto r = paint::yuv_to_rgb(src, frame.color, dst);
    if (!r.ok()) return r.error().within(params_.coding, "convert");
    return std::move(*out);
  }

  // The first CPU frame of a GPU-requested stream: one warning naming libavcodec's reason.
  std::optional<Error> warning_for(const codecs::VideoFrame& frame) PIXPATH_REQUIRES(mu_) {
    if (!cuda_ || frame.on_gpu() || warned_cpu_) return std::nullopt;
    warned_cpu_ = true;
    const std::string note = decoder_->stats().gpu_note;
    return video_error(params_.coding, ErrorCode::Unavailable, "gpu video decode",
                       "NVDEC did not take this stream (" +
                           (note.empty() ? std::string("no reason given") : note) +
                           "): its frames are decoded on the CPU and returned in host memory");
  }

  codecs::VideoStreamParams params_;
  PixelFormat format_ = PixelFormat::RGB;
  bool cuda_ = false;
  std::shared_ptr<cuda::GpuJpegDecoder> gpu_;  // device "cuda": converts NVDEC's frames
  Mutex mu_;
  std::unique_ptr<codecs::VideoDecoder> decoder_ PIXPATH_GUARDED_BY(mu_);
  bool warned_cpu_ PIXPATH_GUARDED_BY(mu_) = false;
};

const char* type_name(paint::RecordType t) {
  switch (t) {
    case paint::RecordType::WindowNew: return "window-new";
    case paint::RecordType::WindowResize: return "window-resize";
    case paint::RecordType::WindowLost: return "window-lost";
    case paint::RecordType::Draw: return "draw";
  }
  return "?";
}

py::list read_recording(const std::string& path) {
  std::optional<Result<std::vector<paint::RecordedEvent>>> r;
  {
    py::gil_scoped_release nogil;
    r.emplace([&]() -> Result<std::vector<paint::RecordedEvent>> {
      PIXPATH_TRY(paint::RecordingReader reader, paint::RecordingReader::open(path));
      return reader.read_all();
    }());
  }
  std::vector<paint::RecordedEvent> events = unwrap(std::move(*r));
  py::list out;
  for (const paint::RecordedEvent& e : events) {
    py::dict d;
    d["type"] = type_name(e.type);
    d["time_us"] = e.time_us;
    d["wid"] = e.wid;
    const bool draw = e.type == paint::RecordType::Draw;
    d["x"] = draw ? e.draw.x : e.x;
    d["y"] = draw ? e.draw.y : e.y;
    d["w"] = draw ? e.draw.w : e.w;
    d["h"] = draw ? e.draw.h : e.h;
    if (draw) {
      d["coding"] = e.draw.coding;
      d["data"] = py::bytes(reinterpret_cast<const char*>(e.draw.data.data()), e.draw.data.size());
      d["sequence"] = e.draw.sequence;
      d["rowstride"] = e.draw.rowstride;
      d["options"] = options_dict(e.draw.options);
    }
    out.append(d);
  }
  return out;
}

}  // namespace

void register_video(py::module_& m) {
  py::class_<PyVideoDecoder>(m, "VideoDecoder", R"doc(
One video stream (h264, vp8 or vp9) decoded frame by frame into RGB pictures.

VideoDecoder(coding, width, height, *, csc='YUV420P', device='cpu', format=None, threads=1)

coding: 'h264', 'vp8' or 'vp9' (video_codings()); width, height: the encoded size (xpra's
    draw size, or its 'scaled_size' option); csc: the stream's input colourspace as xpra's
    draw option says ('YUV420P', 'YUV422P', 'YUV444P').
device: 'cpu' (libavcodec), or 'cuda' (NVDEC through libavcodec on the GPU module's device;
    frames are RGBA in CUDA memory, exported with DLPack and __cuda_array_interface__). A stream
    NVDEC does not take (its size or colourspace limits) is decoded on the CPU from its first
    frame; its frames then come back in host memory, with one pixpath.DecodeWarning naming
    the reason (stats()['gpu_note']).
format: the frames' pixel format: 'RGB' (default on the CPU), 'BGR', 'RGBA', 'RGBX', 'BGRA',
    'BGRX'; on the GPU 'RGBA' only.
threads: libavcodec's threads for this stream (1: decode on the calling thread).

One decoder per stream: make a new one when xpra's draw says frame 0 or changes the coding,
size or csc. Frames are new writable pictures (one conversion from the decoder's YUV, which
is released at once); they may outlive the decoder. The GIL is released while decoding.
Raises pixpath.Error (code, coding, stage, reason).)doc")
      .def(py::init<std::string, int, int, std::string, std::string, std::optional<std::string>, int>(),
           py::arg("coding"), py::arg("width"), py::arg("height"), py::kw_only(),
           py::arg("csc") = "YUV420P", py::arg("device") = "cpu", py::arg("format") = py::none(),
           py::arg("threads") = 1)
      .def("decode", &PyVideoDecoder::decode, py::arg("data"),
           "Decodes one packet; returns its frame as a Picture, or None when the decoder holds "
           "the frame back (xpra marks such draws 'delayed').")
      .def("flush", &PyVideoDecoder::flush,
           "End of stream: the frames still held back, oldest first.")
      .def("stats", &PyVideoDecoder::stats,
           "{'packets', 'frames', 'no_picture', 'gpu_requested', 'gpu', 'gpu_frames', 'gpu_note'}.")
      .def_property_readonly("coding", [](const PyVideoDecoder& d) { return d.params().coding; },
                             "The stream's coding: 'h264', 'vp8' or 'vp9'.")
      .def_property_readonly("width", [](const PyVideoDecoder& d) { return d.params().width; },
                             "The encoded width every frame must have.")
      .def_property_readonly("height", [](const PyVideoDecoder& d) { return d.params().height; },
                             "The encoded height every frame must have.")
      .def_property_readonly("csc", [](const PyVideoDecoder& d) { return d.params().csc; },
                             "The stream's input colourspace (xpra's csc).")
      .def_property_readonly("format", &PyVideoDecoder::format_name,
                             "The frames' pixel format ('RGB', 'RGBA', ...).")
      .def_property_readonly("device", &PyVideoDecoder::device,
                             "Where frames are asked for: 'cpu' or 'cuda:N' (stats()['gpu'] says "
                             "whether NVDEC took the stream).")
      .def("__repr__", [](const PyVideoDecoder& d) {
        return "<pixpath.VideoDecoder " + d.params().coding + " " + std::to_string(d.params().width) +
               "x" + std::to_string(d.params().height) + " " + d.params().csc + " -> " +
               d.format_name() + " on " + d.device() + ">";
      });
  m.def("video_codings", [] { return codecs::video_codings(); },
        "The video codings VideoDecoder takes, in preference order ([] when built without "
        "libavcodec).");
  m.def("read_recording", &read_recording, py::arg("path"), R"doc(
Every event of a pixpath recording (.pxrec: `pixpath record`, docs/recording-format.md), as
dicts in order: 'type' ('window-new', 'window-resize', 'window-lost', 'draw'), 'time_us' (since
the start), 'wid', 'x', 'y', 'w', 'h'; draws also 'coding', 'data' (bytes: a copy), 'sequence',
'rowstride' and 'options' (xpra's draw options: 'csc', 'frame', 'scaled_size', 'zlib', ...; the
keys PaintEngine.submit() takes). The whole file is read and checked first (GIL released); a
damaged file raises pixpath.Error.)doc");
}

}  // namespace pixpath::python
