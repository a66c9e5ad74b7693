// npu-smi's help texts: Huawei's wording for the compatible commands, with the npukit
// extensions and the exit-code table appended (docs/npu-smi.md says the same).
#pragma once

#include <string>

namespace npukit::smi {

std::string top_help();
std::string info_help();
std::string watch_help();
std::string set_help();
std::string clear_help();
std::string health_help();
std::string topo_help();
std::string stats_help();

}  // namespace npukit::smi
