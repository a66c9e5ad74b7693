// The report's memory section: per device the sampled peak and the allocator's exact one, and a
// timeline of the samples (report_model.hpp: MemoryRow, MemoryPoint).
#pragma once

#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

void memory_tables(const ProfileData& d, Report& r);

}  // namespace npukit::prof
