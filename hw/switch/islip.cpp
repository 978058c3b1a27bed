#include "hw/switch/islip.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace xy::sw {
namespace {

// The first port set in both `a` and `mask` at or after `start`, wrapping round past the last
// word; -1 if there is none. Bits past the last port must be clear in `a` or `mask`.
int first_from(const std::uint64_t* a, const std::uint64_t* mask, int words, int start) {
  const int w0 = start >> 6;
  const std::uint64_t head = a[w0] & mask[w0] & (~std::uint64_t{0} << (start & 63));
  if (head != 0) return w0 * 64 + __builtin_ctzll(head);
  for (int w = w0 + 1; w < words; ++w) {
    if (const std::uint64_t bits = a[w] & mask[w]) return w * 64 + __builtin_ctzll(bits);
  }
  // Wrapped: word w0 again, where only the bits before `start` can still be set.
  for (int w = 0; w <= w0; ++w) {
    if (const std::uint64_t bits = a[w] & mask[w]) return w * 64 + __builtin_ctzll(bits);
  }
  return -1;
}

// One past `port`, wrapping to 0 after the last of `ports` (a compare, not a division).
int next_port(int port, int ports) { return port + 1 == ports ? 0 : port + 1; }

}  // namespace

std::vector<std::uint64_t> bitmap_of_all(int ports) {
  std::vector<std::uint64_t> words(static_cast<std::size_t>(bitmap_words(ports)), ~std::uint64_t{0});
  if (ports % 64 != 0) words.back() = (std::uint64_t{1} << (ports % 64)) - 1;
  return words;
}

RequestMatrix::RequestMatrix(int inputs, int outputs)
    : inputs_(inputs), outputs_(outputs), words_per_row_(bitmap_words(outputs)), words_per_column_(bitmap_words(inputs)) {
  if (inputs < 1 || outputs < 1)
    throw std::invalid_argument("RequestMatrix: " + std::to_string(inputs) + " x " + std::to_string(outputs) +
                                " ports; both must be >= 1");
  rows_.assign(static_cast<std::size_t>(inputs) * words_per_row_, 0);
  columns_.assign(static_cast<std::size_t>(outputs) * words_per_column_, 0);
  requested_.assign(static_cast<std::size_t>(words_per_row_), 0);
}

void RequestMatrix::clear() {
  std::fill(rows_.begin(), rows_.end(), 0);
  std::fill(columns_.begin(), columns_.end(), 0);
  std::fill(requested_.begin(), requested_.end(), 0);
}

Islip::Islip(int inputs, int outputs, int iterations, ArbiterKind kind)
    : inputs_(inputs),
      outputs_(outputs),
      iterations_(kind == ArbiterKind::kRoundRobin ? 1 : iterations),
      kind_(kind),
      in_words_(bitmap_words(inputs)),
      out_words_(bitmap_words(outputs)) {
  if (inputs < 1 || outputs < 1 || iterations < 1)
    throw std::invalid_argument("Islip: " + std::to_string(inputs) + " x " + std::to_string(outputs) + " ports, " +
                                std::to_string(iterations) + " iterations; all must be >= 1");
  grant_ptr_.assign(static_cast<std::size_t>(outputs), 0);
  accept_ptr_.assign(static_cast<std::size_t>(inputs), 0);
  output_of_input_.assign(static_cast<std::size_t>(inputs), -1);
  grants_.assign(static_cast<std::size_t>(inputs) * out_words_, 0);
  granted_.assign(static_cast<std::size_t>(in_words_), 0);
  all_in_ = bitmap_of_all(inputs);
  all_out_ = bitmap_of_all(outputs);
  free_in_ = all_in_;
  matched_in_ = all_in_;
  free_out_ = all_out_;
}

int Islip::match(const RequestMatrix& requests, std::vector<Pair>& pairs) {
  if (requests.inputs() != inputs_ || requests.outputs() != outputs_)
    throw std::invalid_argument("Islip::match: a " + std::to_string(requests.inputs()) + " x " +
                                std::to_string(requests.outputs()) + " request matrix for a " +
                                std::to_string(inputs_) + " x " + std::to_string(outputs_) + " arbiter");
  std::copy(all_in_.begin(), all_in_.end(), free_in_.begin());
  std::copy(all_out_.begin(), all_out_.end(), free_out_.begin());

  for (int iteration = 0; iteration < iterations_; ++iteration) {
    // Grant: each unmatched output picks the next requesting unmatched input from g[o]. Outputs
    // nobody requests have nothing to grant.
    bool any_grant = false;
    for (int w = 0; w < out_words_; ++w) {
      for (std::uint64_t outs = free_out_[w] & requests.requested_outputs()[w]; outs != 0; outs &= outs - 1) {
        const int o = w * 64 + __builtin_ctzll(outs);
        const int i = first_from(requests.column(o), free_in_.data(), in_words_, grant_ptr_[o]);
        if (i < 0) continue;
        grants_[static_cast<std::size_t>(i) * out_words_ + (o >> 6)] |= std::uint64_t{1} << (o & 63);
        granted_[static_cast<std::size_t>(i >> 6)] |= std::uint64_t{1} << (i & 63);
        any_grant = true;
        if (kind_ == ArbiterKind::kRoundRobin) grant_ptr_[o] = next_port(i, inputs_);
      }
    }
    if (!any_grant) break;  // no unmatched input requests an unmatched output: maximal

    // Accept: each granted input picks the next granting output from a[i]. Every granted input
    // accepts one, so an iteration with a grant always adds a match.
    for (int w = 0; w < in_words_; ++w) {
      for (std::uint64_t ins = granted_[w]; ins != 0; ins &= ins - 1) {
        const int i = w * 64 + __builtin_ctzll(ins);
        std::uint64_t* grant_row = &grants_[static_cast<std::size_t>(i) * out_words_];
        const int o = first_from(grant_row, free_out_.data(), out_words_, accept_ptr_[i]);
        std::fill(grant_row, grant_row + out_words_, 0);
        output_of_input_[static_cast<std::size_t>(i)] = o;
        bitmap_set(free_in_, i, false);
        bitmap_set(free_out_, o, false);
        if (iteration == 0) {
          accept_ptr_[i] = next_port(o, outputs_);
          if (kind_ == ArbiterKind::kIslip) grant_ptr_[o] = next_port(i, inputs_);
        }
      }
      granted_[w] = 0;
    }
  }
  pairs.clear();
  for (int w = 0; w < in_words_; ++w) matched_in_[w] = all_in_[w] & ~free_in_[w];
  for_each_bit(matched_in_.data(), in_words_,
               [&](int i) { pairs.push_back({i, output_of_input_[static_cast<std::size_t>(i)]}); });
  return static_cast<int>(pairs.size());
}

}  // namespace xy::sw
