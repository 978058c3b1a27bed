// The xysim executable: the driver (tb/xysim/xysim.hpp) with the built-in scenarios.
#include "tb/xysim/xysim.hpp"

int sc_main(int argc, char** argv) { return xy::xysim_main(argc, argv); }
