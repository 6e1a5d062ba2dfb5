#include "pixpath/net/xpra/bencode.h"

#include <gtest/gtest.h>

#include <string>

namespace pixpath::xpra {
namespace {

SharedBytes bytes(std::string_view s) { return SharedBytes::copy_of(s); }

std::string encode_str(const Value& v) {
  auto out = bencode_encode(v);
  return std::string(out.begin(), out.end());
}

TEST(Bencode, EncodesScalarsListsDicts) {
  EXPECT_EQ(encode_str(Value(42)), "i42e");
  EXPECT_EQ(encode_str(Value(int64_t{-7})), "i-7e");
  EXPECT_EQ(encode_str(Value(true)), "i1e");
  EXPECT_EQ(encode_str(Value("spam")), "4:spam");
  EXPECT_EQ(encode_str(Value("")), "0:");
  EXPECT_EQ(encode_str(Value::list({"a", 1})), "l1:ai1ee");
  Value d{Value::Dict{}};
  d.set("b", 2);
  d.set("a", Value::list({}));
  EXPECT_EQ(encode_str(d), "d1:bi2e1:alee");
}

TEST(Bencode, RoundTripsNestedValues) {
  Value d{Value::Dict{}};
  d.set("encodings", Value::string_list({"rgb24", "png", "jpeg"}));
  d.set("min", int64_t{INT64_MIN});
  d.set("max", int64_t{INT64_MAX});
  d.set("binary", Value(SharedBytes::copy_of(std::string("\0\xff\x01e", 4))));
  Value inner{Value::Dict{}};
  inner.set("", Value::list({Value::list({}), Value(Value::Dict{})}));
  d.set("nested", inner);
  Value packet = Value::list({"hello", d});
  auto wire = bencode_encode(packet);
  auto back = bencode_decode(SharedBytes::adopt(wire));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, packet);
}

TEST(Bencode, ByteStringsAreSlicesOfTheInput) {
  SharedBytes in = bytes("l5:helloi3ee");
  auto v = bencode_decode(in);
  ASSERT_TRUE(v.ok());
  const SharedBytes& s = v->as_list()[0].as_bytes();
  EXPECT_EQ(s.view(), "hello");
  EXPECT_EQ(s.data(), in.data() + 3);  // no copy
}

TEST(Bencode, AcceptsIntegerKeysAndUnicodePrefix) {
  auto v = bencode_decode(bytes("di1e3:onei2eu3:twoe"));
  ASSERT_TRUE(v.ok()) << v.error().message();
  ASSERT_TRUE(v->is_dict());
  ASSERT_EQ(v->as_dict().size(), 2u);
  EXPECT_EQ(v->as_dict()[0].first.as_int(), 1);
  EXPECT_EQ(v->as_dict()[1].second.as_view(), "two");
  EXPECT_EQ(v->find("one"), nullptr);
}

struct Malformed {
  const char* name;
  std::string input;
  ErrorCode code;
};

class BencodeMalformed : public testing::TestWithParam<Malformed> {};

TEST_P(BencodeMalformed, IsRejectedWithAClearError) {
  auto v = bencode_decode(SharedBytes::copy_of(GetParam().input), BencodeLimits{4});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code(), GetParam().code) << v.error().message();
  EXPECT_EQ(v.error().subject(), "xpra");
  EXPECT_EQ(v.error().stage(), "bencode decode");
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, BencodeMalformed,
    testing::Values(
        Malformed{"empty", "", ErrorCode::Truncated},
        Malformed{"bad_type", "x", ErrorCode::CorruptData},
        Malformed{"int_unterminated", "i12", ErrorCode::Truncated},
        Malformed{"int_empty", "ie", ErrorCode::CorruptData},
        Malformed{"int_leading_zero", "i03e", ErrorCode::CorruptData},
        Malformed{"int_negative_zero", "i-0e", ErrorCode::CorruptData},
        Malformed{"int_junk", "i1x2e", ErrorCode::CorruptData},
        Malformed{"int_overflow", "i9223372036854775808e", ErrorCode::LimitExceeded},
        Malformed{"int_huge", "i99999999999999999999999e", ErrorCode::LimitExceeded},
        Malformed{"string_short", "5:abc", ErrorCode::Truncated},
        Malformed{"string_huge_len", "99999999999:a", ErrorCode::Truncated},
        Malformed{"string_no_colon", "3abc", ErrorCode::CorruptData},
        Malformed{"string_leading_zero", "03:abc", ErrorCode::CorruptData},
        Malformed{"string_negative", "-1:a", ErrorCode::CorruptData},
        Malformed{"list_unterminated", "li1e", ErrorCode::Truncated},
        Malformed{"dict_missing_value", "d1:ae", ErrorCode::CorruptData},
        Malformed{"dict_list_key", "dli1ee1:ae", ErrorCode::CorruptData},
        Malformed{"trailing", "i1ei2e", ErrorCode::CorruptData},
        Malformed{"too_deep", "lllllee" "eee", ErrorCode::LimitExceeded},
        Malformed{"u_without_length", "ux", ErrorCode::CorruptData}),
    [](const testing::TestParamInfo<Malformed>& p) { return std::string(p.param.name); });

TEST(Bencode, DepthLimitAllowsExactlyTheLimit) {
  EXPECT_TRUE(bencode_decode(bytes("lllleeee"), BencodeLimits{4}).ok());
  EXPECT_FALSE(bencode_decode(bytes("llllleeeee"), BencodeLimits{4}).ok());
}

// A packet of tiny values decodes into ~20x its size; the item limit stops it (found by
// review of the hostile-server suite: HostileServer.ManyTinyValuesAreCapped).
TEST(Bencode, ItemLimit) {
  EXPECT_TRUE(bencode_decode(bytes("li1ei2ei3ee"), BencodeLimits{32, 4}).ok());
  auto r = bencode_decode(bytes("li1ei2ei3ei4ee"), BencodeLimits{32, 4});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  EXPECT_NE(r.error().message().find("more than 4 values"), std::string::npos);
  EXPECT_FALSE(bencode_decode(bytes("d1:ai1e1:bi2ee"), BencodeLimits{32, 4}).ok());
}

TEST(Bencode, DeepNestingDoesNotOverflowTheStack) {
  std::string deep(100000, 'l');
  deep += std::string(100000, 'e');
  auto v = bencode_decode(SharedBytes::copy_of(deep));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code(), ErrorCode::LimitExceeded);
}

}  // namespace
}  // namespace pixpath::xpra
