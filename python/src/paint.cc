// pixpath.CpuBacking, pixpath.PaintEngine and pixpath.play(): the paint engine and the
// recording player from Python. Framebuffers are read as pixpath Pictures (BGRX, shared with
// the backing: numpy arrays on them are read-only; the backing copies on its next write while
// they live, as in C++).
//
// Threading: a CpuBacking and an engine belong to the thread that created them (the "UI
// thread" of paint_engine.h); their methods raise pixpath.Error (stage "thread") elsewhere.
// The GIL is released while the engine paints and while a recording plays; callbacks
// (on_ack, progress) are called with the GIL taken again. An exception raised by a callback is
// re-raised by the call that ran it (run_ui_once, wait_idle, play).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/paint_engine.h"
#include "pixpath/paint/player.h"
#include "pypixpath.h"

namespace pixpath::python {
namespace {

void check_owner(std::thread::id owner, std::string_view what) {
  if (std::this_thread::get_id() != owner) {
    raise_error(Error(ErrorCode::InvalidArgument, std::string(what), "thread",
                      "called from a thread other than the one that created it (the UI thread)"));
  }
}

struct PyCpuBacking {
  paint::CpuBacking backing;
  std::thread::id owner = std::this_thread::get_id();
};

// The first exception a callback raised while the GIL was released around the engine.
struct CallbackError {
  std::mutex mu;
  std::optional<py::error_already_set> error;
  void keep(py::error_already_set&& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!error) error.emplace(std::move(e));
    else e.discard_as_unraisable("pixpath callback");
  }
  void rethrow() {
    std::optional<py::error_already_set> e;
    {
      std::lock_guard<std::mutex> lock(mu);
      e.swap(error);
    }
    if (e) throw std::move(*e);
  }
};

paint::DecoderChoice decoder_choice(const std::string& text) { return unwrap(paint::parse_decoder_choice(text)); }

paint::GpuDrawDecoderFactory gpu_factory() {
  cuda::GpuDecoderOptions o;
  o.module_path = cuda_module_beside_extension();
  return cuda::gpu_draw_decoder_factory(o);
}

struct PyPaintEngine {
  py::object backing_ref;  // keeps the CpuBacking alive while the engine lives
  PyCpuBacking* backing = nullptr;
  std::unique_ptr<paint::PaintEngine> engine;
  std::shared_ptr<CallbackError> callback_error = std::make_shared<CallbackError>();
  std::thread::id owner = std::this_thread::get_id();

  paint::PaintEngine& get() {
    if (!engine) raise_error(Error(ErrorCode::Cancelled, "paint engine", "use", "the engine was shut down"));
    return *engine;
  }
  void shutdown() {
    if (!engine) return;
    check_owner(owner, "paint engine");
    {
      py::gil_scoped_release nogil;
      engine->shutdown();
      engine.reset();
    }
    callback_error->rethrow();
  }
};

py::dict play_result_dict(const paint::PlayResult& r) {
  auto stats = [](const paint::CodingStats& c) {
    py::dict d;
    d["coding"] = c.coding;
    d["draws"] = c.draws;
    d["painted"] = c.painted;
    d["errors"] = c.errors;
    d["skipped"] = c.skipped;
    d["direct"] = c.direct;
    d["bytes_in"] = c.bytes_in;
    d["gpu"] = c.gpu;
    d["cpu"] = c.cpu;
    auto lat = [](const LatencySummary& l) {
      py::dict x;
      x["count"] = l.count;
      x["p50_us"] = l.p50;
      x["p90_us"] = l.p90;
      x["p99_us"] = l.p99;
      x["max_us"] = l.max;
      x["mean_us"] = l.mean;
      return x;
    };
    d["queue"] = lat(c.queue);
    d["decode"] = lat(c.decode);
    d["paint"] = lat(c.paint);
    d["total"] = lat(c.total);
    return d;
  };
  py::dict d;
  d["file"] = r.file;
  d["backing"] = r.backing;
  d["pace"] = r.pace;
  d["decode_threads"] = r.decode_threads;
  d["events"] = r.events;
  d["recorded_s"] = r.recorded_s;
  d["wall_s"] = r.wall_s;
  d["fps"] = r.fps;
  d["mbytes_per_s"] = r.mbytes_per_s;
  d["copies"] = r.copies;
  d["copy_bytes"] = r.copy_bytes;
  d["decoder"] = r.decoder;
  d["decoder_reason"] = r.decoder_reason;
  d["gpu_decodes"] = r.gpu_decodes;
  py::list per;
  for (const auto& c : r.per_coding) per.append(stats(c));
  d["per_coding"] = per;
  d["all"] = stats(r.all);
  d["errors"] = r.errors;
  d["snapshots"] = r.snapshots;
  return d;
}

}  // namespace

