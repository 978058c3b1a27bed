// Test binaries link GoogleTest's main(); libsystemc still needs an sc_main symbol.
extern "C" int sc_main(int, char**) { return 0; }
