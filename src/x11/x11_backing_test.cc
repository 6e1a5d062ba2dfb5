// The X11 backing under its own Xvfb: what it paints (paint, scroll, direct targets, resize) is
// what the X display shows at the hinted position, with shared memory and with plain PutImage;
// a WM_DELETE_WINDOW message comes back as a Close event; the keyboard is described.
#include "pixpath/x11/x11_backing.h"

#include <gtest/gtest.h>
#include <xcb/xcb.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "support/xvfb.h"

namespace pixpath::x11 {
namespace {

using namespace std::chrono_literals;

// A BGRX picture whose every pixel differs from its neighbours.
Picture pattern(int w, int h, int seed) {
  auto p = Picture::allocate(PixelFormat::BGRX, w, h);
  EXPECT_TRUE(p.ok());
  auto v = p->write();
  for (int y = 0; y < h; ++y) {
    uint8_t* row = v->plane(0).unchecked_row(y);
    for (int x = 0; x < w; ++x) {
      row[4 * x] = uint8_t(x * 7 + seed), row[4 * x + 1] = uint8_t(y * 5 + seed * 3);
      row[4 * x + 2] = uint8_t((x ^ y) + seed), row[4 * x + 3] = 0xFF;
    }
  }
  return std::move(*p);
}

// The root window's pixels at (x, y, w, h) as the display shows them (BGRX rows, tightly packed).
std::vector<uint32_t> screen_pixels(const std::string& display, int x, int y, int w, int h) {
  xcb_connection_t* c = xcb_connect(display.c_str(), nullptr);
  xcb_screen_t* s = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
  std::vector<uint32_t> out;
  auto* r = xcb_get_image_reply(c, xcb_get_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, s->root, int16_t(x), int16_t(y),
                                                 uint16_t(w), uint16_t(h), ~0u), nullptr);
  if (r) {
    const uint32_t* d = reinterpret_cast<const uint32_t*>(xcb_get_image_data(r));
    out.assign(d, d + size_t(w) * size_t(h));
    std::free(r);
  }
  xcb_disconnect(c);
  return out;
}

// Pixels of `wid` the backing holds (X byte ignored) equal those on the screen at (sx, sy).
void expect_shown(X11Backing& b, int64_t wid, const std::string& display, int sx, int sy) {
  auto snap = b.snapshot(wid);
  ASSERT_TRUE(snap.ok()) << snap.error().message();
  const int w = snap->width(), h = snap->height();
  std::vector<uint32_t> screen;
  int64_t differ = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {  // the X server shows it a moment later
    screen = screen_pixels(display, sx, sy, w, h);
    ASSERT_EQ(screen.size(), size_t(w) * size_t(h)) << "cannot read the screen";
    auto v = snap->read();
    differ = 0;
    for (int y = 0; y < h; ++y) {
      const uint32_t* row = reinterpret_cast<const uint32_t*>(v->plane(0).row(y).data());
      for (int x = 0; x < w; ++x) differ += ((row[x] ^ screen[size_t(y) * size_t(w) + size_t(x)]) & 0xFFFFFF) != 0;
    }
    if (differ == 0) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(differ, 0) << "pixels differ between the framebuffer and the display";
}

class X11BackingTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (!testing::have_program("Xvfb")) GTEST_SKIP() << "Xvfb is not installed";
    std::string why;
    ASSERT_TRUE(xvfb_.start(&why)) << why;
  }
  testing::Xvfb xvfb_{320, 240};
};

