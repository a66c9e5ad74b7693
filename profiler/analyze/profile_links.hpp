// Loading a profile's links (EMU_LINK) with the lowest rate each ran at during the recording.
#pragma once

#include "profiler/analyze/profile_data.hpp"
#include "profiler/store/sqlite_db.hpp"

namespace npukit::prof {

// EMU_LINK into p.links (nothing from a profile without it), each with its least_rate_percent.
Status load_links(Db& db, ProfileData& p);

}  // namespace npukit::prof
