// SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), enough for xpra's "hmac+sha256" challenge.
// Internal to pixpath_xpra; not a general-purpose crypto API.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace pixpath::xpra::internal {

std::array<uint8_t, 32> sha256(std::span<const uint8_t> data);
std::array<uint8_t, 32> hmac_sha256(std::span<const uint8_t> key, std::span<const uint8_t> msg);
std::string to_hex(std::span<const uint8_t> bytes);

}  // namespace pixpath::xpra::internal
