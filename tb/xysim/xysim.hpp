// The xysim driver as a library function, so that a program of one's own gets the same command
// line (run, params, sweep, --set, --out, --waves...) for its own scenarios:
//
//   int sc_main(int argc, char** argv) {
//     xy::register_scenario(my_scenario());  // tb/lib/scenario.hpp
//     return xy::xysim_main(argc, argv);
//   }
//
// `sweep` runs each point as `argv[0] run ...`: the program itself, with its scenarios.
#pragma once
#include <systemc>  // declares sc_main, which SystemC's main() calls, as extern "C"

namespace xy {

// Exit status: 0 ok, 1 a check failed, 2 bad input.
int xysim_main(int argc, char** argv);

}  // namespace xy
