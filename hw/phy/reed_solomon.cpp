#include "hw/phy/reed_solomon.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace xy::phy {

RsCode rs544() { return {"rs544", 10, 0x409, 544, 514, 0}; }
RsCode rs272() { return {"rs272", 10, 0x409, 272, 258, 0}; }
RsCode rs255() { return {"rs255", 8, 0x11D, 255, 239, 0}; }

// ---------------------------------------------------------------------------------------------
// GaloisField

GaloisField::GaloisField(int m, std::uint32_t poly) : m_(m) {
  if (m < 2 || m > 16) throw std::invalid_argument(fmt::format("GaloisField: m = {} is outside 2..16", m));
  if ((poly >> m) != 1u) {
    throw std::invalid_argument(fmt::format("GaloisField: polynomial {:#x} does not have degree {}", poly, m));
  }
  size_ = 1u << m;
  const std::uint32_t order = size_ - 1;
  exp_.assign(2 * order, 0);
  log_.assign(size_, -1);
  // Walk alpha^0, alpha^1, ...: the polynomial is primitive iff the first return to 1 (or a
  // fall to 0, when it is reducible with factor x) happens only after 2^m - 1 steps.
  std::uint32_t a = 1;
  for (std::uint32_t i = 0; i < order; ++i) {
    if (a == 0 || log_[a] != -1) {
      throw std::invalid_argument(
          fmt::format("GaloisField: polynomial {:#x} is not primitive over GF(2^{})", poly, m));
    }
    exp_[i] = static_cast<std::uint16_t>(a);
    log_[a] = static_cast<int>(i);
    a <<= 1;
    if (a & size_) a ^= poly;
  }
  if (a != 1) {
    throw std::invalid_argument(fmt::format("GaloisField: polynomial {:#x} is not primitive over GF(2^{})", poly, m));
  }
  // The second copy lets mul() add two logs without a modulo.
  std::copy(exp_.begin(), exp_.begin() + order, exp_.begin() + order);
}

std::uint16_t GaloisField::div(std::uint16_t a, std::uint16_t b) const {
  if (a == 0) return 0;
  return exp_[log_[a] + static_cast<int>(size_ - 1) - log_[b]];
}

std::uint16_t GaloisField::inv(std::uint16_t a) const { return exp_[static_cast<int>(size_ - 1) - log_[a]]; }

std::uint16_t GaloisField::pow_alpha(long long e) const {
  const long long order = size_ - 1;
  long long r = e % order;
  if (r < 0) r += order;
  return exp_[r];
}

// ---------------------------------------------------------------------------------------------
// ReedSolomon

namespace {

// Decoder working storage, one set per thread: decode() stays const and, after the first call
// on a thread, allocation-free.
struct Scratch {
  std::vector<std::uint16_t> window;  // long division, n symbols
  std::vector<std::uint16_t> sym;
  std::vector<int> num;
};

Scratch& scratch(std::size_t n, std::size_t parity) {
  thread_local Scratch s;
  if (s.window.size() < n) s.window.resize(n);
  if (s.sym.size() < 7 * (parity + 1)) s.sym.resize(7 * (parity + 1));
  if (s.num.size() < parity + 1) s.num.resize(parity + 1);
  return s;
}

}  // namespace

