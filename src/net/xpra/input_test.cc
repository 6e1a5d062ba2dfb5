// The input packets and hello capabilities in the forms xpra 3.1 and 6.x read (their server
// handlers index the fields as below: server/mixins/input_server.py and x11/server.py in 3.1,
// server/subsystem/{keyboard,pointer,window}.py in 6.5.5), and through both packet encoders.
#include "pixpath/net/xpra/input.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/rencode.h"

namespace pixpath::xpra {
namespace {

Keymap small_keymap() {
  Keymap k;
  k.layout = "us";
  k.x11_keycodes = {{38, {"a", "A"}}, {50, {"Shift_L"}}};
  k.keycodes = {{0x61, "a", 38, 0, 0}, {0x41, "A", 38, 0, 1}, {0xffe1, "Shift_L", 50, 0, 0}};
  k.mod_meanings = {{"Shift_L", "shift"}};
  return k;
}

TEST(XpraInput, KeyActionFields) {
  const Value p = key_action_packet(3, "a", true, {"shift"}, 0x41, "A", 38);
  ASSERT_TRUE(p.is_list());
  const auto& l = p.as_list();
  ASSERT_EQ(l.size(), 9u);  // type + wid, keyname, pressed, modifiers, keyval, string, keycode, group
  EXPECT_EQ(l[0], Value("key-action"));
  EXPECT_EQ(l[1].as_int(), 3);
  EXPECT_EQ(l[2], Value("a"));
  EXPECT_TRUE(l[3].as_bool());
  EXPECT_EQ(l[4], Value::string_list({"shift"}));
  EXPECT_EQ(l[5].as_int(), 0x41);
  EXPECT_EQ(l[6], Value("A"));
  EXPECT_EQ(l[7].as_int(), 38);
  EXPECT_EQ(l[8].as_int(), 0);
}

TEST(XpraInput, PointerButtonFocusConfigureClose) {
  const Value m = pointer_position_packet(2, 110, 60, 10, 20, {}, {1});
  ASSERT_EQ(m.as_list().size(), 5u);
  EXPECT_EQ(m.as_list()[0], Value("pointer-position"));
  EXPECT_EQ(m.as_list()[2], Value::list({110, 60, 10, 20}));  // root x, y, then inside the window
  const Value b = button_action_packet(2, 4, false, 110, 60, 10, 20, {"control"}, {});
  ASSERT_EQ(b.as_list().size(), 7u);
  EXPECT_EQ(b.as_list()[2].as_int(), 4);
  EXPECT_FALSE(b.as_list()[3].as_bool());
  EXPECT_EQ(b.as_list()[4], Value::list({110, 60, 10, 20}));
  EXPECT_EQ(b.as_list()[5], Value::string_list({"control"}));
  EXPECT_EQ(focus_packet(0, {}), Value::list({"focus", 0, Value::string_list({})}));
  const Value c = configure_window_packet(5, 10, 20, 300, 200);
  ASSERT_EQ(c.as_list().size(), 10u);  // up to skip_geometry: both generations read 6..9 then
  EXPECT_EQ(c.as_list()[0], Value("configure-window"));
  EXPECT_EQ(c.as_list()[4].as_int(), 300);
  EXPECT_TRUE(c.as_list()[6].is_dict());
  EXPECT_FALSE(c.as_list()[9].as_bool());
  EXPECT_EQ(close_window_packet(5), Value::list({"close-window", 5}));
}

TEST(XpraInput, HelloCapsFlatFor31NestedFor6) {
  Value flat{Value::Dict{}};
  set_input_caps(flat, small_keymap(), false);
  EXPECT_TRUE(flat.find("keyboard")->as_bool());
  EXPECT_TRUE(flat.find("mouse")->as_bool());
  ASSERT_TRUE(flat.find("xkbmap_keycodes"));
  EXPECT_EQ(flat.find("xkbmap_keycodes")->as_list().size(), 3u);
  EXPECT_EQ(flat.find("xkbmap_keycodes")->as_list()[1], Value::list({0x41, "A", 38, 0, 1}));
  const Value* x11 = flat.find("xkbmap_x11_keycodes");
  ASSERT_TRUE(x11 && x11->is_dict());
  EXPECT_EQ(x11->as_dict()[0].first.as_int(), 38);  // integer keys, as xpra's clients send them
  EXPECT_EQ(*flat.find("xkbmap_layout"), Value("us"));
  EXPECT_FALSE(flat.find("xkbmap_query")) << "no native keymap: the server keeps its own keycodes";
  EXPECT_EQ(*flat.find("xkbmap_mod_meanings")->find("Shift_L"), Value("shift"));
  EXPECT_FALSE(flat.find("keymap"));

  Value nested{Value::Dict{}};
  set_input_caps(nested, small_keymap(), true);
  const Value* km = nested.find("keymap");
  ASSERT_TRUE(km && km->is_dict());
  EXPECT_EQ(*km->find("layout"), Value("us"));
  EXPECT_EQ(km->find("keycodes")->as_list().size(), 3u);
  EXPECT_TRUE(km->find("x11_keycodes")->is_dict());
  EXPECT_FALSE(km->find("query_struct"));
  EXPECT_FALSE(nested.find("xkbmap_keycodes"));

  // Both encoders carry them (integer dict keys included) and read them back the same.
  auto b = bencode_decode(SharedBytes::adopt(bencode_encode(flat)));
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(*b, flat);
  auto r = rencode_decode(SharedBytes::adopt(rencode_encode(nested)));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, nested);
}

// The "cursor" packet as 3.1 and 6.x (backwards-compatible form) send it: [type, encoding, x, y,
// w, h, xhot, yhot, serial, pixels, name, default size, max size...] (server/source/
// windows_mixin.py in 3.1, server/source/cursor.py in 6.5.5); [type, ""] for the default.
TEST(XpraInput, CursorPacket) {
  std::vector<uint8_t> px(2 * 3 * 4);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(i * 7);
  const Value p = Value::list({"cursor", "raw", 10, 20, 2, 3, 1, 2, 77, Value(SharedBytes::copy_of(px)), "xterm",
                               32, 64, 64});
  auto c = parse_cursor_packet(p);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_FALSE(c->is_default);
  EXPECT_EQ(c->w, 2);
  EXPECT_EQ(c->h, 3);
  EXPECT_EQ(c->xhot, 1);
  EXPECT_EQ(c->yhot, 2);
  EXPECT_EQ(c->serial, 77);
  EXPECT_EQ(c->name, "xterm");
  ASSERT_EQ(c->bgra.size(), px.size());
  EXPECT_TRUE(std::equal(px.begin(), px.end(), c->bgra.data()));

  auto d = parse_cursor_packet(Value::list({"cursor", ""}));
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_TRUE(d->is_default);

  // Wrong pixel count, an encoding not asked for, a cursor too large: refused, saying why.
  auto short_px = parse_cursor_packet(
      Value::list({"cursor", "raw", 0, 0, 2, 4, 0, 0, 1, Value(SharedBytes::copy_of(px)), "x"}));
  ASSERT_FALSE(short_px.ok());
  EXPECT_NE(short_px.error().message().find("want 32"), std::string::npos) << short_px.error().message();
  EXPECT_FALSE(parse_cursor_packet(Value::list({"cursor", "png", 0, 0, 2, 3, 0, 0, 1, "x", "x"})).ok());
  EXPECT_FALSE(parse_cursor_packet(
                   Value::list({"cursor", "raw", 0, 0, 5000, 1, 0, 0, 1, Value(SharedBytes::copy_of(px)), "x"}))
                   .ok());

  // The hello asks for them, raw.
  Value caps{Value::Dict{}};
  set_input_caps(caps, small_keymap(), false);
  ASSERT_NE(caps.find("cursors"), nullptr);
  EXPECT_EQ(*caps.find("cursors"), Value(true));
  ASSERT_NE(caps.find("encodings.cursor"), nullptr);
  EXPECT_EQ(*caps.find("encodings.cursor"), Value::string_list({"raw"}));
}

}  // namespace
}  // namespace pixpath::xpra
