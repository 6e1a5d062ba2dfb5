#include "pixpath/net/xpra/input.h"

namespace pixpath::xpra {
namespace {

Value ints(const std::vector<int>& v) {
  Value::List l;
  for (int i : v) l.emplace_back(i);
  return Value(std::move(l));
}

}  // namespace

void set_input_caps(Value& caps, const Keymap& km, bool nested) {
  caps.set("keyboard", true);
  caps.set("mouse", true);
  caps.set("pointer", true);
  caps.set("keyboard_sync", false);  // the server does not repeat keys on its own
  caps.set("modifiers", Value::list({}));
  caps.set("cursors", true);  // the server's cursors, as "cursor" packets of raw pixels
  caps.set("encodings.cursor", Value::string_list({"raw"}));
  Value::Dict x11_keycodes;
  for (const auto& [kc, names] : km.x11_keycodes) x11_keycodes.emplace_back(Value(kc), Value::string_list(names));
  Value::List keycodes;
  for (const auto& e : km.keycodes)
    keycodes.push_back(Value::list({int64_t(e.keyval), e.name, e.keycode, e.group, e.level}));
  Value meanings{Value::Dict{}};
  for (const auto& [k, m] : km.mod_meanings) meanings.set(k, m);
  if (nested) {
    Value k{Value::Dict{}};
    k.set("backend", "x11");
    if (!km.layout.empty()) k.set("layout", km.layout);
    if (!km.variant.empty()) k.set("variant", km.variant);
    if (!km.options.empty()) k.set("options", km.options);
    k.set("layout_groups", true);
    k.set("raw", false);
    k.set("sync", false);
    k.set("mod_meanings", meanings);
    k.set("keycodes", Value(std::move(keycodes)));
    k.set("x11_keycodes", Value(std::move(x11_keycodes)));
    caps.set("keymap", k);
  } else {
    if (!km.layout.empty()) caps.set("xkbmap_layout", km.layout);
    if (!km.variant.empty()) caps.set("xkbmap_variant", km.variant);
    if (!km.options.empty()) caps.set("xkbmap_options", km.options);
    caps.set("xkbmap_mod_meanings", meanings);
    caps.set("xkbmap_keycodes", Value(std::move(keycodes)));
    caps.set("xkbmap_x11_keycodes", Value(std::move(x11_keycodes)));
    caps.set("xkbmap_raw", false);
  }
}

Value key_action_packet(int64_t wid, std::string_view keyname, bool pressed, const Modifiers& modifiers,
                        uint32_t keyval, std::string_view text, int keycode, int group) {
  return Value::list({"key-action", wid, keyname, pressed, Value::string_list(modifiers),
                      int64_t(keyval), text, keycode, group});
}

Value pointer_position_packet(int64_t wid, int x, int y, int wx, int wy, const Modifiers& modifiers,
                              const std::vector<int>& buttons) {
  return Value::list({"pointer-position", wid, ints({x, y, wx, wy}), Value::string_list(modifiers),
                      ints(buttons)});
}

Value button_action_packet(int64_t wid, int button, bool pressed, int x, int y, int wx, int wy,
                           const Modifiers& modifiers, const std::vector<int>& buttons) {
  return Value::list({"button-action", wid, button, pressed, ints({x, y, wx, wy}),
                      Value::string_list(modifiers), ints(buttons)});
}

Value focus_packet(int64_t wid, const Modifiers& modifiers) {
  return Value::list({"focus", wid, Value::string_list(modifiers)});
}

Value configure_window_packet(int64_t wid, int x, int y, int w, int h) {
  return Value::list({"configure-window", wid, x, y, w, h, Value(Value::Dict{}), 0,
                      Value(Value::Dict{}), false});
}

Value close_window_packet(int64_t wid) { return Value::list({"close-window", wid}); }

Result<Cursor> parse_cursor_packet(const Value& packet) {
  FieldReader r("cursor", packet);
  Cursor c;
  PIXPATH_TRY(const Value* encoding, r.at(1, "encoding"));
  if (!encoding->is_bytes()) return r.error("field 'encoding' (index 1) is not a string");
  if (encoding->as_view().empty()) return c;  // the default cursor
  if (encoding->as_view() != "raw") {
    return r.error("cursor encoding '" + std::string(encoding->as_view()) + "' (only raw was asked for)");
  }
  c.is_default = false;
  PIXPATH_TRY(c.w, r.int_in(4, "width", 1, kMaxCursorSide));
  PIXPATH_TRY(c.h, r.int_in(5, "height", 1, kMaxCursorSide));
  PIXPATH_TRY(c.xhot, r.int_in(6, "xhot", -kMaxCursorSide, kMaxCursorSide));
  PIXPATH_TRY(c.yhot, r.int_in(7, "yhot", -kMaxCursorSide, kMaxCursorSide));
  PIXPATH_TRY(c.serial, r.int_at(8, "serial"));
  PIXPATH_TRY(c.bgra, r.bytes_at(9, "pixels"));
  if (r.size() > 10) {
    if (auto name = r.string_at(10, "name"); name.ok()) c.name = std::move(*name);
  }
  const size_t want = size_t(c.w) * size_t(c.h) * 4;
  if (c.bgra.size() != want) {
    return r.error("cursor pixels: " + std::to_string(c.bgra.size()) + " bytes for " + std::to_string(c.w) +
                   "x" + std::to_string(c.h) + " (want " + std::to_string(want) + ")");
  }
  return c;
}

}  // namespace pixpath::xpra
