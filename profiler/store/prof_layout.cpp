#include "profiler/store/prof_layout.hpp"
#include "telemetry/output_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <map>
#include <regex>
#include <tuple>

#include <nlohmann/json.hpp>

namespace npukit::prof {

namespace fs = std::filesystem;

namespace {

const std::regex kProfDir(R"(PROF_(\d{6})_(\d{14})_([A-Za-z0-9]{8}))");
const std::regex kDbFile(R"(msprof_\d{14}\.db)");
const std::regex kDeviceDir(R"(device_(\d+))");

std::string local_stamp(int64_t realtime_ns) {
  std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

std::string random_tag() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  std::uniform_int_distribution<int> pick(0, 35);
  std::string s;
  for (int i = 0; i < 8; ++i) s += kChars[pick(rd)];
  return s;
}

int next_number(const fs::path& dir) {
  int highest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, kProfDir)) highest = std::max(highest, std::stoi(m[1].str()));
  }
  return highest + 1;
}

Result<std::string> db_in_prof_dir(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && std::regex_match(name, kDbFile)) found.push_back(entry.path().string());
  }
  if (found.empty()) return InvalidArgument(dir.string() + ": no msprof_<timestamp>.db profile database in it");
  std::sort(found.begin(), found.end());
  return found.back();
}

// A PROF_ tree's database, device and rank (device_<id>/info.json.<id>; a tree with several
// device_ directories is an older single-tree profile of several devices: device -1).
Result<RankDb> rank_db(const fs::path& dir) {
  auto db = db_in_prof_dir(dir);
  if (!db.ok()) return db.status();
  RankDb out{*db, dir.string(), -1, -1};
  std::error_code ec;
  int devices = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !std::regex_match(name, m, kDeviceDir)) continue;
    ++devices;
    std::string id = m[1].str();
    if (std::from_chars(id.data(), id.data() + id.size(), out.device).ec != std::errc()) out.device = -1;
    std::ifstream in(entry.path() / ("info.json." + id));
    auto info = nlohmann::json::parse(in, nullptr, false);
    if (info.is_object() && info.contains("rank_id") && info["rank_id"].is_number_integer()) {
      out.rank = std::max(-1, static_cast<int>(std::clamp<int64_t>(info["rank_id"].get<int64_t>(), -1, 1 << 30)));
    }
  }
  if (devices != 1) out.device = -1, out.rank = -1;
  return out;
}

}  // namespace

Result<std::vector<ProfPaths>> create_prof_dirs(const std::string& out_dir, int64_t realtime_ns, int count) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) {
    return InvalidArgument(out_dir + ": cannot create the output directory" + (ec ? ": " + ec.message() : ""));
  }
  std::string stamp = local_stamp(realtime_ns);
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string tag = random_tag();
    int first = next_number(out_dir);
    std::vector<ProfPaths> out;
    for (int i = 0; i < count; ++i) {
      char number[16];
      std::snprintf(number, sizeof number, "%06d", (first + i) % 1000000);
      fs::path dir = fs::path(out_dir) / ("PROF_" + std::string(number) + "_" + stamp + "_" + tag);
      if (!fs::create_directory(dir, ec)) break;
      out.push_back({dir.string(), (dir / ("msprof_" + stamp + ".db")).string()});
    }
    if (static_cast<int>(out.size()) == count) return out;
    for (const ProfPaths& p : out) fs::remove_all(p.prof_dir, ec);  // a concurrent recording took a number
  }
  return InvalidArgument(out_dir + ": cannot create PROF_ directories" + (ec ? ": " + ec.message() : ""));
}

Status write_device_info(const std::string& prof_dir, int device, int rank, const std::string& host_uid) {
  std::string id = std::to_string(device);
  fs::path dir = fs::path(prof_dir) / ("device_" + id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  nlohmann::json info = {{"rank_id", rank}, {"hostUid", host_uid}, {"devices", id}};
  return telemetry::write_output_file((dir / ("info.json." + id)).string(), info.dump() + "\n");
}

Result<std::vector<RankDb>> find_profile_dbs(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) return NotFoundError(path + ": no such file or directory");
  if (fs::is_regular_file(p, ec)) return std::vector<RankDb>{{path, "", -1, -1}};
  if (!fs::is_directory(p, ec)) return InvalidArgument(path + ": not a file or directory");
  if (std::regex_match(p.filename().string(), kProfDir)) {
    auto db = rank_db(p);
    if (!db.ok()) return db.status();
    return std::vector<RankDb>{*db};
  }
  std::map<std::string, std::vector<fs::path>> recordings;  // "<timestamp>_<tag>" -> its trees
  for (const auto& entry : fs::directory_iterator(p, ec)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(name, m, kProfDir)) recordings[m[2].str() + "_" + m[3].str()].push_back(entry.path());
  }
  if (recordings.empty()) {
    auto direct = db_in_prof_dir(p);
    if (direct.ok()) return std::vector<RankDb>{{*direct, "", -1, -1}};
    return InvalidArgument(path + ": no PROF_* recording in it (record one with: npu-prof record -o " + path + " -- <command>)");
  }
  if (recordings.size() > 1) {
    auto newest = std::max_element(recordings.begin(), recordings.end(), [](const auto& a, const auto& b) {
      return a.second.front().filename().string() < b.second.front().filename().string();
    });
    std::sort(newest->second.begin(), newest->second.end());
    return InvalidArgument(path + ": holds " + std::to_string(recordings.size()) + " recordings; name one, e.g. " +
                           newest->second.front().string() + " (a rank) or a directory holding only its PROF_ trees");
  }
  std::vector<RankDb> out;
  for (const fs::path& dir : recordings.begin()->second) {
    auto db = rank_db(dir);
    if (!db.ok()) return db.status();
    out.push_back(*db);
  }
  std::sort(out.begin(), out.end(), [](const RankDb& a, const RankDb& b) {
    return std::tie(a.rank, a.device, a.db) < std::tie(b.rank, b.device, b.db);
  });
  return out;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string host_uid() {
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (in >> id && !id.empty()) return id;
  return std::to_string(std::hash<std::string>{}(host_name()));
}

}  // namespace npukit::prof