TEST_P(X11BackingTest, WhatItPaintsIsWhatTheDisplayShows) {
  X11BackingOptions o;
  o.display = xvfb_.display();
  o.shared_memory = GetParam();
  o.hints = [](int64_t wid) -> std::optional<WindowHints> {
    return WindowHints{30 + int(wid), 20, false, "window " + std::to_string(wid)};
  };
  auto b = X11Backing::create(o);
  ASSERT_TRUE(b.ok()) << b.error().message();
  X11Backing& x = **b;
  EXPECT_EQ(x.shared_memory(), GetParam()) << "a local Xvfb offers MIT-SHM; shared_memory = false turns it off";
  ASSERT_TRUE(x.create_window(1, 100, 80).ok());
  ASSERT_TRUE(x.paint(1, 0, 0, pattern(100, 80, 1)).ok());
  ASSERT_TRUE(x.paint(1, 10, 12, pattern(40, 30, 9)).ok());
  const ScrollRect sr{0, 10, 100, 40, 0, -6};
  ASSERT_TRUE(x.scroll(1, std::span(&sr, 1)).ok());
  // A direct target, written as a decoder would.
  auto t = x.begin_direct(1, {50, 50, 20, 20});
  ASSERT_TRUE(t.ok()) << t.error().message();
  for (int y = 0; y < 20; ++y) std::memset(t->view.plane(0).unchecked_row(y), 0x40 + y, 80);
  ASSERT_TRUE(x.end_direct(std::move(*t), true).ok());
  expect_shown(x, 1, xvfb_.display(), 31, 20);
  // Resized by the server: the kept part and the new black part are shown.
  ASSERT_TRUE(x.resize_window(1, 140, 60).ok());
  expect_shown(x, 1, xvfb_.display(), 31, 20);
  // Moved: shown at the new place.
  ASSERT_TRUE(x.move_window(1, 150, 100).ok());
  ASSERT_TRUE(x.paint(1, 0, 0, pattern(140, 60, 5)).ok());
  expect_shown(x, 1, xvfb_.display(), 150, 100);
  const auto st = x.stats();
  EXPECT_GT(GetParam() ? st.shm_puts : st.plain_puts, 0);
  EXPECT_EQ(GetParam() ? st.plain_puts : st.shm_puts, 0);
  ASSERT_TRUE(x.destroy_window(1).ok());
  EXPECT_TRUE(x.windows().empty());
}

INSTANTIATE_TEST_SUITE_P(SharedMemory, X11BackingTest, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "Shm" : "PutImage"; });

TEST_F(X11BackingTest, CloseRequestAndKeyboard) {
  X11BackingOptions o;
  o.display = xvfb_.display();
  auto b = X11Backing::create(o);
  ASSERT_TRUE(b.ok()) << b.error().message();
  ASSERT_TRUE((*b)->create_window(7, 50, 40).ok());
  const auto xid = (*b)->x_window(7);
  ASSERT_TRUE(xid);
  // What a window manager sends when the user closes the window.
  xcb_connection_t* c = xcb_connect(xvfb_.display().c_str(), nullptr);
  auto atom = [&](const char* name) {
    auto* r = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, uint16_t(std::strlen(name)), name), nullptr);
    xcb_atom_t a = r->atom;
    std::free(r);
    return a;
  };
  xcb_client_message_event_t ev{};
  ev.response_type = XCB_CLIENT_MESSAGE;
  ev.format = 32;
  ev.window = *xid;
  ev.type = atom("WM_PROTOCOLS");
  ev.data.data32[0] = atom("WM_DELETE_WINDOW");
  xcb_send_event(c, 0, *xid, XCB_EVENT_MASK_NO_EVENT, reinterpret_cast<const char*>(&ev));
  xcb_flush(c);
  bool closed = false;
  for (int i = 0; i < 100 && !closed; ++i) {
    auto events = (*b)->poll_events();
    ASSERT_TRUE(events.ok()) << events.error().message();
    for (const auto& e : *events) closed |= e.kind == EventKind::Close && e.wid == 7;
    std::this_thread::sleep_for(10ms);
  }
  xcb_disconnect(c);
  EXPECT_TRUE(closed);
  const KeyboardDescription& kb = (*b)->keyboard();
  bool has_a = false, shift_is_shift = false;
  for (const auto& e : kb.entries) has_a |= e.name == "a" && e.level == 0;
  for (const auto& [name, mod] : kb.mod_meanings) shift_is_shift |= name == "Shift_L" && mod == "shift";
  EXPECT_TRUE(has_a);
  EXPECT_TRUE(shift_is_shift);
}

}  // namespace
}  // namespace pixpath::x11
