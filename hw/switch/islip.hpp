// The crossbar arbiter of the Lingyun switch: iSLIP (N. McKeown, "The iSLIP Scheduling Algorithm
// for Input-Queued Switches", IEEE/ACM Trans. Networking 7(2), 1999) and, for comparison, the
// round-robin matching (RRM) it improves on. Plain C++, no SystemC.
//
// The switch keeps a RequestMatrix (input i requests output o while VOQ[i][o] holds a cell that
// may go) and calls match() in every cycle with a request. One iteration of iSLIP is:
//  1. Request: every unmatched input requests every unmatched output it has a cell for.
//  2. Grant: every unmatched output with requests grants the requesting unmatched input that
//     appears next at or after its grant pointer g[o] (round robin, wrapping).
//  3. Accept: every input with grants accepts the granting output that appears next at or after
//     its accept pointer a[i]; the pair is matched.
// Pointers move only for matches made in the FIRST iteration: g[o] to one past the accepted input,
// a[i] to one past the accepted output. An output whose grant is refused keeps its pointer and
// grants the same input again next cycle, which is what desynchronises the pointers under load
// (100 % throughput with one iteration under uniform full load) and bounds waiting: while the r
// inputs requesting an output keep requesting it, each of them is matched to it within
// outputs * r cycles (an input refusing a grant moves its accept pointer towards the output,
// and the output's pointer passes only inputs that accepted). Later iterations only add matches
// among ports still unmatched.
//
// ArbiterKind::kRoundRobin is RRM: one iteration, g[o] moves one past the input it GRANTED,
// whether or not the grant is accepted, a[i] one past the accepted output. Its grant pointers
// move in lock step under heavy load (under full load from reset every output grants the same
// input each cycle), which iSLIP's accepted-only rule prevents.
//
// Requests are bitmaps, one 64-bit word per 64 ports, scanned with count-trailing-zeros. The
// grant step visits only outputs that someone requests (the matrix keeps a bitmap of them), so an
// iteration costs O(requested outputs * inputs / 64) word operations, not O(outputs): a switch
// that keeps its request matrix up to date pays for the requests it has, not for its radix.
//
// Cycle contract: match() is combinational, the whole matching of one cycle in one call; the
// cycle in which its result takes effect is the caller's (the switch's `arbiter` latency).
// Pointers change only inside match(). Exact: the algorithms as published, including pointer
// update rules and tie-breaking. Abstracted: nothing of the arbitration itself; requests are
// one bit per VOQ (no weights, priorities or request counts). After construction match()
// allocates nothing (given a pair vector that already holds min(inputs, outputs) elements' capacity).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace xy::sw {

enum class ArbiterKind { kIslip, kRoundRobin };

// Port bitmaps: port p at bit p % 64 of word p / 64, bits past the last port clear.
inline int bitmap_words(int ports) { return (ports + 63) / 64; }
std::vector<std::uint64_t> bitmap_of_all(int ports);  // every port's bit set
inline bool bitmap_test(const std::vector<std::uint64_t>& bits, int port) {
  return (bits[static_cast<std::size_t>(port >> 6)] >> (port & 63)) & 1;
}
inline void bitmap_set(std::vector<std::uint64_t>& bits, int port, bool value) {
  const std::uint64_t bit = std::uint64_t{1} << (port & 63);
  if (value) bits[static_cast<std::size_t>(port >> 6)] |= bit;
  else bits[static_cast<std::size_t>(port >> 6)] &= ~bit;
}
// Calls f(port) for every bit set in words[0..count), reading each word once (f may clear it).
template <typename F>
void for_each_bit(const std::uint64_t* words, int count, F f) {
  for (int w = 0; w < count; ++w) {
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) f(w * 64 + __builtin_ctzll(bits));
  }
}

// Which input requests which output in one cycle, held both by input (rows, for accepting) and
// by output (columns, for granting) so that match() never transposes, and with the set of
// outputs that have a request, so that match() visits only those. Port numbers are checked by
// none of set(), reset() and get() (they are on the switch's per-cycle path); they must lie in
// 0..inputs-1 / 0..outputs-1.
class RequestMatrix {
 public:
  RequestMatrix(int inputs, int outputs);  // throws std::invalid_argument unless both are >= 1

