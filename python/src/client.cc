// pixpath.attach() and pixpath.Client: the xpra client (client::ClientPipeline on a CPU
// backing) running on a background thread, which is its UI thread: it owns the backing and
// the pipeline, paints, and serves snapshot requests. Callbacks are called on the pipeline's
// threads (the session reader for windows and draws, the UI thread for acks) with the GIL
// taken; an exception they raise is reported as unraisable (printed) and the client goes on.
#include <pybind11/stl.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "pixpath/client/client_pipeline.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/paint/cpu_backing.h"
#include "pypixpath.h"

namespace pixpath::python {
namespace {

// A Python callable released under the GIL whichever thread drops the last reference.
using Callback = std::shared_ptr<py::object>;
Callback keep_callback(py::object fn) {
  if (fn.is_none()) return nullptr;
  return Callback(new py::object(std::move(fn)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

template <class MakeArg>
void call(const Callback& cb, MakeArg make) {
  if (!cb) return;
  py::gil_scoped_acquire gil;
  try {
    (*cb)(make());
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("pixpath client callback");
  }
}

py::dict window_dict(const char* event, int64_t wid, int x, int y, int w, int h, bool override_redirect,
                     const std::string& title) {
  py::dict d;
  d["event"] = event;
  d["wid"] = wid;
  d["x"] = x;
  d["y"] = y;
  d["w"] = w;
  d["h"] = h;
  d["override_redirect"] = override_redirect;
  d["title"] = title;
  return d;
}

class PyObserver final : public client::ClientObserver {
 public:
  Callback window_cb, draw_cb, ack_cb, end_cb;

  void on_window_new(const xpra::WindowInfo& w) override {
    call(window_cb, [&] { return window_dict("new", w.wid, w.x, w.y, w.w, w.h, w.override_redirect, w.title); });
  }
  void on_window_lost(int64_t wid) override {
    call(window_cb, [&] { return window_dict("lost", wid, 0, 0, 0, 0, false, ""); });
  }
  void on_move_resize(const xpra::WindowGeometry& g, bool resized) override {
    call(window_cb, [&] {
      return window_dict(resized ? "resize" : "move", g.wid, g.x, g.y, g.w, g.h, false, "");
    });
  }
  void on_draw(const DrawPacket& p) override {
    call(draw_cb, [&] {
      py::dict d;
      d["wid"] = p.wid;
      d["x"] = p.x;
      d["y"] = p.y;
      d["w"] = p.w;
      d["h"] = p.h;
      d["coding"] = p.coding;
      d["sequence"] = p.sequence;
      d["bytes"] = p.data.size();
      return d;
    });
  }
  void on_ack(const DamageAck& ack, const paint::PaintReport& r, client::AckDelivery delivery) override {
    call(ack_cb, [&] {
      py::dict d = ack_dict(ack, r);
      d["delivery"] = delivery == client::AckDelivery::Sent       ? "sent"
                      : delivery == client::AckDelivery::AfterClose ? "after-close"
                                                                    : "failed";
      return d;
    });
  }
  void on_session_end(const xpra::SessionEnd& end) override {
    call(end_cb, [&] { return py::str(end.message()); });
  }
};

py::dict stats_dict(const client::ClientPipelineStats& s) {
  py::dict d;
  d["draws_submitted"] = s.draws_submitted;
  d["acks"] = s.acks;
  d["acks_painted"] = s.acks_painted;
  d["acks_error"] = s.acks_error;
  d["acks_skipped"] = s.acks_skipped;
  d["acks_sent"] = s.acks_sent;
  d["acks_after_close"] = s.acks_after_close;
  d["outstanding"] = s.outstanding;
  d["session_draws"] = s.session_draws;
  d["direct_decodes"] = s.engine.direct_decodes;
  d["private_decodes"] = s.engine.private_decodes;
  d["decoder"] = s.engine.decoder;
  return d;
}

class PyClient {
 public:
  PyClient(client::ClientPipelineOptions options, std::unique_ptr<PyObserver> observer)
      : options_(std::move(options)), observer_(std::move(observer)) {
    options_.observers = {observer_.get()};
    thread_ = std::thread([this] { run(); });
  }
  ~PyClient() {
    // The client thread takes the GIL for callbacks: never wait for it while holding it.
    if (PyGILState_Check()) {
      py::gil_scoped_release nogil;
      stop_and_join();
    } else {
      stop_and_join();
    }
  }

  // Waits (GIL released by the caller) until the server's hello or a failure.
  Result<void> wait_ready(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return ready_ || start_error_ || finished_; })) {
      return Error(ErrorCode::Unavailable, "xpra", "connect", "no hello from the server in time");
    }
    if (start_error_) return *start_error_;
    if (!ready_) return Error(ErrorCode::Unavailable, "xpra", "connect", "the client stopped");
    return ok();
  }

  // Runs `fn` on the UI thread and waits for it (GIL released by the caller).
  Result<Picture> on_ui_thread(std::function<Result<Picture>(client::ClientPipeline*, paint::Backing&)> fn) {
    std::packaged_task<Result<Picture>()> task([this, fn] { return fn(pipeline_, backing_); });
    auto fut = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_) return Error(ErrorCode::Cancelled, "client", "snapshot", "the client has stopped");
      requests_.push_back(std::move(task));
    }
    wake_.store(true);
    return fut.get();
  }

