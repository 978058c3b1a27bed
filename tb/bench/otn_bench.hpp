// `xysim bench otn`: the OTU4 path as cores, one core, exact everywhere: a 100GBASE-R client
// GMP-mapped, framed (overhead, GFEC encode, scrambler), deframed (alignment, descrambler, GFEC
// decode, BIP-8) and de-mapped; frames/s and Gb/s of client traffic, on a clean line and at a
// pre-FEC bit error ratio, with the share of each half.
#pragma once
#include <cstdint>

namespace xy {
int otn_bench(std::uint64_t frames, double ber);
}
