#include "telemetry/naming.hpp"

#include <sys/stat.h>

#include <cstdlib>

namespace npukit::telemetry {

Status validate_node_name(std::string_view node) {
  bool ok = !node.empty() && node.size() <= kMaxNodeNameLength;
  for (char c : node) {
    bool good = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-';
    ok = ok && good;
  }
  if (ok) return Status::Ok();
  return InvalidArgument("invalid node name '" + std::string(node) +
                         "': use 1-48 characters of [A-Za-z0-9_.-]");
}

std::string node_name_from_env() {
  const char* env = std::getenv("NPU_NODE");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(kDefaultNodeName);
}

std::string shm_name(std::string_view node) { return "/npukit-" + std::string(node); }

std::string shm_path(std::string_view node) { return "/dev/shm" + shm_name(node); }

std::string control_socket_path(std::string_view node) {
  std::string dir = "/tmp";
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  struct stat st{};
  if (xdg != nullptr && *xdg == '/' && ::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode)) dir = xdg;
  return dir + "/npukit-" + std::string(node) + ".sock";
}

int cluster_host_count(std::string_view node) {
  std::string n(node);
  struct stat st{};
  auto exists = [&st](const std::string& path) { return ::stat(path.c_str(), &st) == 0; };
  int hosts = 0;
  if (exists(control_socket_path(n)) && !exists(shm_path(n))) {
    while (hosts < 4096 && exists(shm_path(n + "-" + std::to_string(hosts)))) ++hosts;
  }
  return hosts;
}

std::string no_bus_message(std::string_view node) {
  std::string n(node);
  int hosts = cluster_host_count(node);
  if (hosts == 0) return no_daemon_message(node);
  std::string last = n + "-" + std::to_string(hosts - 1);
  return "'" + n + "' is a cluster of " + std::to_string(hosts) + (hosts == 1 ? " host" : " hosts") +
         ", each with its own bus: name a host, " + (hosts == 1 ? last : n + "-0 .. " + last) +
         " (--node-name " + n + "-0)";
}

std::string no_daemon_message(std::string_view node) {
  std::string n(node);
  return "no npukit node '" + n + "' is running (start one with: npu-emud start --node-name " + n +
         ")";
}

}  // namespace npukit::telemetry
