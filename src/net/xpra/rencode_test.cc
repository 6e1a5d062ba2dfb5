#include "pixpath/net/xpra/rencode.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

namespace pixpath::xpra {
namespace {

using Bytes = std::vector<uint8_t>;

SharedBytes shared(const Bytes& b) { return SharedBytes::copy_of(b); }

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

Value decoded(const Bytes& b) {
  auto v = rencode_decode(shared(b));
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message());
  return v.ok() ? *v : Value::none();
}

Error decode_error(const Bytes& b, RencodeLimits limits = {}) {
  auto v = rencode_decode(shared(b), limits);
  EXPECT_FALSE(v.ok()) << "decoded " << (v.ok() ? v->debug_string() : "");
  return v.ok() ? Error(ErrorCode::Internal, "", "", "") : v.error();
}

// Encodes `v`, expects exactly `wire`, and decodes `wire` back into a value identical to `v`.
void expect_wire(const Value& v, const Bytes& wire) {
  EXPECT_EQ(rencode_encode(v), wire) << v.debug_string();
  Value back = decoded(wire);
  EXPECT_TRUE(identical(back, v)) << back.debug_string() << " vs " << v.debug_string();
}

TEST(Rencode, SmallIntegersUseTheFixedCodes) {
  expect_wire(0, {0});
  expect_wire(1, {1});
  expect_wire(43, {43});
  expect_wire(-1, {70});
  expect_wire(-2, {71});
  expect_wire(-32, {101});
}

TEST(Rencode, LargerIntegersUseTheShortestSizedForm) {
  expect_wire(44, {62, 44});
  expect_wire(-33, {62, 0xdf});
  expect_wire(127, {62, 0x7f});
  expect_wire(-128, {62, 0x80});
  expect_wire(128, {63, 0x00, 0x80});
  expect_wire(-129, {63, 0xff, 0x7f});
  expect_wire(32767, {63, 0x7f, 0xff});
  expect_wire(-32768, {63, 0x80, 0x00});
  expect_wire(32768, {64, 0x00, 0x00, 0x80, 0x00});
  expect_wire(-32769, {64, 0xff, 0xff, 0x7f, 0xff});
  expect_wire(int64_t{2147483647}, {64, 0x7f, 0xff, 0xff, 0xff});
  expect_wire(int64_t{-2147483648}, {64, 0x80, 0x00, 0x00, 0x00});
  expect_wire(int64_t{2147483648}, {65, 0, 0, 0, 0, 0x80, 0, 0, 0});
  expect_wire(int64_t{-2147483649}, {65, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff});
  expect_wire(std::numeric_limits<int64_t>::max(),
              {65, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  expect_wire(std::numeric_limits<int64_t>::min(), {65, 0x80, 0, 0, 0, 0, 0, 0, 0});
  expect_wire(int64_t{0x0102030405060708}, {65, 1, 2, 3, 4, 5, 6, 7, 8});
}

TEST(Rencode, SizedFormsDecodeWhateverTheirValue) {
  // A peer may use a longer form than needed; the value is what counts.
  EXPECT_TRUE(identical(decoded({62, 5}), Value(5)));
  EXPECT_TRUE(identical(decoded({63, 0, 5}), Value(5)));
  EXPECT_TRUE(identical(decoded({64, 0xff, 0xff, 0xff, 0xfb}), Value(-5)));
  EXPECT_TRUE(identical(decoded({65, 0, 0, 0, 0, 0, 0, 0, 0}), Value(0)));
}

TEST(Rencode, TextIntegers) {
  // Within int64: an Int, whatever the length of the text.
  EXPECT_TRUE(identical(decoded(cat({{61}, text("9223372036854775807"), {127}})),
                        Value(std::numeric_limits<int64_t>::max())));
  EXPECT_TRUE(identical(decoded(cat({{61}, text("-9223372036854775808"), {127}})),
                        Value(std::numeric_limits<int64_t>::min())));
  EXPECT_TRUE(identical(decoded(cat({{61}, text("0000000000000000000042"), {127}})), Value(42)));
  EXPECT_TRUE(identical(decoded(cat({{61}, text("-7"), {127}})), Value(-7)));
  // Beyond: a BigInt that keeps its digits and is written back in the same form.
  Bytes u64max = cat({{61}, text("18446744073709551615"), {127}});
  Value big = decoded(u64max);
  ASSERT_TRUE(big.is_big_int());
  EXPECT_FALSE(big.is_int());
  EXPECT_EQ(big.as_big_int_text(), "18446744073709551615");
  EXPECT_EQ(rencode_encode(big), u64max);
  Bytes neg = cat({{61}, text("-9223372036854775809"), {127}});
  EXPECT_EQ(rencode_encode(decoded(neg)), neg);
  // 63 characters is the longest xpra accepts.
  Bytes longest = cat({{61}, text(std::string(63, '9')), {127}});
  EXPECT_EQ(decoded(longest).as_big_int_text(), std::string(63, '9'));
}

TEST(Rencode, BadTextIntegers) {
  EXPECT_EQ(decode_error(cat({{61}, text(std::string(64, '9')), {127}})).code(),
            ErrorCode::CorruptData);
  EXPECT_EQ(decode_error({61, 127}).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error(cat({{61}, text("-"), {127}})).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error(cat({{61}, text("12x4"), {127}})).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error(cat({{61}, text("1-2"), {127}})).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error(cat({{61}, text("123")})).code(), ErrorCode::Truncated);
}

TEST(Rencode, BooleansAndNone) {
  expect_wire(true, {67});
  expect_wire(false, {68});
  expect_wire(Value::none(), {69});
  Value t = decoded({67});
  EXPECT_TRUE(t.is_bool());
  EXPECT_TRUE(t.is_int());  // readers of ints accept booleans
  EXPECT_EQ(t.as_int(), 1);
  EXPECT_EQ(decoded({68}).as_int(), 0);
  EXPECT_TRUE(decoded({69}).is_none());
}

TEST(Rencode, Floats) {
  expect_wire(Value::from_double(1.5), {44, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0});
  expect_wire(Value::from_double(-2.0), {44, 0xc0, 0, 0, 0, 0, 0, 0, 0});
  expect_wire(Value::from_double(0.1), {44, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a});
  // float32 decodes to the same double; it is written back as float64.
  Value f = decoded({66, 0x3f, 0xc0, 0, 0});
  ASSERT_TRUE(f.is_float());
  EXPECT_EQ(f.as_double(), 1.5);
  EXPECT_EQ(decoded({66, 0xc2, 0x28, 0, 0}).as_double(), -42.0);
  Value inf = decoded({66, 0x7f, 0x80, 0, 0});
  EXPECT_TRUE(std::isinf(inf.as_double()));
  Value nan = decoded({44, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(std::isnan(nan.as_double()));
  EXPECT_TRUE(identical(nan, nan));
  EXPECT_EQ(rencode_encode(nan), Bytes({44, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}));
}

TEST(Rencode, StringsShorterThan64BytesUseTheFixedForm) {
  expect_wire("", {128});
  expect_wire("abc", {131, 'a', 'b', 'c'});
  std::string s63(63, 'x');
  expect_wire(s63, cat({{191}, text(s63)}));
  // UTF-8: the length counts bytes.
  expect_wire("\xc3\xa9t\xc3\xa9", {133, 0xc3, 0xa9, 't', 0xc3, 0xa9});
  Value v = decoded({131, 'a', 'b', 'c'});
  EXPECT_TRUE(v.is_string());
  EXPECT_TRUE(v.is_bytes());  // readers of byte strings accept strings
  EXPECT_EQ(v.as_view(), "abc");
}

TEST(Rencode, LongerStringsAndAllBytesAreLengthPrefixed) {
  std::string s64(64, 'y');
  expect_wire(s64, cat({text("64:"), text(s64)}));
  std::string s1000(1000, 'z');
  expect_wire(s1000, cat({text("1000:"), text(s1000)}));
  // Bytes are always "N/", even short and empty ones.
  expect_wire(Value(SharedBytes::copy_of(std::string_view("abc"))), text("3/abc"));
  expect_wire(Value(SharedBytes{}), text("0/"));
  Bytes bin = {0, 1, 2, 0xff, 0xfe};
  expect_wire(Value(SharedBytes::copy_of(bin)), cat({text("5/"), bin}));
  // A short string may also come length-prefixed, and lengths may have leading zeros.
  EXPECT_TRUE(identical(decoded(text("3:abc")), Value("abc")));
  EXPECT_TRUE(identical(decoded(text("003/abc")), Value(SharedBytes::copy_of(std::string_view("abc")))));
  EXPECT_TRUE(identical(decoded(text("0:")), Value("")));
}

TEST(Rencode, ByteStringsAreSlicesOfTheInput) {
  Bytes wire = cat({{194}, text("4/pixe"), {131}, text("abc")});
  SharedBytes in = shared(wire);
  auto v = rencode_decode(in);
  ASSERT_TRUE(v.ok());
  const auto& items = v->as_list();
  EXPECT_EQ(items[0].as_bytes().data(), in.data() + 3);
  EXPECT_EQ(items[1].as_bytes().data(), in.data() + 8);
}

TEST(Rencode, InvalidUtf8IsRefusedInStringsOnly) {
  auto e = decode_error({130, 0xc3, 0x28});
  EXPECT_EQ(e.code(), ErrorCode::CorruptData);
  EXPECT_NE(e.reason().find("at byte 1"), std::string::npos) << e.message();
  EXPECT_EQ(decode_error({130, 0xc0, 0x80}).code(), ErrorCode::CorruptData);        // overlong
  EXPECT_EQ(decode_error({131, 0xed, 0xa0, 0x80}).code(), ErrorCode::CorruptData);  // surrogate
  EXPECT_EQ(decode_error({132, 0xf4, 0x90, 0x80, 0x80}).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error({129, 0xe2}).code(), ErrorCode::CorruptData);  // cut sequence
  EXPECT_EQ(decode_error(cat({text("2:"), {0xff, 0xfe}})).code(), ErrorCode::CorruptData);
  // The same bytes as a byte string are fine; 4-byte sequences are valid UTF-8.
  EXPECT_TRUE(decoded(cat({text("2/"), {0xff, 0xfe}})).is_bytes());
  EXPECT_TRUE(decoded({132, 0xf0, 0x9f, 0x98, 0x80}).is_string());
}

TEST(Rencode, Lists) {
  expect_wire(Value(Value::List{}), {192});
  expect_wire(Value::list({1, "a", true}), {195, 1, 129, 'a', 67});
  Value::List l63(63, Value(7));
  Bytes w63 = {255};
  w63.insert(w63.end(), 63, 7);
  expect_wire(Value(l63), w63);
  Value::List l64(64, Value(7));
  Bytes w64 = {59};
  w64.insert(w64.end(), 64, 7);
  w64.push_back(127);
  expect_wire(Value(l64), w64);
  // The terminated form may carry any count, including a short one.
  EXPECT_TRUE(identical(decoded({59, 1, 2, 127}), Value::list({1, 2})));
  EXPECT_TRUE(identical(decoded({59, 127}), Value(Value::List{})));
  // Nested.
  expect_wire(Value::list({Value::list({}), Value::list({Value::list({5})})}),
              {194, 192, 193, 193, 5});
}

TEST(Rencode, Dicts) {
  expect_wire(Value(Value::Dict{}), {102});
  Value d{Value::Dict{}};
  d.set("a", 1);
  d.set("wid", Value::list({}));
  expect_wire(d, {104, 129, 'a', 1, 131, 'w', 'i', 'd', 192});
  Value d24{Value::Dict{}};
  Bytes w24 = {126};
  for (int i = 0; i < 24; ++i) {
    d24.as_dict().emplace_back(i, i);
    w24.push_back(uint8_t(i));
    w24.push_back(uint8_t(i));
  }
  expect_wire(d24, w24);
  Value d25 = d24;
  d25.as_dict().emplace_back(24, 24);
  Bytes w25 = w24;
  w25[0] = 60;
  w25.push_back(24);
  w25.push_back(24);
  w25.push_back(127);
  expect_wire(d25, w25);
  EXPECT_TRUE(identical(decoded({60, 127}), Value(Value::Dict{})));
  // Keys of other scalar kinds, and lookup of String and Bytes keys by name.
  Value mixed = decoded(cat({{106, 69, 1, 67, 2, 131}, text("key"), {3}, text("3/raw"), {4}}));
  ASSERT_TRUE(mixed.is_dict());
  EXPECT_EQ(mixed.as_dict().size(), 4u);
  ASSERT_NE(mixed.find("key"), nullptr);
  EXPECT_EQ(mixed.find("key")->as_int(), 3);
  ASSERT_NE(mixed.find("raw"), nullptr);
  EXPECT_EQ(mixed.find("raw")->as_int(), 4);
}

TEST(Rencode, ListsAndDictsAreNotDictKeys) {
  EXPECT_EQ(decode_error({103, 192, 1}).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error({103, 102, 1}).code(), ErrorCode::CorruptData);
  EXPECT_EQ(decode_error({60, 59, 127, 1, 127}).code(), ErrorCode::CorruptData);
}

TEST(Rencode, AHelloLikePacketRoundTrips) {
  Value caps{Value::Dict{}};
  caps.set("version", "6.5.5");
  caps.set("encodings", Value::string_list({"rgb24", "png", "jpeg", "webp"}));
  caps.set("share", false);
  caps.set("steal", true);
  caps.set("desktop_size", Value::list({1920, 1080}));
  caps.set("uuid", std::string(32, 'f'));
  caps.set("latency", Value::from_double(0.25));
  caps.set("nothing", Value::none());
  caps.set("wid", int64_t{1} << 40);
  caps.set("pixels", Value(SharedBytes::copy_of(Bytes(5000, 0xab))));
  Value packet = Value::list({"hello", caps});
  Bytes wire = rencode_encode(packet);
  auto back = rencode_decode(shared(wire));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(identical(*back, packet)) << back->debug_string();
}

TEST(Rencode, EveryTruncationIsRefused) {
  Value caps{Value::Dict{}};
  caps.set("a", Value::list({1, -1, 300, -70000, int64_t{1} << 40, true, false}));
  caps.set("f", Value::from_double(3.25));
  caps.set("s", std::string(70, 's'));
  caps.set("b", Value(SharedBytes::copy_of(Bytes(10, 1))));
  caps.set("n", Value::none());
  Value::List many(70, Value("x"));
  Value packet = Value::list({"draw", caps, Value(many)});
  Bytes wire = rencode_encode(packet);
  Bytes with_text_int = cat({{194}, wire, {61}, text("99999999999999999999"), {127}});
  ASSERT_TRUE(rencode_decode(shared(with_text_int)).ok());
  for (const Bytes* w : {&wire, &with_text_int}) {
    for (size_t n = 0; n < w->size(); ++n) {
      Bytes prefix(w->begin(), w->begin() + ptrdiff_t(n));
      auto v = rencode_decode(shared(prefix));
      ASSERT_FALSE(v.ok()) << "prefix of " << n << " bytes decoded";
      EXPECT_EQ(v.error().code(), ErrorCode::Truncated) << v.error().message();
      EXPECT_EQ(v.error().subject(), "xpra");
      EXPECT_EQ(v.error().stage(), "rencode decode");
      EXPECT_NE(v.error().reason().find("at byte "), std::string::npos);
    }
  }
}

TEST(Rencode, TypeCodesNoValueStartsWith) {
  for (uint8_t c : {45, 46, 47, 58, 127}) {
    auto e = decode_error({c});
    EXPECT_EQ(e.code(), ErrorCode::CorruptData) << int(c);
    EXPECT_NE(e.reason().find("invalid type code"), std::string::npos) << e.message();
  }
  // A terminator where a dict value belongs.
  EXPECT_EQ(decode_error({60, 1, 127}).code(), ErrorCode::CorruptData);
  // Trailing bytes.
  auto e = decode_error({1, 2});
  EXPECT_EQ(e.code(), ErrorCode::CorruptData);
  EXPECT_NE(e.reason().find("at byte 1"), std::string::npos);
  // Every byte as a whole input either decodes or fails cleanly.
  for (int c = 0; c < 256; ++c) {
    auto v = rencode_decode(shared({uint8_t(c)}));
    if (!v.ok()) {
      EXPECT_NE(v.error().code(), ErrorCode::Internal);
    }
  }
}

TEST(Rencode, HugeLengthsFailBeforeAllocating) {
  auto e = decode_error(text("4294967296/abc"));
  EXPECT_EQ(e.code(), ErrorCode::Truncated);
  EXPECT_NE(e.reason().find("4294967296"), std::string::npos) << e.message();
  EXPECT_EQ(decode_error(text("18446744073709551615:x")).code(), ErrorCode::Truncated);
  EXPECT_EQ(decode_error(text("99999999999999999999999:x")).code(), ErrorCode::LimitExceeded);
  EXPECT_EQ(decode_error(text("12")).code(), ErrorCode::Truncated);
  EXPECT_EQ(decode_error(text("12x")).code(), ErrorCode::CorruptData);
  // A fixed list that claims 63 items with none present.
  EXPECT_EQ(decode_error({255}).code(), ErrorCode::Truncated);
  EXPECT_EQ(decode_error({126}).code(), ErrorCode::Truncated);
}

TEST(Rencode, DepthLimit) {
  RencodeLimits limits;
  limits.max_depth = 8;
  Bytes ok(8, 193);  // 8 nested one-item lists around a 0
  ok.push_back(0);
  EXPECT_TRUE(rencode_decode(shared(ok), limits).ok());
  Bytes deep(9, 193);
  deep.push_back(0);
  auto e = decode_error(deep, limits);
  EXPECT_EQ(e.code(), ErrorCode::LimitExceeded);
  EXPECT_NE(e.reason().find("nesting"), std::string::npos);
  // Terminated lists and dicts count too; a million levels fail fast at the default limit.
  Bytes million(1'000'000, 59);
  EXPECT_EQ(decode_error(million).code(), ErrorCode::LimitExceeded);
  Bytes dicts;
  for (int i = 0; i < 100; ++i) dicts.insert(dicts.end(), {103, 129, 'k'});
  dicts.push_back(0);
  EXPECT_EQ(decode_error(dicts).code(), ErrorCode::LimitExceeded);
}

TEST(Rencode, ItemLimit) {
  RencodeLimits limits;
  limits.max_items = 100;
  Bytes list = {59};
  list.insert(list.end(), 99, 1);
  list.push_back(127);
  EXPECT_TRUE(rencode_decode(shared(list), limits).ok());  // the list and its 99 items
  list.insert(list.end() - 1, 1);
  auto e = decode_error(list, limits);
  EXPECT_EQ(e.code(), ErrorCode::LimitExceeded);
  EXPECT_NE(e.reason().find("more than 100 values"), std::string::npos) << e.message();
  // The default limit stops a 1-byte-per-item flood: 2^18 + 1 values.
  Bytes flood = {59};
  flood.insert(flood.end(), size_t{1} << 18, 0);
  flood.push_back(127);
  EXPECT_EQ(decode_error(flood).code(), ErrorCode::LimitExceeded);
}

TEST(Rencode, LenientAndStrictEquality) {
  EXPECT_EQ(Value(true), Value(1));
  EXPECT_FALSE(identical(Value(true), Value(1)));
  EXPECT_EQ(Value("ab"), Value(SharedBytes::copy_of(std::string_view("ab"))));
  EXPECT_FALSE(identical(Value("ab"), Value(SharedBytes::copy_of(std::string_view("ab")))));
  EXPECT_NE(Value::none(), Value(0));
  EXPECT_NE(Value::from_double(1.0), Value(1));
  EXPECT_EQ(Value::from_double(0.0), Value::from_double(-0.0));
  EXPECT_FALSE(identical(Value::from_double(0.0), Value::from_double(-0.0)));
}

// Cross-check against xpra 6.x's own compiled rencodeplus, where one is installed: a Python with
// `xpra.net.rencodeplus` importable (PIXPATH_XPRA6_PYTHON, else the xpra 6 prefix's python).
std::string xpra6_python() {
  if (const char* p = std::getenv("PIXPATH_XPRA6_PYTHON")) return p;
  const char* prefix = std::getenv("PIXPATH_XPRA6_PREFIX");
  std::filesystem::path py = std::filesystem::path(prefix ? prefix : "/opt/pixpath-xpra6") /
                             "bin" / "python3";
  return std::filesystem::exists(py) ? py.string() : "";
}

TEST(Rencode, MatchesXpra6Rencodeplus) {
  std::string python = xpra6_python();
  const bool asked = std::getenv("PIXPATH_XPRA6_PYTHON") != nullptr;
  if (python.empty()) {
    GTEST_SKIP() << "no xpra 6 Python (set PIXPATH_XPRA6_PYTHON or install xpra 6 into "
                    "/opt/pixpath-xpra6): cross-check against rencodeplus not run";
  }
  std::string probe = fmt::format(
      "'{}' -c 'import xpra.net.rencodeplus.rencodeplus' >/dev/null 2>&1", python);
  if (std::system(probe.c_str()) != 0) {
    if (asked) FAIL() << python << " (PIXPATH_XPRA6_PYTHON) cannot import rencodeplus";
    GTEST_SKIP() << python << " cannot import xpra.net.rencodeplus (xpra 6 not installed "
                 << "there yet): cross-check against rencodeplus not run";
  }
  auto tmp = std::filesystem::temp_directory_path() /
             fmt::format("pixpath-rencode-{}", ::getpid());
  std::filesystem::create_directories(tmp);
  struct RemoveAll {
    std::filesystem::path p;
    ~RemoveAll() { std::filesystem::remove_all(p); }
  } cleanup{tmp};
  // One value of every kind, as Python and as pixpath build it.
  const char* py_value =
      "['hello', {'version': '6.5.5', 'n': [0, 43, 44, -1, -32, -33, 127, -128, 128, -32768, "
      "32767, 32768, 2**31-1, -2**31, 2**31, 2**63-1, -2**63], 'big': 2**64-1, "
      "'t': True, 'f': False, 'none': None, 'x': 1.5, 's': 's'*70, 'u': '\\u00e9t\\u00e9', "
      "'b': b'\\x00\\x01raw', 'l': list(range(70)), 'd': {i: i for i in range(30)}, "
      "'e': [], 'ed': {}}]";
  Value caps{Value::Dict{}};
  caps.set("version", "6.5.5");
  Value::List ints;
  for (int64_t i : {int64_t{0}, int64_t{43}, int64_t{44}, int64_t{-1}, int64_t{-32},
                    int64_t{-33}, int64_t{127}, int64_t{-128}, int64_t{128}, int64_t{-32768},
                    int64_t{32767}, int64_t{32768}, int64_t{2147483647}, int64_t{-2147483648LL},
                    int64_t{2147483648LL}, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    ints.emplace_back(i);
  }
  caps.set("n", Value(ints));
  caps.set("big", Value::big_int(SharedBytes::copy_of(std::string_view("18446744073709551615"))));
  caps.set("t", true);
  caps.set("f", false);
  caps.set("none", Value::none());
  caps.set("x", Value::from_double(1.5));
  caps.set("s", std::string(70, 's'));
  caps.set("u", "\xc3\xa9t\xc3\xa9");
  caps.set("b", Value(SharedBytes::copy_of(std::string_view("\x00\x01raw", 5))));
  Value::List l;
  for (int i = 0; i < 70; ++i) l.emplace_back(i);
  caps.set("l", Value(l));
  Value::Dict d;
  for (int i = 0; i < 30; ++i) d.emplace_back(i, i);
  caps.set("d", Value(d));
  caps.set("e", Value(Value::List{}));
  caps.set("ed", Value(Value::Dict{}));
  Value packet = Value::list({"hello", caps});
  Bytes ours = rencode_encode(packet);
  {
    std::ofstream f(tmp / "ours.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(ours.data()), std::streamsize(ours.size()));
  }
  std::string script = fmt::format(
      "import sys\n"
      "from xpra.net.rencodeplus.rencodeplus import dumps, loads\n"
      "expected = {0}\n"
      "ours = open(sys.argv[1], 'rb').read()\n"
      "theirs = dumps(expected)\n"
      "open(sys.argv[2], 'wb').write(theirs)\n"
      "got = loads(ours)\n"
      "def norm(v):\n"
      "    if isinstance(v, (list, tuple)): return [norm(x) for x in v]\n"
      "    if isinstance(v, dict): return {{k: norm(x) for k, x in v.items()}}\n"
      "    return (type(v).__name__, v)\n"
      "if norm(got) != norm(expected):\n"
      "    print('rencodeplus decodes pixpath bytes as', got); sys.exit(3)\n",
      py_value);
  {
    std::ofstream f(tmp / "check.py");
    f << script;
  }
  std::string cmd = fmt::format("'{}' '{}' '{}' '{}' 2>&1", python, (tmp / "check.py").string(),
                                (tmp / "ours.bin").string(), (tmp / "theirs.bin").string());
  int rc = std::system(cmd.c_str());
  ASSERT_EQ(rc, 0) << "xpra's rencodeplus disagrees with pixpath's encoding (" << cmd << ")";
  std::ifstream f(tmp / "theirs.bin", std::ios::binary);
  Bytes theirs((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Same bytes both ways, and pixpath decodes xpra's encoding into the same value.
  EXPECT_EQ(theirs, ours);
  auto back = rencode_decode(shared(theirs));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(identical(*back, packet)) << back->debug_string();
}

}  // namespace
}  // namespace pixpath::xpra
