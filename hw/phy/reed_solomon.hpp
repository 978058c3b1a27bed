// Reed–Solomon codec over GF(2^m), generic over (n, k), systematic, shortened from (2^m - 1).
//
// Symbol order: codeword[0] is the highest-degree coefficient and the first symbol sent;
// codeword[0..k-1] is the message, codeword[k..n-1] the parity. The generator polynomial is
// g(x) = prod_{i=0}^{n-k-1} (x - alpha^(first_root + i)). Decoding: syndromes,
// Berlekamp–Massey, Chien search, Forney. A word with more than t errors is either flagged
// uncorrectable or (rarely) miscorrected to another valid codeword; a word is never reported
// corrected unless the result is a codeword.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace xy::phy {

// Parameters of a code. Sources for the presets are in docs/phy.md.
struct RsCode {
  std::string name;
  int m;                     // bits per symbol
  std::uint32_t field_poly;  // primitive polynomial, bit i = coefficient of x^i
  int n, k;                  // symbols per codeword, message symbols
  int first_root;            // generator roots alpha^first_root ...
  int t() const { return (n - k) / 2; }
};

// IEEE 802.3 Clause 91/119 "KP4": RS(544,514) over GF(2^10), x^10 + x^3 + 1, roots alpha^0..29.
RsCode rs544();
// Low-latency RS(272,257+1): 257 data symbols plus one pad symbol, 14 parity, t = 7, same field.
RsCode rs272();
// ITU-T G.709 Annex A: RS(255,239) over GF(2^8), x^8 + x^4 + x^3 + x^2 + 1, roots alpha^0..15.
RsCode rs255();

class GaloisField {
 public:
  GaloisField(int m, std::uint32_t poly);  // throws std::invalid_argument if poly is not primitive
  int m() const { return m_; }
  std::uint32_t size() const { return size_; }  // 2^m
  std::uint16_t exp(int i) const { return exp_[i]; }    // alpha^i, 0 <= i < 2 * (2^m - 1)
  int log(std::uint16_t a) const { return log_[a]; }    // a != 0
  std::uint16_t mul(std::uint16_t a, std::uint16_t b) const {
    return (a && b) ? exp_[log_[a] + log_[b]] : 0;
  }
  std::uint16_t div(std::uint16_t a, std::uint16_t b) const;  // b != 0
  std::uint16_t inv(std::uint16_t a) const;                    // a != 0
  std::uint16_t pow_alpha(long long e) const;                  // alpha^e, any integer e

 private:
  int m_;
  std::uint32_t size_;
  std::vector<std::uint16_t> exp_;
  std::vector<int> log_;
};

struct DecodeResult {
  bool ok = true;         // false: uncorrectable, the word is left as received
  int corrected = 0;      // symbols changed
};

class ReedSolomon {
 public:
  explicit ReedSolomon(RsCode code);
  const RsCode& code() const { return code_; }
  const GaloisField& field() const { return gf_; }
  int n() const { return code_.n; }
  int k() const { return code_.k; }
  int t() const { return code_.t(); }

  // Fills codeword[k..n-1] from codeword[0..k-1]. Every symbol must be below 2^m.
  void encode(std::uint16_t* codeword) const;
  // Corrects codeword in place when it can.
  DecodeResult decode(std::uint16_t* codeword) const;
  // True when every syndrome is zero (the word is a codeword).
  bool is_codeword(const std::uint16_t* codeword) const;

 private:
  // rem = word mod g(x), i.e. the received parity xor the parity of word[0..k-1]; n-k symbols.
  void remainder(const std::uint16_t* word, std::uint16_t* rem) const;
  // All n-k syndromes from the remainder.
  void syndromes(const std::uint16_t* rem, std::uint16_t* s) const;
  RsCode code_;
  GaloisField gf_;
  std::vector<std::uint16_t> generator_;  // n-k+1 coefficients, highest degree first (monic)
  std::vector<std::uint16_t> encode_table_;    // row f: f * generator_[1..n-k], 2^m rows
  std::vector<std::uint16_t> syndrome_table_;  // table i: v * alpha^(first_root + i), 2^m entries
  std::vector<int> root_log_;                  // (first_root + i) mod (2^m - 1)
  std::vector<std::uint16_t> chien_table_;     // table i-1: v * alpha^-i for i = 1..t, 2^m entries
};

}  // namespace xy::phy