ReedSolomon::ReedSolomon(RsCode code) : code_(std::move(code)), gf_(code_.m, code_.field_poly) {
  const long long max_n = static_cast<long long>(gf_.size()) - 1;
  if (code_.n < 2 || code_.n > max_n) {
    throw std::invalid_argument(
        fmt::format("ReedSolomon {}: n = {} must lie in 2..{} for m = {}", code_.name, code_.n, max_n, code_.m));
  }
  if (code_.k <= 0 || code_.k >= code_.n) {
    throw std::invalid_argument(fmt::format("ReedSolomon {}: k = {} must lie in 1..{}", code_.name, code_.k, code_.n - 1));
  }
  const int parity = code_.n - code_.k;
  const std::uint32_t q = gf_.size();
  const int order = static_cast<int>(q - 1);

  // g(x) = prod (x - alpha^(first_root + i)), built highest degree first.
  generator_.assign(1, 1);
  for (int i = 0; i < parity; ++i) {
    const std::uint16_t root = gf_.pow_alpha(static_cast<long long>(code_.first_root) + i);
    generator_.push_back(0);
    for (std::size_t j = generator_.size() - 1; j > 0; --j) generator_[j] ^= gf_.mul(generator_[j - 1], root);
  }

  // Encoder rows: row f holds f * g_j for the n-k non-leading coefficients, so one LFSR step is
  // one row fetch and n-k xors.
  encode_table_.assign(static_cast<std::size_t>(q) * parity, 0);
  for (std::uint32_t f = 1; f < q; ++f) {
    std::uint16_t* row = &encode_table_[static_cast<std::size_t>(f) * parity];
    for (int j = 0; j < parity; ++j) row[j] = gf_.mul(static_cast<std::uint16_t>(f), generator_[j + 1]);
  }

  // Chien tables: table i-1 multiplies by alpha^-i, the step of locator term i from one
  // position to the next.
  chien_table_.assign(static_cast<std::size_t>(q) * code_.t(), 0);
  for (int i = 1; i <= code_.t(); ++i) {
    std::uint16_t* table = &chien_table_[static_cast<std::size_t>(i - 1) * q];
    for (std::uint32_t v = 1; v < q; ++v) table[v] = gf_.exp(gf_.log(static_cast<std::uint16_t>(v)) + order - i);
  }

  // Syndrome tables: table i multiplies by alpha^(first_root + i), the step of Horner's rule.
  root_log_.resize(parity);
  syndrome_table_.assign(static_cast<std::size_t>(q) * parity, 0);
  for (int i = 0; i < parity; ++i) {
    const long long e = (static_cast<long long>(code_.first_root) + i) % order;
    root_log_[i] = static_cast<int>(e < 0 ? e + order : e);
    std::uint16_t* table = &syndrome_table_[static_cast<std::size_t>(i) * q];
    for (std::uint32_t v = 1; v < q; ++v) table[v] = gf_.exp(gf_.log(static_cast<std::uint16_t>(v)) + root_log_[i]);
  }
}

void ReedSolomon::remainder(const std::uint16_t* word, std::uint16_t* rem) const {
  const int parity = code_.n - code_.k;
  // Long division in a zeroed window instead of a shifting LFSR register: each step is one row
  // fetch and one contiguous xor of n-k symbols, which the compiler vectorizes. The row's first
  // product feeds the very next step, so it stays in a register (`carry`) rather than making a
  // store-to-load round trip on the critical path.
  std::uint16_t* window = scratch(code_.n, parity).window.data();
  std::fill(window, window + code_.n, 0);
  const std::uint16_t* table = encode_table_.data();
  std::uint16_t carry = 0;
  for (int i = 0; i < code_.k; ++i) {
    const std::uint16_t* row = table + static_cast<std::size_t>(word[i] ^ window[i] ^ carry) * parity;
    carry = row[0];
    std::uint16_t* out = window + i + 1;
    for (int j = 1; j < parity; ++j) out[j] ^= row[j];
  }
  window[code_.k] ^= carry;
  for (int j = 0; j < parity; ++j) rem[j] = window[code_.k + j] ^ word[code_.k + j];
}

void ReedSolomon::encode(std::uint16_t* codeword) const {
  std::fill(codeword + code_.k, codeword + code_.n, 0);
  remainder(codeword, codeword + code_.k);
}

void ReedSolomon::syndromes(const std::uint16_t* rem, std::uint16_t* s) const {
  const int parity = code_.n - code_.k;
  const std::size_t q = gf_.size();
  // S_i = r(alpha^(first_root + i)) = rem(alpha^(first_root + i)), since g vanishes at its
  // roots; Horner over the n-k remainder symbols, one multiply table per root.
  for (int i = 0; i < parity; ++i) {
    const std::uint16_t* table = &syndrome_table_[static_cast<std::size_t>(i) * q];
    std::uint16_t v = 0;
    for (int j = 0; j < parity; ++j) v = table[v] ^ rem[j];
    s[i] = v;
  }
}

bool ReedSolomon::is_codeword(const std::uint16_t* codeword) const {
  const int parity = code_.n - code_.k;
  std::uint16_t* rem = scratch(code_.n, parity).sym.data();
  remainder(codeword, rem);
  return std::all_of(rem, rem + parity, [](std::uint16_t v) { return v == 0; });
}

