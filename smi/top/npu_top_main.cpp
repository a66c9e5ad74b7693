// npu-top: the live dashboard of an npukit node. See smi/top/app.hpp for the modes and exit
// codes, docs/npu-top.md for the screen and the keys.
#include <clocale>

#include "smi/top/app.hpp"

namespace top = npukit::top;

int main(int argc, char** argv) {
  std::setlocale(LC_ALL, "");
  top::Options o;
  int rc = top::parse_command_line(argc, argv, o);
  return rc == top::kParsedArgs ? top::run(o) : rc;
}
