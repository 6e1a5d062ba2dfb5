#include "pixpath/net/xpra/auth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>


namespace pixpath::xpra {
namespace {

std::span<const uint8_t> sp(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string hmac(std::string_view digest, std::string_view key, std::string_view msg) {
  auto r = hmac_hex(digest, sp(key), sp(msg));
  EXPECT_TRUE(r.ok()) << r.error().message();
  return r.ok() ? *r : std::string();
}

std::string bytes(size_t n, char c) { return std::string(n, c); }

// RFC 4231 test cases 1-4, 6 and 7 (5 truncates the output), for every SHA-2 digest offered.
TEST(Hmac, Rfc4231Vectors) {
  struct Case {
    std::string key, data;
    const char *sha224, *sha256, *sha384, *sha512;
  };
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(char(i));
  const Case cases[] = {
      {bytes(20, '\x0b'), "Hi There",
       "896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
       "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6",
       "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
      {"Jefe", "what do ya want for nothing?",
       "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
       "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649",
       "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
      {bytes(20, '\xaa'), bytes(50, '\xdd'),
       "7fb3cb3588c6c1f6ffa9694d7d6ad2649365b0c1f65d69d1ec8333ea",
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
       "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27",
       "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"},
      {key4, bytes(50, '\xcd'),
       "6c11506874013cac6a2abc1bb382627cec6a90d86efc012de7afec5a",
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
       "3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e6801dd23c4a7d679ccf8a386c674cffb",
       "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"},
      // A key longer than every block size.
      {bytes(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "95e9a0db962095adaebe9b2d6f0dbce2d499f112f2d2b7273fa6870e",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
       "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952",
       "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"},
      {bytes(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than block-size data. The "
       "key needs to be hashed before being used by the HMAC algorithm.",
       "3a854166ac5d9f023f54d517d0b39dbd946770db9c2b95c9f6f565d1",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
       "6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5a678cc31e799176d3860e6110c46523e",
       "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(hmac("hmac+sha224", c.key, c.data), c.sha224) << c.data;
    EXPECT_EQ(hmac("hmac+sha256", c.key, c.data), c.sha256) << c.data;
    EXPECT_EQ(hmac("hmac+sha384", c.key, c.data), c.sha384) << c.data;
    EXPECT_EQ(hmac("hmac+sha512", c.key, c.data), c.sha512) << c.data;
  }
}

TEST(Hmac, Sha1AndUnknownDigests) {
  // RFC 2202 test case 2.
  EXPECT_EQ(hmac("hmac+sha1", "Jefe", "what do ya want for nothing?"),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  // A key longer than the block size (checked with Python's hmac).
  EXPECT_EQ(hmac("hmac+sha256", std::string(100, 'k'), "msg"),
            "bd56a1782c2830e8abc6ed866a57a1230661e650b84c62f7ee3accc5fa5af491");
  for (std::string_view d : {"hmac", "hmac+md5", "xor", "des", "sha256", ""}) {
    auto r = hmac_hex(d, sp("k"), sp("m"));
    ASSERT_FALSE(r.ok()) << d;
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported) << d;
  }
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
  EXPECT_EQ(a->digest, "hmac+sha256");
}

TEST(Auth, AnswersEveryOfferedDigest) {
  // The answer is HMAC(password, hex(HMAC(client_salt, server_salt))) with the server's pick
  // for each step; a server salt of 32 'S' as in AnswersLikeXpraDoes.
  const std::string client_salt(64, 'c');
  const std::string server_salt(32, 'S');
  for (std::string_view d : kSupportedDigests) {
    for (std::string_view sd : {"hmac+sha256", "hmac+sha1", "hmac+sha512"}) {
      auto a = answer_challenge(challenge(std::string(d), std::string(sd)), "pw", client_salt);
      ASSERT_TRUE(a.ok()) << d << " " << sd << ": " << a.error().message();
      EXPECT_EQ(a->digest, d);
      const std::string salt = hmac(sd, client_salt, server_salt);
      EXPECT_EQ(a->response, hmac(d, "pw", salt)) << d << " " << sd;
    }
  }
  // Like xpra's client, anything after ':' in the digest name ("type:value") is ignored.
  auto a = answer_challenge(challenge("hmac+sha512:value", "hmac+sha512"), "pw", client_salt);
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->digest, "hmac+sha512");
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
  EXPECT_EQ(answer_challenge(challenge("hmac+md5", "hmac+sha256"), "pw").error().code(),
            ErrorCode::Unsupported);
  EXPECT_EQ(answer_challenge(challenge("hmac+sha256", "hmac+md5"), "pw").error().code(),
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
