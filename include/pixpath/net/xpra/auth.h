// Password authentication against an xpra server (its "challenge" packet).
//
// The client offers the HMAC digests in kSupportedDigests (SHA-2 family and SHA-1; an xpra
// server picks the strongest it shares, hmac+sha512 for xpra 3.1) as both digest and salt
// digest. Given the server's challenge
// ["challenge", server_salt, cipher_caps, digest, salt_digest, prompt], the answer is
//   salt     = hex(HMAC-<salt_digest>(key = client_salt, msg = server_salt))
//   response = hex(HMAC-<digest>(key = password,         msg = salt))
// sent back in a second hello as "challenge_response" and "challenge_client_salt".
// HMAC comes from OpenSSL (libcrypto). Weaker digests a server might insist on (xor, des,
// hmac / hmac+md5) are refused: they would send something close to the password in the clear.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

#include "pixpath/core/result.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

// Where the password comes from. The first one set wins: `literal`, then `file` (its bytes,
// with leading/trailing CR and LF removed, as xpra's own client does), then the environment
// variable `env_var` (default XPRA_PASSWORD, as xpra's client).
struct PasswordSource {
  std::string literal;
  std::string file;
  std::string env_var = "XPRA_PASSWORD";
};

// The password, or an Error (subject "xpra", stage "load password") when none is configured
// or the file cannot be read.
[[nodiscard]] Result<std::string> load_password(const PasswordSource& source);

// What the client offers as "digest" and "salt-digest", strongest first.
inline constexpr std::array<std::string_view, 5> kSupportedDigests = {
    "hmac+sha512", "hmac+sha384", "hmac+sha256", "hmac+sha224", "hmac+sha1"};

// Lower-case hex HMAC of `message` under `key` with `digest` (one of kSupportedDigests), or
// an Error (subject "xpra", stage "authenticate", ErrorCode::Unsupported) for any other name.
[[nodiscard]] Result<std::string> hmac_hex(std::string_view digest, std::span<const uint8_t> key,
                                           std::span<const uint8_t> message);

struct ChallengeAnswer {
  std::string response;     // hex digest for "challenge_response"
  std::string client_salt;  // for "challenge_client_salt"
  std::string digest;       // the digest the server asked for (for logs)
};

// Computes the answer to a "challenge" packet (the whole packet list). `client_salt` is
// normally empty: a fresh random one is made (tests pass a fixed one).
[[nodiscard]] Result<ChallengeAnswer> answer_challenge(const Value& challenge_packet,
                                                       std::string_view password,
                                                       std::string client_salt = {});

}  // namespace pixpath::xpra