  void clear();
  void set(int in, int out) {
    rows_[row_index(in, out)] |= bit(out);
    columns_[column_index(in, out)] |= bit(in);
    requested_[static_cast<std::size_t>(out >> 6)] |= bit(out);
  }
  void reset(int in, int out) {
    rows_[row_index(in, out)] &= ~bit(out);
    columns_[column_index(in, out)] &= ~bit(in);
    const std::uint64_t* c = column(out);
    if (std::all_of(c, c + words_per_column_, [](std::uint64_t w) { return w == 0; }))
      requested_[static_cast<std::size_t>(out >> 6)] &= ~bit(out);
  }
  bool get(int in, int out) const { return (rows_[row_index(in, out)] & bit(out)) != 0; }
  // The outputs with at least one request, laid out like a row.
  const std::uint64_t* requested_outputs() const { return requested_.data(); }
  bool empty() const {
    return std::all_of(requested_.begin(), requested_.end(), [](std::uint64_t w) { return w == 0; });
  }
  int inputs() const { return inputs_; }
  int outputs() const { return outputs_; }
  // Input `in`'s requests: words_per_row() words, output o at bit o % 64 of word o / 64; bits
  // past outputs() are zero.
  const std::uint64_t* row(int in) const { return &rows_[static_cast<std::size_t>(in) * words_per_row_]; }
  int words_per_row() const { return words_per_row_; }
  // The inputs requesting output `out`, laid out the same way over inputs.
  const std::uint64_t* column(int out) const {
    return &columns_[static_cast<std::size_t>(out) * words_per_column_];
  }
  int words_per_column() const { return words_per_column_; }

 private:
  std::size_t row_index(int in, int out) const {
    return static_cast<std::size_t>(in) * words_per_row_ + static_cast<std::size_t>(out >> 6);
  }
  std::size_t column_index(int in, int out) const {
    return static_cast<std::size_t>(out) * words_per_column_ + static_cast<std::size_t>(in >> 6);
  }
  static std::uint64_t bit(int port) { return std::uint64_t{1} << (port & 63); }

  int inputs_, outputs_, words_per_row_, words_per_column_;
  std::vector<std::uint64_t> rows_, columns_, requested_;
};

class Islip {
 public:
  struct Pair {
    int input, output;
    bool operator==(const Pair& o) const { return input == o.input && output == o.output; }
  };

  // Throws std::invalid_argument unless inputs, outputs and iterations are >= 1. kRoundRobin runs
  // one iteration whatever `iterations` says (RRM is defined with one); iterations() tells.
  // Every pointer starts at 0.
  Islip(int inputs, int outputs, int iterations, ArbiterKind kind = ArbiterKind::kIslip);

  // Matches inputs to outputs among `requests` (which must have this arbiter's dimensions, or
  // std::invalid_argument): `pairs` becomes the matched (input, output) pairs in increasing input
  // order. Stops early when an iteration adds no match (no later one could). Returns the number
  // of matched pairs.
  int match(const RequestMatrix& requests, std::vector<Pair>& pairs);

  // g[o] per output and a[i] per input, the port with the highest priority next. Writable so a
  // test or a checkpoint can set them; values must stay in 0..inputs-1 and 0..outputs-1.
  std::vector<int>& grant_pointers() { return grant_ptr_; }
  const std::vector<int>& grant_pointers() const { return grant_ptr_; }
  std::vector<int>& accept_pointers() { return accept_ptr_; }
  const std::vector<int>& accept_pointers() const { return accept_ptr_; }

  int inputs() const { return inputs_; }
  int outputs() const { return outputs_; }
  int iterations() const { return iterations_; }
  ArbiterKind kind() const { return kind_; }

 private:
  int inputs_, outputs_, iterations_;
  ArbiterKind kind_;
  int in_words_, out_words_;  // 64-bit words of a bitmap over inputs / over outputs
  std::vector<int> grant_ptr_, accept_ptr_;
  std::vector<int> output_of_input_;        // valid for the inputs matched by the last match()
  std::vector<std::uint64_t> grants_;        // per input: the outputs granting it this iteration
  std::vector<std::uint64_t> granted_;       // inputs holding a grant this iteration
  std::vector<std::uint64_t> free_in_;       // unmatched inputs
  std::vector<std::uint64_t> free_out_;      // unmatched outputs
  std::vector<std::uint64_t> matched_in_;    // the inputs matched, once match() is done
  std::vector<std::uint64_t> all_in_, all_out_;  // every valid port bit set
};

}  // namespace xy::sw