py::dict ack_dict(const DamageAck& ack, const paint::PaintReport& r) {
  py::dict d;
  d["sequence"] = ack.sequence;
  d["wid"] = ack.wid;
  d["w"] = ack.w;
  d["h"] = ack.h;
  d["decode_time_us"] = ack.decode_time_us;
  d["message"] = ack.message;
  d["coding"] = r.coding;
  d["decoder"] = std::string(r.decoder);
  d["direct"] = r.direct;
  d["queue_us"] = r.queue_us;
  d["decode_us"] = r.decode_us;
  d["paint_us"] = r.paint_us;
  d["total_us"] = r.total_us;
  return d;
}

void register_paint(py::module_& m) {
  py::class_<PyCpuBacking>(m, "CpuBacking", R"doc(
Window framebuffers in host memory (BGRX), painted by a PaintEngine or play(). snapshot(wid)
returns the framebuffer as a Picture shared with the backing (no copy): numpy arrays on it
are read-only, and the backing copies the framebuffer on its next write while the snapshot
lives (copy-on-write). Owned by the thread that created it.)doc")
      .def(py::init<>())
      .def("windows", [](PyCpuBacking& b) { check_owner(b.owner, "backing"); return b.backing.windows(); },
           "The ids of the windows the backing holds.")
      .def("window_size", [](PyCpuBacking& b, int64_t wid) -> py::object {
        check_owner(b.owner, "backing");
        auto s = b.backing.window_size(wid);
        if (!s) return py::none();
        return py::make_tuple(s->w, s->h);
      }, py::arg("wid"), "(width, height) of the window's framebuffer, or None when there is no such window.")
      .def("create_window", [](PyCpuBacking& b, int64_t wid, int w, int h) {
        check_owner(b.owner, "backing");
        check(b.backing.create_window(wid, w, h));
      }, py::arg("wid"), py::arg("width"), py::arg("height"),
         "Makes a window's framebuffer (BGRX, cleared); raises pixpath.Error when the size is refused.")
      .def("paint", [](PyCpuBacking& b, int64_t wid, int x, int y, const PyPicture& p) {
        check_owner(b.owner, "backing");
        Result<void> r = [&] {
          py::gil_scoped_release nogil;
          return b.backing.paint(wid, x, y, p.picture);
        }();
        check(r);
      }, py::arg("wid"), py::arg("x"), py::arg("y"), py::arg("picture"),
         "Paints a host picture (any packed format) at (x, y); the GIL is released.")
      .def("snapshot", [](PyCpuBacking& b, int64_t wid) {
        check_owner(b.owner, "backing");
        return wrap_picture(unwrap(b.backing.snapshot(wid)));
      }, py::arg("wid"), "The window's framebuffer as a Picture (BGRX), shared: no copy.")
      .def("snapshot_png", [](PyCpuBacking& b, int64_t wid) {
        check_owner(b.owner, "backing");
        auto png = unwrap(paint::snapshot_png(b.backing, wid));
        return py::bytes(reinterpret_cast<const char*>(png.data()), png.size());
      }, py::arg("wid"), "The window's framebuffer encoded as PNG (bytes).");

  py::class_<PyPaintEngine>(m, "PaintEngine", R"doc(
pixpath's paint engine on a CpuBacking: submit xpra draw packets from any thread, decode on
worker threads, paint on this (the creating) thread in run_ui_once() / wait_idle(), and get one
acknowledgement per draw through on_ack(dict). Call shutdown() (or use it as a context
manager) on the creating thread.)doc")
      .def(py::init([](py::object backing, int decode_threads, const std::string& decoder,
                       bool direct_decode, py::object on_ack) {
             auto* b = backing.cast<PyCpuBacking*>();
             check_owner(b->owner, "backing");
             auto e = std::make_unique<PyPaintEngine>();
             e->backing_ref = backing;
             e->backing = b;
             paint::PaintEngineConfig c;
             c.decode_threads = decode_threads;
             c.decoder = decoder_choice(decoder);
             c.direct_decode = direct_decode;
             if (c.decoder != paint::DecoderChoice::Cpu) c.gpu_factory = gpu_factory();
             if (!on_ack.is_none()) {
               // Released under the GIL, whichever thread drops the engine's config.
               std::shared_ptr<py::object> cb(new py::object(on_ack), [](py::object* o) {
                 py::gil_scoped_acquire gil;
                 delete o;
               });
               auto errors = e->callback_error;
               c.on_ack = [cb, errors](const DamageAck& ack, const paint::PaintReport& r) {
                 py::gil_scoped_acquire gil;
                 try {
                   (*cb)(ack_dict(ack, r));
                 } catch (py::error_already_set& err) {
                   errors->keep(std::move(err));
                 }
               };
             }
             e->engine = unwrap(paint::PaintEngine::create(b->backing, std::move(c)));
             return e;
           }),
           py::arg("backing"), py::kw_only(), py::arg("decode_threads") = 2,
           py::arg("decoder") = "cpu", py::arg("direct_decode") = true, py::arg("on_ack") = py::none())
      .def("window_new", [](PyPaintEngine& e, int64_t wid, int w, int h) { e.get().window_new(wid, w, h); },
           py::arg("wid"), py::arg("width"), py::arg("height"),
           "A new window (xpra's new-window): draws for `wid` may follow.")
      .def("window_resize", [](PyPaintEngine& e, int64_t wid, int w, int h) { e.get().window_resize(wid, w, h); },
           py::arg("wid"), py::arg("width"), py::arg("height"),
           "The window's new size; its framebuffer keeps what fits.")
      .def("window_lost", [](PyPaintEngine& e, int64_t wid) { e.get().window_lost(wid); }, py::arg("wid"),
           "The window is gone: its queued draws are acknowledged as skipped.")
      .def("submit", [](PyPaintEngine& e, int64_t wid, int x, int y, int w, int h, const std::string& coding,
                        py::buffer data, int64_t sequence, int rowstride, py::dict options) {
        DrawPacket p;
        p.wid = wid;
        p.x = x;
        p.y = y;
        p.w = w;
        p.h = h;
        p.coding = coding;
        py::buffer_info bi = data.request();
        p.data = SharedBytes::copy_of(std::span<const uint8_t>(static_cast<const uint8_t*>(bi.ptr),
                                                               static_cast<size_t>(bi.size * bi.itemsize)));
        p.sequence = sequence;
        p.rowstride = rowstride;
        p.options = draw_options(options);
        p.received = std::chrono::steady_clock::now();
        paint::PaintEngine& eng = e.get();
        py::gil_scoped_release nogil;
        eng.submit(std::move(p));
      }, py::arg("wid"), py::arg("x"), py::arg("y"), py::arg("width"), py::arg("height"),
         py::arg("coding"), py::arg("data"), py::kw_only(), py::arg("sequence") = 0,
         py::arg("rowstride") = 0, py::arg("options") = py::dict(),
         "Queues one draw (any thread). `data` is copied; options as xpra's draw options "
         "(rgb_format, zlib, lz4, store, delta, bucket, alpha-offset, scaled_size, scroll, paint).")
      .def("run_ui_once", [](PyPaintEngine& e) {
        check_owner(e.owner, "paint engine");
        paint::PaintEngine& eng = e.get();
        int n;
        {
          py::gil_scoped_release nogil;
          n = eng.run_ui_once();
        }
        e.callback_error->rethrow();
        return n;
      }, "Paints what is ready (GIL released); the number of items completed.")
      .def("wait_idle", [](PyPaintEngine& e, double timeout_s) {
        check_owner(e.owner, "paint engine");
        paint::PaintEngine& eng = e.get();
        bool idle;
        {
          py::gil_scoped_release nogil;
          idle = eng.wait_idle(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
        }
        e.callback_error->rethrow();
        return idle;
      }, py::arg("timeout") = 10.0, "Runs the UI loop until every draw is painted and acknowledged; "
                                    "False on timeout.")
      .def("stats", [](PyPaintEngine& e) {
        auto s = e.get().stats();
        py::dict d;
        d["submitted"] = s.submitted;
        d["acked"] = s.acked;
        d["direct_decodes"] = s.direct_decodes;
        d["private_decodes"] = s.private_decodes;
        d["decoder"] = s.decoder;
        d["decoder_reason"] = s.decoder_reason;
        d["gpu_decodes"] = s.gpu_decodes;
        d["gpu_fallbacks"] = s.gpu_fallbacks;
        d["refused_queue_full"] = s.refused_queue_full;
        return d;
      }, "The engine's counts: submitted, acked, direct/private/GPU decodes, the decoder in use and why.")
      .def("shutdown", [](PyPaintEngine& e) { e.shutdown(); },
           "Stops the workers, acknowledges what is left with 0 (creating thread).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyPaintEngine& e, py::args) { e.shutdown(); });

  m.def("play", [](const std::string& path, py::object backing, const std::string& pace,
                   int decode_threads, const std::string& decoder, bool direct_decode,
                   const std::string& snapshot_dir, py::object progress) {
    if (backing.is_none()) backing = py::cast(new PyCpuBacking(), py::return_value_policy::take_ownership);
    auto* b = backing.cast<PyCpuBacking*>();
    check_owner(b->owner, "backing");
    paint::PlayOptions o;
    o.file = path;
    if (pace == "max") o.pace = paint::Pace::Max;
    else if (pace == "recorded") o.pace = paint::Pace::Recorded;
    else raise_error(Error(ErrorCode::InvalidArgument, "play", "options", "pace must be 'max' or 'recorded'"));
    o.decode_threads = decode_threads;
    o.direct_decode = direct_decode;
    o.decoder = decoder_choice(decoder);
    if (o.decoder != paint::DecoderChoice::Cpu) o.gpu_factory = gpu_factory();
    o.snapshot_dir = snapshot_dir;
    auto errors = std::make_shared<CallbackError>();
    if (!progress.is_none()) {
      o.progress = [&progress, errors](const paint::PlayProgress& p) {
        py::gil_scoped_acquire gil;
        try {
          py::dict d;
          d["events_done"] = p.events_done;
          d["events_total"] = p.events_total;
          d["draws_acked"] = p.draws_acked;
          d["elapsed_s"] = p.elapsed_s;
          progress(d);
        } catch (py::error_already_set& err) {
          errors->keep(std::move(err));
        }
      };
    }
    std::optional<Result<paint::PlayResult>> r;
    {
      py::gil_scoped_release nogil;
      r.emplace(paint::play_recording(o, b->backing));
    }
    errors->rethrow();
    py::dict d = play_result_dict(unwrap(std::move(*r)));
    d["backing_object"] = backing;
    return d;
  }, py::arg("path"), py::kw_only(), py::arg("backing") = py::none(), py::arg("pace") = "max",
     py::arg("decode_threads") = 2, py::arg("decoder") = "cpu", py::arg("direct_decode") = true,
     py::arg("snapshot_dir") = "", py::arg("progress") = py::none(), R"doc(
Plays a pixpath recording (.pxrec, `pixpath record`) through the paint engine into `backing`
(a new CpuBacking when None), with the GIL released. pace: 'max' (as fast as it goes) or
'recorded'. decoder: 'cpu', 'gpu' or 'auto' for jpeg. progress(dict) is called about every
100 ms. Returns the figures as a dict (fps, wall_s, per-coding draws, errors and latency
percentiles in microseconds, copies) with 'backing_object': the backing, whose windows'
framebuffers are then read with backing.snapshot(wid).)doc");
}

}  // namespace pixpath::python
