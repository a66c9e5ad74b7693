#include "profiler/store/prof_layout.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

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

}  // namespace

Result<ProfPaths> create_prof_dir(const std::string& out_dir, int64_t realtime_ns) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) {
    return InvalidArgument(out_dir + ": cannot create the output directory" + (ec ? ": " + ec.message() : ""));
  }
  std::string stamp = local_stamp(realtime_ns);
  for (int attempt = 0; attempt < 8; ++attempt) {
    char number[16];
    std::snprintf(number, sizeof number, "%06d", next_number(out_dir) % 1000000);
    fs::path dir = fs::path(out_dir) / ("PROF_" + std::string(number) + "_" + stamp + "_" + random_tag());
    if (fs::create_directory(dir, ec)) return ProfPaths{dir.string(), (dir / ("msprof_" + stamp + ".db")).string()};
  }
  return InvalidArgument(out_dir + ": cannot create a PROF_ directory" + (ec ? ": " + ec.message() : ""));
}

Status write_device_info(const std::string& prof_dir, int device, int rank, const std::string& host_uid) {
  std::string id = std::to_string(device);
  fs::path dir = fs::path(prof_dir) / ("device_" + id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  nlohmann::json info = {{"rank_id", rank}, {"hostUid", host_uid}, {"devices", id}};
  std::ofstream out(dir / ("info.json." + id));
  out << info.dump() << "\n";
  if (!out) return InvalidArgument((dir / ("info.json." + id)).string() + ": cannot write");
  return Status::Ok();
}

Status prune_device_dirs(const std::string& prof_dir, const std::vector<int>& keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(prof_dir, ec)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, kDeviceDir)) continue;
    int device = std::stoi(m[1].str());
    if (std::find(keep.begin(), keep.end(), device) == keep.end()) fs::remove_all(entry.path(), ec);
  }
  return Status::Ok();
}

Result<std::string> find_profile_db(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) return NotFoundError(path + ": no such file or directory");
  if (fs::is_regular_file(p, ec)) return path;
  if (!fs::is_directory(p, ec)) return InvalidArgument(path + ": not a file or directory");
  if (std::regex_match(p.filename().string(), kProfDir)) return db_in_prof_dir(p);
  std::vector<fs::path> profs;
  for (const auto& entry : fs::directory_iterator(p, ec)) {
    if (entry.is_directory() && std::regex_match(entry.path().filename().string(), kProfDir)) profs.push_back(entry.path());
  }
  if (profs.empty()) {
    auto direct = db_in_prof_dir(p);
    if (direct.ok()) return direct;
    return InvalidArgument(path + ": no PROF_* recording in it (record one with: npu-prof record -o " + path + " -- <command>)");
  }
  if (profs.size() > 1) {
    std::sort(profs.begin(), profs.end());
    return InvalidArgument(path + ": holds " + std::to_string(profs.size()) + " recordings; name one, e.g. " +
                           profs.back().string());
  }
  return db_in_prof_dir(profs.front());
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
