// npu-prof: record operator timelines into an msprof-shaped database; report, export, diff.
#include "profiler/cli/cli.hpp"

int main(int argc, char** argv) { return npukit::prof::run_cli(argc, argv); }
