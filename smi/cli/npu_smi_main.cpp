// npu-smi: Huawei-compatible CLI over the npukit bus, plus script-friendly extensions.
#include "smi/cli/cli.hpp"

int main(int argc, char** argv) {
  npukit::smi::Context ctx = npukit::smi::process_context({});
  return npukit::smi::run_cli(ctx, argc, argv);
}
