// Fuzz target: an npu-top recording (npu-top --record FILE), as `npu-top --replay FILE` reads
// it: parsed, then every frame drawn headless (three frames, 120x40). A bad file is one line
// and exit 2; nothing crashes or hangs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "smi/top/app.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace top = npukit::top;
  std::string path = npukit::fuzz::scratch_path("recording.json");
  if (!npukit::fuzz::write_file(path, data, size)) return 0;
  top::Options o;
  o.replay = path;
  o.frames = 3;
  o.width = 120;
  o.height = 40;
  o.interval_s = 0.05;
  std::ostringstream out, err;
  int rc = top::run_headless(o, out, err);
  if (rc != top::kExitOk && rc != top::kExitUsage) {
    std::fprintf(stderr, "top recording fuzz: exit %d (documented: 0 or %d): %s\n", rc, top::kExitUsage, err.str().c_str());
    std::abort();
  }
  ::unlink(path.c_str());
  return 0;
}
