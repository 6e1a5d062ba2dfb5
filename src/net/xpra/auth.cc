#include "pixpath/net/xpra/auth.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace pixpath::xpra {
namespace {

std::span<const uint8_t> as_span(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

Error auth_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "authenticate", std::move(reason));
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

// The OpenSSL digest for one of kSupportedDigests, or null.
const EVP_MD* hmac_md(std::string_view digest) {
  if (digest == "hmac+sha512") return EVP_sha512();
  if (digest == "hmac+sha384") return EVP_sha384();
  if (digest == "hmac+sha256") return EVP_sha256();
  if (digest == "hmac+sha224") return EVP_sha224();
  if (digest == "hmac+sha1") return EVP_sha1();
  return nullptr;
}

std::string supported_list() {
  return fmt::format("{}", fmt::join(kSupportedDigests, ", "));
}

}  // namespace

Result<std::string> hmac_hex(std::string_view digest, std::span<const uint8_t> key,
                             std::span<const uint8_t> message) {
  const EVP_MD* md = hmac_md(digest);
  if (!md) {
    return auth_error(ErrorCode::Unsupported,
                      fmt::format("digest '{}' is not one of {}", digest, supported_list()));
  }
  std::array<uint8_t, EVP_MAX_MD_SIZE> out{};
  unsigned int out_len = 0;
  // HMAC() accepts a null key pointer only with length 0; keep it non-null regardless.
  static const uint8_t kEmpty = 0;
  if (!HMAC(md, key.empty() ? &kEmpty : key.data(), int(key.size()), message.data(),
            message.size(), out.data(), &out_len)) {
    return auth_error(ErrorCode::Internal, fmt::format("OpenSSL HMAC ({}) failed", digest));
  }
  return to_hex(std::span<const uint8_t>(out.data(), out_len));
}

Result<std::string> load_password(const PasswordSource& source) {
  if (!source.literal.empty()) return source.literal;
  if (!source.file.empty()) {
    std::ifstream in(source.file, std::ios::binary);
    if (!in) {
      return Error(ErrorCode::Io, "xpra", "load password",
                   fmt::format("cannot read password file '{}': {}", source.file,
                               std::strerror(errno)));
    }
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t b = data.find_first_not_of("\r\n");
    size_t e = data.find_last_not_of("\r\n");
    if (b == std::string::npos) {
      return Error(ErrorCode::InvalidArgument, "xpra", "load password",
                   fmt::format("password file '{}' is empty", source.file));
    }
    return data.substr(b, e - b + 1);
  }
  if (!source.env_var.empty()) {
    if (const char* v = std::getenv(source.env_var.c_str()); v && *v) return std::string(v);
  }
  return Error(ErrorCode::InvalidArgument, "xpra", "load password",
               fmt::format("the server requires a password and none is configured (no literal, "
                           "no file, ${} unset)",
                           source.env_var));
}

Result<ChallengeAnswer> answer_challenge(const Value& packet, std::string_view password,
                                         std::string client_salt) {
  FieldReader r("challenge", packet);
  PIXPATH_TRY(SharedBytes server_salt, r.bytes_at(1, "server_salt"));
  PIXPATH_TRY(std::string digest, r.string_at(3, "digest"));
  std::string salt_digest = "xor";  // what a 3.1 server assumes when the field is absent
  if (r.size() > 4) {
    PIXPATH_TRY(std::string sd, r.string_at(4, "salt_digest"));
    salt_digest = sd;
  }
  if (r.size() > 2) {
    PIXPATH_TRY(const Value* caps, r.at(2, "cipher_caps"));
    if (caps->is_dict() && !caps->as_dict().empty()) {
      return auth_error(ErrorCode::Unsupported, "the server wants an encrypted connection");
    }
  }
  std::string actual_digest = digest.substr(0, digest.find(':'));
  if (!hmac_md(actual_digest)) {
    return auth_error(ErrorCode::Unsupported,
                      fmt::format("server asks for digest '{}'; pixpath only answers {}", digest,
                                  supported_list()));
  }
  if (!hmac_md(salt_digest)) {
    return auth_error(ErrorCode::Unsupported,
                      fmt::format("server asks for salt digest '{}'; pixpath only answers {}",
                                  salt_digest, supported_list()));
  }
  if (server_salt.size() < 16) {
    return auth_error(ErrorCode::Protocol,
                      fmt::format("server salt is only {} bytes", server_salt.size()));
  }
  if (password.empty()) return auth_error(ErrorCode::InvalidArgument, "empty password");
  if (client_salt.empty()) {
    std::array<uint8_t, 32> random{};
    if (getrandom(random.data(), random.size(), 0) != ssize_t(random.size())) {
      return auth_error(ErrorCode::Internal, "getrandom failed");
    }
    // Hex text keeps the salt intact through the server's str/bytes conversions.
    client_salt = to_hex(random);
  }
  PIXPATH_TRY(std::string salt, hmac_hex(salt_digest, as_span(client_salt), server_salt.span()));
  PIXPATH_TRY(std::string response, hmac_hex(actual_digest, as_span(password), as_span(salt)));
  return ChallengeAnswer{std::move(response), std::move(client_salt), std::move(actual_digest)};
}

}  // namespace pixpath::xpra