  void request_stop(std::string reason) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_reason_ = std::move(reason);
    }
    stop_.store(true);
  }

  void stop_and_join() {
    if (!stop_.load()) request_stop("client exit");
    if (thread_.joinable()) thread_.join();
  }

  client::ClientPipelineStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    if (pipeline_) return pipeline_->stats();
    return final_stats_;
  }
  std::vector<client::ClientWindow> windows() {
    std::lock_guard<std::mutex> lock(mu_);
    if (pipeline_) return pipeline_->windows();
    return final_windows_;
  }
  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return pipeline_ ? pipeline_->closed() : finished_;
  }
  std::optional<std::string> end() {
    std::lock_guard<std::mutex> lock(mu_);
    if (pipeline_) {
      auto e = pipeline_->end();
      if (e) return e->message();
      return std::nullopt;
    }
    return final_end_;
  }

 private:
  void serve_requests() {
    std::deque<std::packaged_task<Result<Picture>()>> todo;
    {
      std::lock_guard<std::mutex> lock(mu_);
      todo.swap(requests_);
    }
    for (auto& t : todo) t();
  }

  void run() {
    auto started = client::ClientPipeline::start(backing_, options_);
    if (!started.ok()) {
      finish_with_error(started.error());
      return;
    }
    std::unique_ptr<client::ClientPipeline> p = std::move(*started);
    auto ready = p->wait_until_ready(std::chrono::milliseconds(options_.session.connect_timeout) * 2);
    if (!ready.ok()) {
      p->stop("client exit");
      finish_with_error(ready.error());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      pipeline_ = p.get();
      ready_ = true;
    }
    cv_.notify_all();
    while (!stop_.load() && !p->closed()) {
      serve_requests();
      p->run_ui_once();
      if (!wake_.exchange(false)) p->wait_for_work(std::chrono::milliseconds(10));
    }
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(mu_);
      reason = stop_reason_.empty() ? "client exit" : stop_reason_;
    }
    p->stop(reason);
    {
      std::lock_guard<std::mutex> lock(mu_);
      final_stats_ = p->stats();
      final_windows_ = p->windows();
      if (auto e = p->end()) final_end_ = e->message();
      pipeline_ = nullptr;
    }
    p.reset();
    // The backing stays: snapshots are served until stop() is asked.
    while (!stop_.load()) {
      serve_requests();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    serve_requests();
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
    }
    serve_requests();
    cv_.notify_all();
  }

  void finish_with_error(const Error& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      start_error_ = e;
      finished_ = true;
    }
    cv_.notify_all();
  }

  client::ClientPipelineOptions options_;
  std::unique_ptr<PyObserver> observer_;
  paint::CpuBacking backing_;  // the UI thread's
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> wake_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool ready_ = false, finished_ = false;
  std::optional<Error> start_error_;
  std::string stop_reason_;
  client::ClientPipeline* pipeline_ = nullptr;  // guarded by mu_ for readers off the UI thread
  std::deque<std::packaged_task<Result<Picture>()>> requests_;
  client::ClientPipelineStats final_stats_;
  std::vector<client::ClientWindow> final_windows_;
  std::optional<std::string> final_end_;
};

}  // namespace

