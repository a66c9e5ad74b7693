// Shared by the fuzz targets: scratch files private to this process, and a wall-clock budget that
// turns "runs for ever" into a cancellation the code under test must honour.
//
// Every target defines LLVMFuzzerTestOneInput (and may define LLVMFuzzerInitialize). The same
// source builds two ways (tests/fuzz/CMakeLists.txt): with -DNPUKIT_FUZZ=ON as a libFuzzer binary,
// and in the normal build linked with replay_main.cpp, which runs a corpus once (a ctest test).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace npukit::fuzz {

inline std::string_view as_text(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// "/tmp/npukit-fuzz-<pid>-<name>": one per process, so parallel fuzz jobs never share a file.
inline std::string scratch_path(const std::string& name) {
  return "/tmp/npukit-fuzz-" + std::to_string(::getpid()) + "-" + name;
}

// Replaces `path` with exactly these bytes; false when it cannot be written.
inline bool write_file(const std::string& path, const void* data, std::size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const char* p = static_cast<const char*>(data);
  for (std::size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, p + done, size - done);
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;
}

// Little-endian integer from the front of the input, advancing it; 0 past the end.
template <typename T>
T take(const uint8_t*& data, std::size_t& size) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T) && size > 0; ++i, ++data, --size) v |= static_cast<T>(*data) << (8 * i);
  return v;
}

}  // namespace npukit::fuzz
