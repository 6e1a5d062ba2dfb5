#include "pixpath/net/xpra/auth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "net/xpra/internal/sha256.h"

namespace pixpath::xpra {
namespace {

std::span<const uint8_t> sp(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Sha256, KnownVectors) {
  using internal::to_hex;
  EXPECT_EQ(to_hex(internal::sha256(sp(""))),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(internal::sha256(sp("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(internal::sha256(sp(std::string(1000, 'a')))),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  // 55 and 56 bytes straddle the one-block / two-block padding boundary.
  EXPECT_EQ(to_hex(internal::sha256(sp("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(HmacSha256, KnownVectors) {
  using internal::to_hex;
  // RFC 4231 test case 2.
  EXPECT_EQ(to_hex(internal::hmac_sha256(sp("Jefe"), sp("what do ya want for nothing?"))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // A key longer than the block size (checked with Python's hmac).
  EXPECT_EQ(to_hex(internal::hmac_sha256(sp(std::string(100, 'k')), sp("msg"))),
            "bd56a1782c2830e8abc6ed866a57a1230661e650b84c62f7ee3accc5fa5af491");
}

Value challenge(std::string digest, std::string salt_digest, std::string salt = std::string(32, 'S')) {
  return Value::list({"challenge", salt, "", digest, salt_digest, "password"});
}

TEST(Auth, AnswersLikeXpraDoes) {
  // Expected values computed with Python's hmac, as xpra's server verifies them.
  const std::string client_salt = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  auto a = answer_challenge(challenge("hmac+sha256", "hmac+sha256"), "pw", client_salt);
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->client_salt, client_salt);
  EXPECT_EQ(a->response, "1b75e93b3a4caf6970f09bad2c3365cf408f14a900a787a9e0fb684a03de76d2");
}

TEST(Auth, MakesAFreshHexClientSalt) {
  auto a = answer_challenge(challenge("hmac+sha256", "hmac+sha256"), "pw");
  auto b = answer_challenge(challenge("hmac+sha256", "hmac+sha256"), "pw");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->client_salt.size(), 64u);
  EXPECT_NE(a->client_salt, b->client_salt);
  EXPECT_NE(a->response, b->response);
}

TEST(Auth, RefusesWeakDigestsAndMalformedChallenges) {
  EXPECT_EQ(answer_challenge(challenge("xor", "hmac+sha256"), "pw").error().code(),
            ErrorCode::Unsupported);
  EXPECT_EQ(answer_challenge(challenge("hmac+sha256", "xor"), "pw").error().code(),
            ErrorCode::Unsupported);
  EXPECT_EQ(answer_challenge(challenge("hmac", "hmac+sha256"), "pw").error().code(),
            ErrorCode::Unsupported);
  EXPECT_EQ(answer_challenge(challenge("hmac+sha256", "hmac+sha256", "short"), "pw").error().code(),
            ErrorCode::Protocol);
  EXPECT_FALSE(answer_challenge(Value::list({"challenge", 5}), "pw").ok());
  EXPECT_FALSE(answer_challenge(challenge("hmac+sha256", "hmac+sha256"), "").ok());
}

TEST(Auth, LoadPasswordSources) {
  PasswordSource s;
  s.literal = "lit";
  EXPECT_EQ(*load_password(s), "lit");
  std::string path = ::testing::TempDir() + "/pixpath_pw";
  std::ofstream(path) << "\nfrom file\r\n";
  PasswordSource f;
  f.file = path;
  EXPECT_EQ(*load_password(f), "from file");
  PasswordSource missing;
  missing.file = path + ".missing";
  EXPECT_EQ(load_password(missing).error().code(), ErrorCode::Io);
  ::setenv("PIXPATH_AUTH_TEST_PW", "from env", 1);
  PasswordSource e;
  e.env_var = "PIXPATH_AUTH_TEST_PW";
  EXPECT_EQ(*load_password(e), "from env");
  PasswordSource none;
  none.env_var = "PIXPATH_AUTH_TEST_UNSET";
  EXPECT_FALSE(load_password(none).ok());
}

}  // namespace
}  // namespace pixpath::xpra