void register_client(py::module_& m) {
  py::class_<PyClient>(m, "Client", R"doc(
A running xpra client (pixpath.attach()). Its pipeline paints into CPU framebuffers on a
background thread; stats(), windows() and snapshot() may be called from any thread.
stop() disconnects (as `pixpath attach` does on exit) and returns the final stats.)doc")
      .def("stats", [](PyClient& c) { return stats_dict(c.stats()); },
           "The pipeline's counts so far: draws submitted, acks (painted, error, skipped, sent), "
           "outstanding draws, session draws, direct/private decodes, the decoder in use.")
      .def("windows", [](PyClient& c) {
        py::list out;
        for (const auto& w : c.windows()) out.append(window_dict(w.lost ? "lost" : "live", w.wid, w.x, w.y, w.w, w.h,
                                                                 w.override_redirect, w.title));
        return out;
      }, "The session's windows: dicts with event ('live' or 'lost'), wid, x, y, width, height, "
         "override_redirect, title.")
      .def("snapshot", [](PyClient& c, int64_t wid) {
        std::optional<Result<Picture>> r;
        {
          py::gil_scoped_release nogil;
          // A window with a draw decoding straight into its framebuffer (a direct target) has
          // no consistent picture to give: the backing refuses (Busy), and the snapshot is asked again
          // once that draw has had time to finish (CI, 2026-12-03: a snapshot taken while the
          // first draws were still arriving failed). For up to 2 s.
          for (int attempt = 0;; ++attempt) {
            r.emplace(c.on_ui_thread([wid](client::ClientPipeline*, paint::Backing& b) { return b.snapshot(wid); }));
            const bool busy = !r->ok() && r->error().code() == ErrorCode::Busy;
            if (!busy || attempt == 400) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }
        return wrap_picture(unwrap(std::move(*r)));
      }, py::arg("wid"), "The window's framebuffer (BGRX Picture, shared with the backing: read-only).")
      .def_property_readonly("closed", &PyClient::closed, "The session has ended.")
      .def_property_readonly("end", &PyClient::end, "Why the session ended, or None.")
      .def("stop", [](PyClient& c, const std::string& reason) {
        {
          py::gil_scoped_release nogil;
          c.request_stop(reason);
          c.stop_and_join();
        }
        return stats_dict(c.stats());
      }, py::arg("reason") = "client exit",
         "Disconnects (telling the server `reason`), waits for the client thread and returns the "
         "final stats() (the GIL is released while it waits).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyClient& c, py::args) {
        py::gil_scoped_release nogil;
        c.stop_and_join();
      });

  m.def("attach", [](const std::string& url, int decode_threads, const std::string& decoder,
                     std::optional<std::vector<std::string>> encodings, std::optional<std::string> password,
                     py::object on_window, py::object on_draw, py::object on_ack, py::object on_end,
                     double timeout, int quality) {
    client::ClientPipelineOptions o;
    o.session.url = url;
    if (quality != -1 && (quality < 1 || quality > 100))
      raise_error(Error(ErrorCode::InvalidArgument, "xpra", "attach",
                        "quality must be 1..100 (or -1: the server chooses), not " + std::to_string(quality)));
    o.session.quality = quality;
    std::vector<std::string> enc = encodings.value_or(codecs::CodecRegistry::builtin().decodable_codings());
    enc.push_back("scroll");
    o.session.encodings = enc;
    if (password) o.session.password.literal = *password;
    o.engine.decode_threads = decode_threads;
    o.engine.decoder = unwrap(paint::parse_decoder_choice(decoder));
    o.gpu.module_path = cuda_module_beside_extension();
    auto obs = std::make_unique<PyObserver>();
    obs->window_cb = keep_callback(on_window);
    obs->draw_cb = keep_callback(on_draw);
    obs->ack_cb = keep_callback(on_ack);
    obs->end_cb = keep_callback(on_end);
    auto client = std::make_unique<PyClient>(std::move(o), std::move(obs));
    Result<void> r = [&] {
      py::gil_scoped_release nogil;
      return client->wait_ready(std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000)));
    }();
    if (!r.ok()) {
      {
        py::gil_scoped_release nogil;
        client->stop_and_join();
        client.reset();
      }
      raise_error(r.error());
    }
    return client;
  }, py::arg("url"), py::kw_only(), py::arg("decode_threads") = 2, py::arg("decoder") = "cpu",
     py::arg("encodings") = py::none(), py::arg("password") = py::none(),
     py::arg("on_window") = py::none(), py::arg("on_draw") = py::none(), py::arg("on_ack") = py::none(),
     py::arg("on_end") = py::none(), py::arg("timeout") = 10.0, py::arg("quality") = -1, R"doc(
Connects to an xpra server (tcp://HOST:PORT/, :N, socket:///PATH) and runs pixpath's client on
a background thread (CPU framebuffers, headless). Returns a Client once the server said hello;
raises pixpath.Error when it cannot connect. Callbacks, each with one dict (on_end: a str):
on_window (event 'new', 'lost', 'move', 'resize'), on_draw (every draw as received), on_ack
(every acknowledgement with its timings). The password, when the server asks, is `password`
or else XPRA_PASSWORD. quality (1..100) asks the server for that picture quality (xpra's
--quality); -1 lets it choose.)doc");
}

}  // namespace pixpath::python
