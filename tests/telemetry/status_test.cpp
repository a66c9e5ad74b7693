#include "telemetry/status.hpp"

#include <gtest/gtest.h>

namespace npukit {
namespace {

Result<int> half_of(int x) {
  if (x % 2 != 0) return InvalidArgument("odd value " + std::to_string(x));
  return x / 2;
}

Status chain(int x) {
  NPUKIT_RETURN_IF_ERROR(half_of(x).status());
  return Status::Ok();
}

TEST(Status, OkCarriesNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
}

TEST(Result, HoldsValueOrError) {
  auto good = half_of(8);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 4);
  auto bad = half_of(7);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "odd value 7");
}

TEST(Status, ReturnIfErrorPropagates) {
  EXPECT_TRUE(chain(4).ok());
  EXPECT_EQ(chain(5).message(), "odd value 5");
  EXPECT_STREQ(code_name(chain(5).code()), "InvalidArgument");
}

}  // namespace
}  // namespace npukit
