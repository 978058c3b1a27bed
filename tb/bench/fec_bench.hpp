// `xysim bench fec`: single-core throughput of the Reed–Solomon codec for the PHY presets
// (rs544, rs272, rs255). Figures are Gb/s of codeword bits (n * m bits per codeword): encode,
// decode of clean codewords, and decode of codewords carrying t symbol errors.
#pragma once

namespace xy {

// Runs each measurement for about `seconds_per_point` seconds, prints a table, returns 0 (1 if
// a decode result was wrong).
int fec_bench(double seconds_per_point);

// Runs phy-loopback with the exact and the fast codec (child processes of `self`) at a pre-FEC
// BER of `ber` and prints the simulated-time rate of each and their ratio; returns 0.
int fec_mode_bench(const char* self, double ber, int repeats);

}  // namespace xy
