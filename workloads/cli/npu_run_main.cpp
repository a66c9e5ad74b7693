// npu-run: run a workload on the emulated node. Exit codes in workloads/run.hpp.
#include "workloads/cli/command_line.hpp"

int main(int argc, char** argv) { return npukit::work::run_command_line(argc, argv); }
