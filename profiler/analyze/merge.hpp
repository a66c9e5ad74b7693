// The ranks of one recording as one ProfileData: npu-prof report/export/diff of a collection
// (prof_layout.hpp) see every rank at once. A single part is returned as it is.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <string>
#include <vector>

#include "profiler/analyze/profile_data.hpp"

namespace npukit::prof {

// `parts` in rank order; `path` names the collection (ProfileData::db_path).
ProfileData merge_ranks(std::vector<ProfileData> parts, std::string path);

}  // namespace npukit::prof
