#include "pixpath/x11/x11_keyboard.h"

#include <cstdlib>

#include "internal/x11_connection.h"

namespace pixpath::x11 {

struct Keyboard::Impl {
  std::shared_ptr<internal::Connection> conn;
  internal::Keymap keymap;
  KeyboardDescription description;
};

Keyboard::Keyboard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Keyboard::~Keyboard() = default;

Result<std::unique_ptr<Keyboard>> Keyboard::open(const std::string& display) {
  auto impl = std::make_unique<Impl>();
  PIXPATH_TRY(impl->conn, internal::Connection::open(display));
  PIXPATH_TRY(impl->keymap, internal::read_keymap(impl->conn->c));
  const internal::Atoms atoms = internal::intern_atoms(impl->conn->c);
  impl->description = internal::describe_keyboard(impl->conn->c, impl->conn->screen, atoms, impl->keymap);
  return std::unique_ptr<Keyboard>(new Keyboard(std::move(impl)));
}

const KeyboardDescription& Keyboard::description() const { return impl_->description; }

void Keyboard::translate(WindowEvent& e) {
  xcb_connection_t* c = impl_->conn->c;
  bool remap = false;
  while (xcb_generic_event_t* ev = xcb_poll_for_event(c)) {  // MappingNotify reaches every client
    remap |= (ev->response_type & 0x7f) == XCB_MAPPING_NOTIFY;
    std::free(ev);
  }
  if (remap) {
    if (auto km = internal::read_keymap(c); km.ok()) impl_->keymap = std::move(*km);
  }
  internal::translate_key(impl_->keymap, e);
}

}  // namespace pixpath::x11
