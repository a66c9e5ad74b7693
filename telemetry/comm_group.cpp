#include "telemetry/comm_group.hpp"

#include <charconv>

namespace npukit::telemetry {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t pos = 0;;) {
    std::size_t next = text.find(sep, pos);
    out.push_back(text.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

bool parse_int(std::string_view s, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

int CommGroup::rank_of(int device) const {
  for (std::size_t r = 0; r < devices.size(); ++r) {
    if (devices[r] == device) return static_cast<int>(r);
  }
  return -1;
}

std::string format_comm_group(const CommGroup& g) {
  std::string devices;
  for (int d : g.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  return g.name + "|" + std::to_string(g.size()) + "|" + devices + "|" + g.algorithm + "|" + g.link;
}

Result<CommGroup> parse_comm_group(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("communicator description '" + std::string(text) + "': " + why);
  };
  auto parts = split(text, '|');
  if (parts.size() != 5) return bad("expected name|size|devices|algorithm|link");
  CommGroup g;
  g.name = parts[0];
  int size = 0;
  if (g.name.empty()) return bad("empty name");
  if (!parse_int(parts[1], size) || size < 1) return bad("size is not a positive number");
  for (std::string_view d : split(parts[2], ',')) {
    int device = 0;
    if (!parse_int(d, device) || device < 0) return bad("device '" + std::string(d) + "' is not a device id");
    g.devices.push_back(device);
  }
  if (static_cast<int>(g.devices.size()) != size) return bad("size does not match the device list");
  g.algorithm = parts[3];
  g.link = parts[4];
  return g;
}

int hccl_dtype_size(int id) {
  switch (id) {
    case hccl_dtype::kInt8: case hccl_dtype::kUint8: return 1;
    case hccl_dtype::kInt16: case hccl_dtype::kUint16: case hccl_dtype::kFp16: case hccl_dtype::kBfp16: return 2;
    case hccl_dtype::kInt32: case hccl_dtype::kUint32: case hccl_dtype::kFp32: return 4;
    case hccl_dtype::kInt64: case hccl_dtype::kUint64: case hccl_dtype::kFp64: return 8;
    default: return 0;
  }
}

}  // namespace npukit::telemetry