DecodeResult ReedSolomon::decode(std::uint16_t* codeword) const {
  const int parity = code_.n - code_.k;
  const int t = code_.t();
  const int order = static_cast<int>(gf_.size() - 1);
  Scratch& work = scratch(code_.n, parity);
  std::uint16_t* rem = work.sym.data();           // received word mod g(x)
  std::uint16_t* s = rem + (parity + 1);          // S_i = r(alpha^(first_root + i))
  std::uint16_t* lambda = s + (parity + 1);       // error locator, lowest degree first
  std::uint16_t* prev = lambda + (parity + 1);    // Berlekamp–Massey's B(x)
  std::uint16_t* saved = prev + (parity + 1);
  std::uint16_t* value = saved + (parity + 1);    // error values
  std::uint16_t* term = value + (parity + 1);     // Chien terms lambda_i * alpha^(-i e)
  int* power = work.num.data();                   // error positions as powers of x

  // A zero remainder means every syndrome is zero: the common clean case stops here.
  remainder(codeword, rem);
  if (std::all_of(rem, rem + parity, [](std::uint16_t v) { return v == 0; })) return {true, 0};
  syndromes(rem, s);

  // Berlekamp–Massey over all n-k syndromes.
  std::fill(lambda, lambda + parity + 1, 0);
  std::fill(prev, prev + parity + 1, 0);
  lambda[0] = prev[0] = 1;
  int length = 0, shift = 1, prev_length = 0;  // deg B(x) <= prev_length
  std::uint16_t last = 1;
  for (int r = 0; r < parity; ++r) {
    std::uint16_t d = s[r];
    for (int i = 1; i <= length; ++i) d ^= gf_.mul(lambda[i], s[r - i]);
    if (d == 0) {
      ++shift;
      continue;
    }
    const std::uint16_t scale = gf_.div(d, last);
    const bool grow = 2 * length <= r;
    if (grow) std::copy(lambda, lambda + parity + 1, saved);
    const int top = std::min(parity, shift + prev_length);
    for (int i = shift; i <= top; ++i) lambda[i] ^= gf_.mul(scale, prev[i - shift]);
    if (grow) {
      prev_length = length;
      length = r + 1 - length;
      std::copy(saved, saved + parity + 1, prev);
      last = d;
      shift = 1;
    } else {
      ++shift;
    }
  }
  int degree = parity;
  while (degree > 0 && lambda[degree] == 0) --degree;
  if (length > t || degree != length) return {false, 0};

  // Chien search over the n powers the shortened code uses: X = alpha^e is an error locator
  // when lambda(alpha^-e) = 0, and e = n-1-j for symbol j. A single error needs no search:
  // lambda = 1 + X x.
  int found = 0;
  if (degree == 1) {
    power[0] = gf_.log(lambda[1]);
    found = power[0] < code_.n ? 1 : 0;
  } else {
    std::copy(lambda + 1, lambda + degree + 1, term);
    const std::size_t q = gf_.size();
    for (int e = 0; e < code_.n && found < degree; ++e) {
      std::uint16_t sum = 1;
      const std::uint16_t* table = chien_table_.data();
      for (int i = 0; i < degree; ++i, table += q) {
        sum ^= term[i];
        term[i] = table[term[i]];  // times alpha^-(i+1), ready for e + 1
      }
      if (sum == 0) power[found++] = e;
    }
  }
  if (found != degree) return {false, 0};

  // Forney: e_l = X^(1 - first_root) * omega(X^-1) / lambda'(X^-1), omega = S * lambda mod x^L.
  std::uint16_t* omega = saved;
  for (int i = 0; i < degree; ++i) {
    std::uint16_t o = 0;
    for (int j = 0; j <= i; ++j) o ^= gf_.mul(lambda[j], s[i - j]);
    omega[i] = o;
  }
  for (int l = 0; l < found; ++l) {
    const std::uint16_t x_inv = gf_.pow_alpha(-static_cast<long long>(power[l]));
    std::uint16_t num = 0;
    for (int i = degree - 1; i >= 0; --i) num = gf_.mul(num, x_inv) ^ omega[i];
    // Over GF(2^m) the derivative keeps only the odd terms: lambda'(x) = sum_{i odd} lambda_i x^(i-1).
    std::uint16_t den = 0;
    const std::uint16_t x_inv2 = gf_.mul(x_inv, x_inv);
    for (int i = degree - (degree % 2 == 0 ? 1 : 0); i >= 1; i -= 2) den = gf_.mul(den, x_inv2) ^ lambda[i];
    if (num == 0 || den == 0) return {false, 0};
    const long long scale = static_cast<long long>(power[l]) * (1 - static_cast<long long>(code_.first_root));
    value[l] = gf_.mul(gf_.div(num, den), gf_.pow_alpha(scale));
  }

  // The corrected word is a codeword iff the error pattern's syndromes equal the received ones
  // (syndromes are linear); a mismatch is a decoder failure, not a correction.
  for (int i = 0; i < parity; ++i) {
    std::uint16_t sum = 0;
    for (int l = 0; l < found; ++l) {
      const long long e = static_cast<long long>(root_log_[i]) * power[l] + gf_.log(value[l]);
      sum ^= gf_.exp(static_cast<int>(e % order));
    }
    if (sum != s[i]) return {false, 0};
  }
  for (int l = 0; l < found; ++l) codeword[code_.n - 1 - power[l]] ^= value[l];
  return {true, found};
}

}  // namespace xy::phy
