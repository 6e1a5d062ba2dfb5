// Cursors from ARGB pixels through the X Render extension (RenderCreateCursor): the pixels go
// into a 32-bit pixmap, a picture of the server's ARGB32 format wraps it, and the cursor is
// made from the picture (premultiplied ARGB, as XFixes reports and xpra sends them).
#include <xcb/render.h>

#include <cstdlib>

#include "internal/x11_connection.h"

namespace pixpath::x11::internal {
namespace {

// The server's standard ARGB32 picture format (depth 32, a8r8g8b8), or 0.
xcb_render_pictformat_t argb32_format(xcb_connection_t* c) {
  auto* r = xcb_render_query_pict_formats_reply(c, xcb_render_query_pict_formats(c), nullptr);
  if (!r) return 0;
  xcb_render_pictformat_t found = 0;
  for (auto it = xcb_render_query_pict_formats_formats_iterator(r); it.rem; xcb_render_pictforminfo_next(&it)) {
    const xcb_render_pictforminfo_t& f = *it.data;
    const xcb_render_directformat_t& d = f.direct;
    if (f.type == XCB_RENDER_PICT_TYPE_DIRECT && f.depth == 32 && d.alpha_mask == 0xff && d.alpha_shift == 24 &&
        d.red_mask == 0xff && d.red_shift == 16 && d.green_mask == 0xff && d.green_shift == 8 &&
        d.blue_mask == 0xff && d.blue_shift == 0) {
      found = f.id;
      break;
    }
  }
  std::free(r);
  return found;
}

}  // namespace

Result<uint32_t> make_cursor(xcb_connection_t* c, xcb_screen_t* screen, const paint::CursorImage& image) {
  if (image.w <= 0 || image.h <= 0 || image.w > 1024 || image.h > 1024 ||
      image.bgra.size() != size_t(image.w) * size_t(image.h) * 4)
    return x11_error(ErrorCode::InvalidArgument, "cursor",
                     "a " + std::to_string(image.w) + "x" + std::to_string(image.h) + " cursor with " +
                         std::to_string(image.bgra.size()) + " bytes of pixels");
  const size_t max_bytes = size_t(xcb_get_maximum_request_length(c)) * 4;
  if (image.bgra.size() + 64 > max_bytes)
    return x11_error(ErrorCode::Unsupported, "cursor",
                     "a " + std::to_string(image.w) + "x" + std::to_string(image.h) +
                         " cursor does not fit in one request");
  const xcb_render_pictformat_t format = argb32_format(c);
  if (!format) return x11_error(ErrorCode::Unavailable, "cursor", "the X server has no ARGB32 Render format");
  const xcb_pixmap_t pixmap = xcb_generate_id(c);
  xcb_create_pixmap(c, 32, pixmap, screen->root, uint16_t(image.w), uint16_t(image.h));
  const xcb_gcontext_t gc = xcb_generate_id(c);
  xcb_create_gc(c, gc, pixmap, 0, nullptr);
  xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, pixmap, gc, uint16_t(image.w), uint16_t(image.h), 0, 0, 0, 32,
                uint32_t(image.bgra.size()), image.bgra.data());
  const xcb_render_picture_t picture = xcb_generate_id(c);
  xcb_render_create_picture(c, picture, pixmap, format, 0, nullptr);
  const xcb_cursor_t cursor = xcb_generate_id(c);
  xcb_generic_error_t* e = xcb_request_check(
      c, xcb_render_create_cursor_checked(c, cursor, picture, uint16_t(image.xhot), uint16_t(image.yhot)));
  xcb_render_free_picture(c, picture);
  xcb_free_gc(c, gc);
  xcb_free_pixmap(c, pixmap);
  if (e) {
    const int code = e->error_code;
    std::free(e);
    return x11_error(ErrorCode::Unavailable, "cursor", "RenderCreateCursor failed (X error " + std::to_string(code) + ")");
  }
  return uint32_t(cursor);
}

}  // namespace pixpath::x11::internal
