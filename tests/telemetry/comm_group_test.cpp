#include "telemetry/comm_group.hpp"

#include <gtest/gtest.h>

namespace npukit::telemetry {
namespace {

TEST(CommGroup, FormatAndParseRoundTrip) {
  CommGroup g{"dp1", {1, 3, 5, 7}, "MESH", "HCCS"};
  EXPECT_EQ(format_comm_group(g), "dp1|4|1,3,5,7|MESH|HCCS");
  auto back = parse_comm_group(format_comm_group(g));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->name, "dp1");
  EXPECT_EQ(back->devices, (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(back->size(), 4);
  EXPECT_EQ(back->rank_of(5), 2);
  EXPECT_EQ(back->rank_of(0), -1);
  EXPECT_EQ(back->algorithm, "MESH");
  EXPECT_EQ(back->link, "HCCS");
}

TEST(CommGroup, MalformedDescriptionsNameTheText) {
  for (const char* text : {"", "tp0", "tp0|2|0,1|MESH", "|2|0,1|MESH|HCCS", "tp0|x|0,1|MESH|HCCS",
                           "tp0|3|0,1|MESH|HCCS", "tp0|2|0,a|MESH|HCCS", "tp0|2|0,-1|RING|PCIE"}) {
    auto g = parse_comm_group(text);
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_NE(g.status().message().find("communicator description '" + std::string(text) + "'"), std::string::npos)
        << g.status().message();
  }
}

TEST(CommGroup, DataTypeSizesAndThePackedWord) {
  EXPECT_EQ(hccl_dtype_size(hccl_dtype::kFp16), 2);
  EXPECT_EQ(hccl_dtype_size(hccl_dtype::kBfp16), 2);
  EXPECT_EQ(hccl_dtype_size(hccl_dtype::kFp32), 4);
  EXPECT_EQ(hccl_dtype_size(hccl_dtype::kInt64), 8);
  EXPECT_EQ(hccl_dtype_size(hccl_dtype::kInt8), 1);
  EXPECT_EQ(hccl_dtype_size(hccl_dtype::kNotApplicable), 0);
  uint64_t w = pack_task_dtype(123456789, hccl_dtype::kBfp16);
  EXPECT_EQ(unpack_task_id(w), 123456789u);
  EXPECT_EQ(unpack_dtype(w), hccl_dtype::kBfp16);
}

}  // namespace
}  // namespace npukit::telemetry
