// A constructed two-device timeline, written through the recorder's mapper and finalize: the
// hand-computed intervals of the overlap tests, and the same recording as one database or as
// one database per rank (the merge tests).
#pragma once

#include <string>
#include <vector>

#include "profiler/store/derive.hpp"
#include "tests/profiler/prof_test_util.hpp"
#include "tests/profiler/synthetic.hpp"

namespace npukit::testing {

// Device timeline (ns): compute [0,10) [5,20) [30,40); communication [15,35) [50,60).
//   compute union            [0,20) [30,40)
//   communication            [15,35) [50,60)
//   not overlapped           [20,30) [50,60)
//   free (first..last busy)  [40,50)
inline std::vector<prof::TaskSpan> hand_timeline(int64_t scale) {
  return {{0, 10 * scale, false},          {5 * scale, 20 * scale, false}, {30 * scale, 40 * scale, false},
          {15 * scale, 35 * scale, true},  {50 * scale, 60 * scale, true}};
}

// The same timeline through the recorder's mapper and finalize, in us, on two devices (device
// 1 shifted by 100 us), with two steps per device: [0,60) and [60,120) us.
inline std::string constructed_db(const std::string& dir, const std::vector<int>& devices = {0, 1},
                                  const std::string& name = "constructed.db", int rank = -1) {
  std::string path = dir + "/" + name;
  auto w = prof::ProfileWriter::create(path, 0);
  EXPECT_TRUE(w.ok()) << w.status().message();
  SyntheticBus bus;
  auto mapper = prof::EventMapper::create(**w, bus.resolver(), {.clock_base_ns = 0, .link_type = 1});
  EXPECT_TRUE(mapper.ok());
  EXPECT_TRUE((*w)->begin_batch().ok());
  uint64_t task = 1;
  for (int device : devices) {
    task = 1 + static_cast<uint64_t>(device) * 5;
    uint64_t off = static_cast<uint64_t>(device) * 100'000;
    for (const prof::TaskSpan& s : hand_timeline(1000)) {
      uint64_t start = off + static_cast<uint64_t>(s.start), dur = static_cast<uint64_t>(s.end - s.start);
      // Each task on its own stream: overlapping tasks of one stream would break the invariant.
      uint32_t stream = static_cast<uint32_t>(device * 10 + task % 5);
      EXPECT_TRUE(mapper->map(bus.launch(device, start, stream, task, s.communication ? "hcom_allReduce_" : "aten::mm")).ok());
      tf::Event e = s.communication ? bus.collective(device, start, dur, stream, task, 1 << 20, "hcom_allReduce_",
                                                     "world|2|0,1|MESH|HCCS")
                                    : bus.kernel(device, start, dur, stream, task, "MatMulV2", "aten::mm|64,64;64,64|FLOAT16;FLOAT16");
      EXPECT_TRUE(mapper->map(e).ok());
      ++task;
    }
    EXPECT_TRUE(mapper->map(bus.step(device, off, 60'000, 0)).ok());
    EXPECT_TRUE(mapper->map(bus.step(device, off + 60'000, 60'000, 1)).ok());
  }
  EXPECT_TRUE((*w)->commit_batch().ok());
  auto stats = (*w)->finalize(rank);
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  return path;
}

}  // namespace npukit::testing
