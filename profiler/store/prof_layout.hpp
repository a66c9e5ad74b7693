// The on-disk layout of a recording, as msprof writes it (so msprof-analyze discovers it):
//
//   DIR/PROF_<6 digits>_<YYYYMMDDhhmmss>_<8 alnum>/
//       msprof_<YYYYMMDDhhmmss>.db          the profile database (schema.hpp)
//       device_<id>/info.json.<id>          {"rank_id": r, "hostUid": "...", "devices": "<id>"}
//
// <6 digits> numbers the recordings in DIR (1 + the highest existing); the timestamps are the
// local time the recording started; the 8 characters are random [A-Z0-9].
//
// Thread-safety: functions touch the file system only; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::prof {

struct ProfPaths {
  std::string prof_dir;  // DIR/PROF_...
  std::string db;        // DIR/PROF_.../msprof_<ts>.db
};

// Creates DIR (and parents) when missing and a new PROF_ directory inside it.
Result<ProfPaths> create_prof_dir(const std::string& out_dir, int64_t realtime_ns);

// Writes device_<id>/info.json.<id> for each device (rank -1 = not known).
Status write_device_info(const std::string& prof_dir, int device, int rank, const std::string& host_uid);
// Removes device_<id> directories of devices not in `keep`.
Status prune_device_dirs(const std::string& prof_dir, const std::vector<int>& keep);

// The profile database named by `path`: the .db file itself, a PROF_ directory, or a directory
// holding exactly one PROF_ directory. NotFound / InvalidArgument name the path and the reason.
Result<std::string> find_profile_db(const std::string& path);

// gethostname(), and a stable id of this host (/etc/machine-id, else the hostname's hash).
std::string host_name();
std::string host_uid();

}  // namespace npukit::prof
