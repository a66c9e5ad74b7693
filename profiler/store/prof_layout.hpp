// The on-disk layout of a recording, as a multi-rank msprof collection (one PROF_ tree per rank,
// so msprof-analyze's cluster analysis finds every rank):
//
//   DIR/PROF_<6 digits>_<YYYYMMDDhhmmss>_<8 alnum>/      one per rank (device) of the recording
//       msprof_<YYYYMMDDhhmmss>.db          that rank's profile database (schema.hpp)
//       device_<id>/info.json.<id>          {"rank_id": r, "hostUid": "...", "devices": "<id>"}
//
// <6 digits> numbers the PROF_ trees in DIR (1 + the highest existing, then one per rank); the
// timestamp is the local time the recording started; the 8 characters are random [A-Z0-9] and
// the same for every rank of one recording: timestamp and tag together name the recording.
// A database written before per-rank recording holds every device in one tree; it still reads.
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

// Creates DIR (and parents) when missing and `count` new PROF_ directories of one recording.
Result<std::vector<ProfPaths>> create_prof_dirs(const std::string& out_dir, int64_t realtime_ns, int count);

// Writes device_<id>/info.json.<id> for each device (rank -1 = not known).
Status write_device_info(const std::string& prof_dir, int device, int rank, const std::string& host_uid);

// One rank's database of a recording, with what its PROF_ tree says of it.
struct RankDb {
  std::string db;
  std::string prof_dir;  // "" for a bare .db file
  int device = -1;       // from device_<id>/ (-1: none, or several in an older single-tree profile)
  int rank = -1;         // info.json's rank_id (-1: not known)
};

// The databases named by `path`: the .db file itself, a PROF_ directory, or a directory holding
// the PROF_ trees of one recording (in rank order, then device order). NotFound /
// InvalidArgument name the path and the reason (a directory with several recordings names the
// newest to pick).
Result<std::vector<RankDb>> find_profile_dbs(const std::string& path);

// gethostname(), and a stable id of this host (/etc/machine-id, else the hostname's hash).
std::string host_name();
std::string host_uid();

}  // namespace npukit::prof
