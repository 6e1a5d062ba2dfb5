// The client display's keyboard: keysyms per keycode (the core mapping), which keys are which
// modifiers, and the XKB rules names, as xpra's X11 clients send them in their hello.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "internal/x11_connection.h"

extern "C" char* XKeysymToString(unsigned long keysym);  // libX11; needs no display

namespace pixpath::x11::internal {

uint32_t Keymap::at(int keycode, int column) const {
  if (keycode < min_keycode || keycode > max_keycode || column < 0 || column >= per_keycode) return 0;
  const size_t i = size_t(keycode - min_keycode) * size_t(per_keycode) + size_t(column);
  return i < keysyms.size() ? keysyms[i] : 0;
}

namespace {
bool lower_latin(uint32_t k) { return (k >= 'a' && k <= 'z') || (k >= 0xe0 && k <= 0xfe && k != 0xf7); }
}  // namespace

uint32_t Keymap::keysym(int keycode, uint16_t state) const {
  const uint32_t k0 = at(keycode, 0);
  uint32_t k1 = at(keycode, 1);
  const bool shift = state & XCB_MOD_MASK_SHIFT, lock = state & XCB_MOD_MASK_LOCK;
  if (k1 == 0) {
    if (!lower_latin(k0)) return k0;
    k1 = k0 - 0x20;  // the X core rule: a lone lowercase keysym has its uppercase as level 2
  }
  bool second = shift;
  if (lock && lower_latin(k0)) second = !second;  // caps lock acts on letters only
  return second ? k1 : k0;
}

Result<Keymap> read_keymap(xcb_connection_t* c) {
  const xcb_setup_t* setup = xcb_get_setup(c);
  Keymap km;
  km.min_keycode = setup->min_keycode;
  km.max_keycode = setup->max_keycode;
  const uint8_t count = uint8_t(km.max_keycode - km.min_keycode + 1);
  auto* r = xcb_get_keyboard_mapping_reply(
      c, xcb_get_keyboard_mapping(c, setup->min_keycode, count), nullptr);
  if (!r) return x11_error(ErrorCode::Unavailable, "read keymap", "GetKeyboardMapping failed");
  km.per_keycode = r->keysyms_per_keycode;
  const xcb_keysym_t* syms = xcb_get_keyboard_mapping_keysyms(r);
  km.keysyms.assign(syms, syms + xcb_get_keyboard_mapping_keysyms_length(r));
  std::free(r);
  return km;
}

std::string keysym_name(uint32_t keysym) {
  if (const char* n = keysym ? XKeysymToString(keysym) : nullptr) return n;
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", keysym);
  return buf;
}

std::string keysym_text(uint32_t keysym) {
  uint32_t cp = 0;
  if ((keysym >= 0x20 && keysym <= 0x7e) || (keysym >= 0xa0 && keysym <= 0xff)) cp = keysym;
  else if (keysym >= 0x01000100 && keysym <= 0x0110ffff) cp = keysym - 0x01000000;
  else if (keysym == 0xff0d) return "\r";  // Return
  else if (keysym == 0xff09) return "\t";  // Tab
  else if (keysym == 0xff08) return "\b";  // BackSpace
  else if (keysym == 0xff1b) return "\x1b";  // Escape
  else return "";
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xc0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += char(0xe0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3f));
    s += char(0x80 | (cp & 0x3f));
  } else {
    s += char(0xf0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3f));
    s += char(0x80 | ((cp >> 6) & 0x3f));
    s += char(0x80 | (cp & 0x3f));
  }
  return s;
}

std::vector<std::string> modifier_names(uint16_t state) { return paint::x_modifier_names(state); }

void translate_key(const Keymap& keymap, WindowEvent& e) {
  e.keysym = keymap.keysym(int(e.keycode), e.state);
  e.keyname = keysym_name(e.keysym);
  e.text = keysym_text(e.keysym);
  e.modifiers = modifier_names(e.state);
}

KeyboardDescription describe_keyboard(xcb_connection_t* c, xcb_screen_t* screen, const Atoms& atoms,
                                      const Keymap& keymap) {
  KeyboardDescription d;
  // _XKB_RULES_NAMES: "rules\0model\0layout\0variant\0options\0" (what setxkbmap -query reads).
  if (atoms.xkb_rules_names) {
    auto* r = xcb_get_property_reply(
        c, xcb_get_property(c, 0, screen->root, atoms.xkb_rules_names, XCB_ATOM_STRING, 0, 1024), nullptr);
    if (r) {
      const char* p = static_cast<const char*>(xcb_get_property_value(r));
      const int n = xcb_get_property_value_length(r);
      std::string* fields[] = {&d.rules, &d.model, &d.layout, &d.variant, &d.options};
      int f = 0;
      for (int i = 0; i < n && f < 5; ++i) {
        if (p[i] == '\0') ++f;
        else *fields[f] += p[i];
      }
      std::free(r);
    }
  }
  const int levels = std::min(keymap.per_keycode, 4);
  for (int kc = keymap.min_keycode; kc <= keymap.max_keycode; ++kc) {
    KeyboardDescription::Keycode k{kc, {}};
    bool any = false;
    for (int col = 0; col < keymap.per_keycode; ++col) {
      const uint32_t s = keymap.at(kc, col);
      k.keysyms.push_back(s ? keysym_name(s) : "");
      any |= s != 0;
      if (s && col < levels) d.entries.push_back({s, keysym_name(s), kc, col / 2, col % 2});
    }
    while (!k.keysyms.empty() && k.keysyms.back().empty()) k.keysyms.pop_back();
    if (any) d.keycodes.push_back(std::move(k));
  }
  if (auto* r = xcb_get_modifier_mapping_reply(c, xcb_get_modifier_mapping(c), nullptr)) {
    static const char* kNames[8] = {"shift", "lock", "control", "mod1", "mod2", "mod3", "mod4", "mod5"};
    const xcb_keycode_t* codes = xcb_get_modifier_mapping_keycodes(r);
    for (int mod = 0; mod < 8; ++mod) {
      for (int i = 0; i < r->keycodes_per_modifier; ++i) {
        const int kc = codes[mod * r->keycodes_per_modifier + i];
        const uint32_t s = kc ? keymap.at(kc, 0) : 0;
        if (s) d.mod_meanings[keysym_name(s)] = kNames[mod];
      }
    }
    std::free(r);
  }
  return d;
}

}  // namespace pixpath::x11::internal
