#include "pixpath/gl/gl_backing.h"

#include "pixpath/paint/backing_registry.h"

#include <string>

#include "internal/context_impl.h"
#include "pixpath/core/pixel_format.h"

namespace pixpath::gl {
namespace {
Error backing_error(ErrorCode code, std::string_view stage, std::string reason) {
  return Error(code, "gl backing", std::string(stage), std::move(reason));
}
}  // namespace

Result<std::unique_ptr<GlBacking>> GlBacking::create(const GlBackingOptions& options) {
  std::shared_ptr<GlContext> context = options.shared_context;
  if (!context) {
    GlContextOptions co = options.context;
    if (options.windowed) co.platform = GlPlatform::X11;
    PIXPATH_TRY(context, GlContext::create(co));
  }
  return std::unique_ptr<GlBacking>(new GlBacking(std::move(context), options));
}

GlBacking::GlBacking(std::shared_ptr<GlContext> context, const GlBackingOptions& options)
    : context_(std::move(context)), options_(options) {
  format_ = context_->caps().bgra_upload ? PixelFormat::BGRX : PixelFormat::RGBX;
}

GlBacking::~GlBacking() {
  targets_.clear();  // unwritten targets give their upload buffers back
  windows_.clear();
}

std::shared_ptr<ReleaseDomain> GlBacking::release_domain() const { return context_->release_domain(); }

Result<GlWindow*> GlBacking::find(int64_t wid, std::string_view stage) {
  auto it = windows_.find(wid);
  if (it == windows_.end()) {
    return backing_error(ErrorCode::InvalidArgument, stage, "no window " + std::to_string(wid));
  }
  if (it->second.open_targets > 0) {
    return backing_error(ErrorCode::InvalidArgument, stage,
                         "window " + std::to_string(wid) + " has an open direct target");
  }
  return it->second.gl.get();
}

GlWindow* GlBacking::window(int64_t wid) {
  auto it = windows_.find(wid);
  return it == windows_.end() ? nullptr : it->second.gl.get();
}

Result<void> GlBacking::after_change(GlWindow& window) {
  if (options_.windowed && options_.present_after_paint) return window.present();
  return ok();
}

Result<void> GlBacking::present(int64_t wid) {
  GlWindow* w = window(wid);
  if (!w) return backing_error(ErrorCode::InvalidArgument, "present", "no window " + std::to_string(wid));
  return w->present();
}

void GlBacking::set_paint_boxes(bool on) {
  options_.paint_boxes = on;
  for (auto& [wid, w] : windows_) w.gl->set_paint_boxes(on);
}

Result<void> GlBacking::create_window(int64_t wid, int w, int h) {
  if (windows_.count(wid)) {
    return backing_error(ErrorCode::InvalidArgument, "create window", "window " + std::to_string(wid) + " exists");
  }
  GlWindowOptions o;
  o.windowed = options_.windowed;
  o.paint_boxes = options_.paint_boxes;
  o.title = "pixpath window " + std::to_string(wid);
  if (options_.windowed) {
    o.decorated = true;
    o.wid = wid;
    o.on_event = [this](paint::WindowEvent e) { events_.push_back(std::move(e)); };
    if (options_.hints) {
      if (auto hints = options_.hints(wid)) {
        o.screen_x = hints->x, o.screen_y = hints->y;
        o.override_redirect = hints->override_redirect;
        if (!hints->title.empty()) o.title = hints->title;
      }
    }
  }
  PIXPATH_TRY(auto win, GlWindow::create(context_, w, h, o));
  if (cursor_) PIXPATH_CHECK(win->set_cursor(&*cursor_));
  auto& slot = windows_[wid];
  slot.gl = std::move(win);
  return after_change(*slot.gl);
}

Result<void> GlBacking::resize_window(int64_t wid, int w, int h) {
  PIXPATH_TRY(GlWindow * win, find(wid, "resize window"));
  PIXPATH_CHECK(win->resize(w, h));
  return after_change(*win);
}

Result<void> GlBacking::destroy_window(int64_t wid) {
  PIXPATH_TRY(GlWindow * win, find(wid, "destroy window"));
  (void)win;
  windows_.erase(wid);
  return ok();
}

std::optional<paint::Size> GlBacking::window_size(int64_t wid) const {
  auto it = windows_.find(wid);
  if (it == windows_.end()) return std::nullopt;
  return paint::Size{it->second.gl->width(), it->second.gl->height()};
}

std::vector<int64_t> GlBacking::windows() const {
  std::vector<int64_t> out;
  for (const auto& [wid, w] : windows_) out.push_back(wid);
  return out;
}

Result<paint::DirectTarget> GlBacking::begin_direct(int64_t wid, paint::Rect r) {
  auto it = windows_.find(wid);
  if (it == windows_.end()) {
    return backing_error(ErrorCode::InvalidArgument, "begin direct", "no window " + std::to_string(wid));
  }
  GlWindow& win = *it->second.gl;
  if (r.w <= 0 || r.h <= 0 || r.x < 0 || r.y < 0 || r.x + r.w > win.width() || r.y + r.h > win.height()) {
    return backing_error(ErrorCode::OutOfRange, "begin direct",
                         "rectangle " + std::to_string(r.w) + "x" + std::to_string(r.h) + "+" +
                             std::to_string(r.x) + "+" + std::to_string(r.y) + " is not inside the " +
                             std::to_string(win.width()) + "x" + std::to_string(win.height()) + " window");
  }
  PIXPATH_TRY(UploadSlot slot, win.begin_upload(format_, r.w, r.h));
  const uint64_t token = next_token_++;
  paint::DirectTarget target;
  target.wid = wid;
  target.rect = r;
  target.view = slot.view();
  target.token = token;
  targets_[token] = OpenTarget{wid, r, std::move(slot)};
  ++it->second.open_targets;
  return target;
}

Result<void> GlBacking::end_direct(paint::DirectTarget target, bool written) {
  auto t = targets_.find(target.token);
  if (t == targets_.end()) {
    return backing_error(ErrorCode::InvalidArgument, "end direct", "unknown direct target");
  }
  OpenTarget open = std::move(t->second);
  targets_.erase(t);
  auto w = windows_.find(open.wid);
  if (w == windows_.end()) return ok();  // cannot happen: destroy refuses open targets
  --w->second.open_targets;
  if (!written) return ok();  // dropping the slot gives the buffer back
  PIXPATH_CHECK(w->second.gl->paint(std::move(open.slot), {.x = open.rect.x, .y = open.rect.y}));
  return after_change(*w->second.gl);
}

Result<void> GlBacking::paint(int64_t wid, int x, int y, const Picture& picture, int w, int h) {
  PIXPATH_TRY(GlWindow * win, find(wid, "paint"));
  PaintParams params;
  params.x = x;
  params.y = y;
  params.width = w;
  params.height = h;
  params.yuv = options_.yuv;
  PIXPATH_CHECK(win->paint(picture, params));
  return after_change(*win);
}

Result<void> GlBacking::paint_yuv(int64_t wid, int x, int y, const Picture& yuv,
                                  codecs::VideoColor color, int w, int h) {
  if (color.gbr) return paint::Backing::paint_yuv(wid, x, y, yuv, color, w, h);  // no shader
  PIXPATH_TRY(GlWindow * win, find(wid, "paint"));
  PaintParams params;
  params.x = x;
  params.y = y;
  params.width = w;
  params.height = h;
  params.coding = "video";
  params.yuv.matrix = color.bt709 ? YuvMatrix::BT709 : YuvMatrix::BT601;
  params.yuv.range = color.full_range ? YuvRange::Full : YuvRange::Studio;
  PIXPATH_CHECK(win->paint(yuv, params));
  return after_change(*win);
}

Result<void> GlBacking::scroll(int64_t wid, std::span<const ScrollRect> rects) {
  PIXPATH_TRY(GlWindow * win, find(wid, "scroll"));
  PIXPATH_CHECK(win->scroll(rects));
  return after_change(*win);
}

Result<Picture> GlBacking::snapshot(int64_t wid) {
  PIXPATH_TRY(GlWindow * win, find(wid, "snapshot"));
  return win->readback(format_);
}

std::optional<paint::WindowTexture> GlBacking::window_texture(int64_t wid) {
  GlWindow* w = window(wid);
  if (!w) return std::nullopt;
  return paint::WindowTexture{w->texture(), w->width(), w->height()};
}

Result<void> GlBacking::texture_written(int64_t wid, paint::Rect r) {
  (void)r;
  PIXPATH_TRY(GlWindow * win, find(wid, "texture written"));
  context_->impl().stats.external_writes++;
  return after_change(*win);
}

Result<std::vector<paint::WindowEvent>> GlBacking::poll_events() {
  if (options_.windowed) poll_window_events();
  std::vector<paint::WindowEvent> out;
  std::map<int64_t, size_t> last_motion;  // wid -> index in out
  for (paint::WindowEvent& e : events_) {
    if (e.kind == paint::EventKind::Motion) {
      if (auto it = last_motion.find(e.wid); it != last_motion.end()) {
        out[it->second] = std::move(e);  // coalesced: the latest position wins
        continue;
      }
      last_motion[e.wid] = out.size();
    }
    out.push_back(std::move(e));
  }
  events_.clear();
  return out;
}

Result<void> GlBacking::move_window(int64_t wid, int x, int y) {
  GlWindow* w = window(wid);
  if (!w) return backing_error(ErrorCode::InvalidArgument, "move window", "no window " + std::to_string(wid));
  w->move(x, y);
  return ok();
}

Result<void> GlBacking::set_title(int64_t wid, const std::string& title) {
  GlWindow* w = window(wid);
  if (!w) return backing_error(ErrorCode::InvalidArgument, "set title", "no window " + std::to_string(wid));
  w->set_title(title);
  return ok();
}

Result<void> GlBacking::raise_window(int64_t wid) {
  GlWindow* w = window(wid);
  if (!w) return backing_error(ErrorCode::InvalidArgument, "raise window", "no window " + std::to_string(wid));
  w->raise();
  return ok();
}

Result<void> GlBacking::set_cursor(const paint::CursorImage* image) {
  if (image) cursor_ = *image;
  else cursor_.reset();
  for (auto& [wid, w] : windows_) PIXPATH_CHECK(w.gl->set_cursor(image));
  return ok();
}

bool GlBacking::has_native_window(int64_t wid) const {
  auto it = windows_.find(wid);
  return it != windows_.end() && it->second.gl->windowed();
}

int GlBacking::event_fd() const { return options_.windowed ? window_event_fd() : -1; }

Result<std::unique_ptr<paint::Backing>> make_gl_backing(const GlBackingOptions& options) {
  PIXPATH_TRY(auto backing, GlBacking::create(options));
  return std::unique_ptr<paint::Backing>(std::move(backing));
}

void register_gl_backings() {
  paint::register_backing("gl", [] { return make_gl_backing({}); });
  paint::register_backing("gl-window", [] {
    GlBackingOptions options;
    options.windowed = true;
    return make_gl_backing(options);
  });
}

}  // namespace pixpath::gl
