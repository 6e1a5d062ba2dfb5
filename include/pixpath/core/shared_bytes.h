// SharedBytes: an immutable, refcounted window onto bytes (compressed picture data, packet
// payloads). Slices share and keep alive the bytes they were cut from, so a draw packet's data
// can point into the network chunk it arrived in without a copy.
//
// Lifetime: the bytes live as long as any SharedBytes refers to them.
// Threading: immutable; copies may be used and dropped on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace pixpath {

class SharedBytes {
 public:
  SharedBytes() = default;

  // Takes the vector's buffer (no copy of the bytes).
  static SharedBytes adopt(std::vector<uint8_t> bytes) {
    auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    SharedBytes b;
    b.data_ = owner->data();
    b.size_ = owner->size();
    b.owner_ = std::move(owner);
    return b;
  }
  static SharedBytes copy_of(std::span<const uint8_t> bytes) {
    return adopt(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  static SharedBytes copy_of(std::string_view s) {
    return copy_of(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<const uint8_t> span() const { return {data_, size_}; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }

  // Bytes [offset, offset + length) clamped to what exists; shares the owner.
  SharedBytes slice(size_t offset, size_t length = SIZE_MAX) const {
    SharedBytes b = *this;
    if (offset > size_) offset = size_;
    b.data_ = data_ + offset;
    b.size_ = (length > size_ - offset) ? size_ - offset : length;
    return b;
  }

  long use_count() const { return owner_.use_count(); }

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pixpath
