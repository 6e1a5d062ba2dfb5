#include "internal/x11_connection.h"

#include <xcb/shm.h>

#include <cstdlib>
#include <cstring>

namespace pixpath::x11::internal {

Connection::~Connection() {
  if (c) xcb_disconnect(c);
}

Result<std::shared_ptr<Connection>> Connection::open(const std::string& display) {
  const char* name = display.empty() ? std::getenv("DISPLAY") : display.c_str();
  if (!name || !*name) return x11_error(ErrorCode::Unavailable, "open display", "DISPLAY is not set");
  auto conn = std::make_shared<Connection>();
  int screen_number = 0;
  conn->c = xcb_connect(name, &screen_number);
  if (int err = xcb_connection_has_error(conn->c)) {
    return x11_error(ErrorCode::Unavailable, "open display",
                     std::string("cannot connect to ") + name + " (xcb error " + std::to_string(err) + ")");
  }
  xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(conn->c));
  for (int i = 0; it.rem && i < screen_number; ++i) xcb_screen_next(&it);
  if (!it.rem) return x11_error(ErrorCode::Unavailable, "open display", std::string(name) + " has no such screen");
  conn->screen = it.data;
  return conn;
}

Result<void> check_bgrx_visual(xcb_connection_t* c, xcb_screen_t* screen) {
  const xcb_setup_t* setup = xcb_get_setup(c);
  auto refuse = [](std::string why) {
    return x11_error(ErrorCode::Unavailable, "check visual",
                     why + " (the X11 backing shows BGRX framebuffers as they are; use --backing gl-window)");
  };
  if (screen->root_depth != 24) return refuse("the root window is " + std::to_string(screen->root_depth) + "-bit, not 24-bit");
  if (setup->image_byte_order != XCB_IMAGE_ORDER_LSB_FIRST) return refuse("the display is big-endian");
  bool bpp32 = false;
  for (auto f = xcb_setup_pixmap_formats_iterator(setup); f.rem; xcb_format_next(&f))
    if (f.data->depth == 24) bpp32 = f.data->bits_per_pixel == 32;
  if (!bpp32) return refuse("24-bit pixels are not stored in 32 bits");
  for (auto d = xcb_screen_allowed_depths_iterator(screen); d.rem; xcb_depth_next(&d)) {
    if (d.data->depth != 24) continue;
    for (auto v = xcb_depth_visuals_iterator(d.data); v.rem; xcb_visualtype_next(&v)) {
      if (v.data->visual_id != screen->root_visual) continue;
      if (v.data->_class == XCB_VISUAL_CLASS_TRUE_COLOR && v.data->red_mask == 0xff0000 &&
          v.data->green_mask == 0xff00 && v.data->blue_mask == 0xff)
        return ok();
      return refuse("the root visual is not TrueColor with 8-bit red, green, blue");
    }
  }
  return refuse("the root visual was not found");
}

bool shm_available(xcb_connection_t* c) {
  const xcb_query_extension_reply_t* ext = xcb_get_extension_data(c, &xcb_shm_id);
  if (!ext || !ext->present) return false;
  xcb_shm_query_version_reply_t* v = xcb_shm_query_version_reply(c, xcb_shm_query_version(c), nullptr);
  if (!v) return false;
  const bool ok = v->major_version > 1 || (v->major_version == 1 && v->minor_version >= 1);
  std::free(v);
  return ok;
}

Atoms intern_atoms(xcb_connection_t* c) {
  const char* names[] = {"WM_PROTOCOLS", "WM_DELETE_WINDOW", "_NET_WM_NAME", "UTF8_STRING", "_XKB_RULES_NAMES"};
  xcb_intern_atom_cookie_t cookies[5];
  for (int i = 0; i < 5; ++i) cookies[i] = xcb_intern_atom(c, 0, uint16_t(std::strlen(names[i])), names[i]);
  xcb_atom_t got[5] = {};
  for (int i = 0; i < 5; ++i) {
    if (auto* r = xcb_intern_atom_reply(c, cookies[i], nullptr)) {
      got[i] = r->atom;
      std::free(r);
    }
  }
  return Atoms{got[0], got[1], got[2], got[3], got[4]};
}

void set_title(xcb_connection_t* c, const Atoms& atoms, xcb_window_t w, const std::string& title) {
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING, 8,
                      uint32_t(title.size()), title.data());
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, atoms.net_wm_name, atoms.utf8_string, 8,
                      uint32_t(title.size()), title.data());
}

void set_window_properties(xcb_connection_t* c, const Atoms& atoms, xcb_window_t w,
                           const std::string& title, int x, int y, int width, int height) {
  set_title(c, atoms, w, title);
  static const char kClass[] = "pixpath\0pixpath";
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8,
                      sizeof(kClass), kClass);
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, atoms.wm_protocols, XCB_ATOM_ATOM, 32, 1,
                      &atoms.wm_delete_window);
  // WM_NORMAL_HINTS: flags USPosition | USSize | PPosition | PSize, then x, y, w, h.
  uint32_t hints[18] = {};
  hints[0] = 1 | 2 | 4 | 8;
  hints[1] = uint32_t(x), hints[2] = uint32_t(y), hints[3] = uint32_t(width), hints[4] = uint32_t(height);
  xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NORMAL_HINTS, XCB_ATOM_WM_SIZE_HINTS,
                      32, 18, hints);
}

std::optional<std::pair<int, int>> root_position(xcb_connection_t* c, xcb_window_t root, xcb_window_t w) {
  auto* r = xcb_translate_coordinates_reply(c, xcb_translate_coordinates(c, w, root, 0, 0), nullptr);
  if (!r) return std::nullopt;
  std::pair<int, int> p{r->dst_x, r->dst_y};
  std::free(r);
  return p;
}

}  // namespace pixpath::x11::internal
