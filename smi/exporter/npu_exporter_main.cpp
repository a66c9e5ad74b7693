// npu-exporter: Prometheus metrics of one npukit node (smi/exporter/server.hpp).
#include <iostream>

#include "smi/exporter/server.hpp"

int main(int argc, char** argv) { return npukit::smi::exporter::run_exporter(argc, argv, std::cout, std::cerr); }
