#include "pixpath/core/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace pixpath {
namespace {

TEST(ResultTest, MessageNamesSubjectStageAndReason) {
  Error e(ErrorCode::Truncated, "jpeg", "decode", "data ends at byte 1200 of 5000 (truncated)");
  EXPECT_EQ(e.message(), "jpeg decode: data ends at byte 1200 of 5000 (truncated)");
  EXPECT_TRUE(e.fatal());
  EXPECT_EQ(e.severity(), Severity::Fatal);
  EXPECT_EQ(e.as_warning().message(),
            "jpeg decode: data ends at byte 1200 of 5000 (truncated) (warning)");
  EXPECT_FALSE(e.as_warning().fatal());
  EXPECT_EQ(e.as_warning().code(), ErrorCode::Truncated);
}

TEST(ResultTest, WithinKeepsCodeAndReasonAndPrefixesTheInnerContext) {
  Error inner(ErrorCode::ReadOnly, "picture", "write", "RGBA 4x4 is read-only");
  Error outer = inner.within("jpeg", "decode");
  EXPECT_EQ(outer.code(), ErrorCode::ReadOnly);
  EXPECT_EQ(outer.subject(), "jpeg");
  EXPECT_EQ(outer.stage(), "decode");
  EXPECT_EQ(outer.message(), "jpeg decode: picture write: RGBA 4x4 is read-only");
  EXPECT_EQ(outer.severity(), inner.severity());
}

TEST(ResultTest, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::Internal); ++c) {
    EXPECT_NE(to_string(static_cast<ErrorCode>(c)), "unknown") << c;
  }
}

Result<int> half(int v) {
  if (v % 2) return Error(ErrorCode::InvalidArgument, "test", "half", std::to_string(v) + " is odd");
  return v / 2;
}
Result<int> quarter(int v) {
  PIXPATH_TRY(int h, half(v));
  PIXPATH_TRY(int q, half(h));
  return q;
}
Result<void> check_even(int v) {
  PIXPATH_CHECK(half(v).ok() ? Result<void>() : Result<void>(half(v).error()));
  return ok();
}

TEST(ResultTest, ValuesErrorsAndPropagation) {
  auto r = quarter(12);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 3);
  auto bad = quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(bad.error().message(), "test half: 3 is odd");
  EXPECT_TRUE(check_even(4).ok());
  EXPECT_EQ(check_even(5).error().reason(), "5 is odd");
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultDeathTest, ReadingTheValueOfAFailedResultAborts) {
  EXPECT_DEATH(
      {
        Result<int> r = Error(ErrorCode::Internal, "t", "s", "r");
        (void)r.value();
      },
      "");
  EXPECT_DEATH({ (void)Result<void>().error(); }, "");
}

}  // namespace
}  // namespace pixpath
