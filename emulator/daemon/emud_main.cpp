// npu-emud: the emulated NPU node daemon. See emud_cli.hpp for the exit codes.
#include "emulator/daemon/emud_cli.hpp"

int main(int argc, char** argv) { return npukit::emu::emud::run_command_line(argc, argv); }
