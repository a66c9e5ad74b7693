// Times a real recording cannot have: a session longer than kMaxSessionNs (about 52 days), or rows
// more than that before or after the session's start, or ending before they start. A corrupted
// database can hold any int64; the analysis subtracts, scales and sums times, which must stay
// within int64, so such rows are dropped when the profile is loaded and named as damage.
#pragma once

#include <cstdint>

#include "profiler/analyze/profile_data.hpp"

namespace npukit::prof {

inline constexpr int64_t kMaxSessionNs = int64_t{1} << 52;

// Drops the rows outside the window around p.session_start (nothing when the database recorded
// no session), appending one line per table to
// p.damage ("TASK: 2 rows with impossible times skipped"); an impossible session is reset to its
// start and named too.
void drop_impossible_times(ProfileData& p);

}  // namespace npukit::prof
