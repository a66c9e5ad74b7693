// npu-smi: Huawei-compatible CLI over the npukit bus, plus script-friendly extensions.
#include "smi/cli/cli.hpp"
#include "smi/cli/help.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (auto rc = npukit::cli::answer_meta_request(argc, argv, npukit::smi::smi_program, std::cout)) return *rc;
  // `--node-name NAME` (or --node) anywhere selects the node, as $NPU_NODE does; the rest is npu-smi's.
  std::vector<const char*> args;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (i > 0 && (arg == "--node-name" || arg == "--node")) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "npu-smi: %s needs a node name\n", arg.c_str());
        return npukit::smi::kExitInvalidParameter;
      }
      ::setenv("NPU_NODE", argv[++i], 1);
      continue;
    }
    if (i > 0 && (arg.rfind("--node-name=", 0) == 0 || arg.rfind("--node=", 0) == 0)) {
      ::setenv("NPU_NODE", arg.substr(arg.find('=') + 1).c_str(), 1);
      continue;
    }
    args.push_back(argv[i]);
  }
  npukit::smi::Context ctx = npukit::smi::process_context({});
  return npukit::smi::run_cli(ctx, static_cast<int>(args.size()), args.data());
}
