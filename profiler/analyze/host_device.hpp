// Where a device of a recording made on several hosts of a cluster sits: its host (that host's
// bus name) and its id there. Read by the profile data, the report model and every renderer.
#pragma once

#include <map>
#include <string>

namespace npukit::prof {

struct HostDevice {
  std::string host;
  int local = 0;
};

// "device 3 of c-1" for a device placed in `hosts`, else "device 3".
inline std::string device_label(const std::map<int, HostDevice>& hosts, int device) {
  auto it = hosts.find(device);
  return it == hosts.end() ? "device " + std::to_string(device)
                           : "device " + std::to_string(it->second.local) + " of " + it->second.host;
}

}  // namespace npukit::prof
