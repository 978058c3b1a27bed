// phy-fec-curve: codeword error ratio against pre-FEC BER for each FEC mode, against the binomial
// formula (see hw/phy/phy.hpp for the model).
#include <cmath>
#include <memory>

#include <boost/math/distributions/binomial.hpp>
#include <fmt/format.h>

#include "hw/phy/phy.hpp"
#include "kernel/clock_domain.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

using phy::PhyLink;
using phy::PhyParams;

// The BER at which the model's binomial codeword error ratio is `cer` (bisection in log space).
double ber_for_cer(const PhyParams& p, double cer) {
  double lo = 1e-9, hi = 0.2;
  for (int i = 0; i < 100; ++i) {
    const double mid = std::sqrt(lo * hi);
    (phy::codeword_error_ratio(p, mid) < cer ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

class PhyFecCurve : public Testbench {
 public:
  explicit PhyFecCurve(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    const auto points = static_cast<int>(c.integer("curve.points", 5, "points", 1, 20, "BER points per FEC mode"));
    const double min_cer = c.real("curve.min_cer", 0.01, "ratio", 1e-6, 0.9, "lowest codeword error ratio to aim a point at");
    const double max_cer = c.real("curve.max_cer", 0.5, "ratio", 1e-6, 0.99, "highest codeword error ratio to aim a point at");
    if (min_cer > max_cer)
      throw ConfigError(fmt::format("curve.min_cer = {} is above curve.max_cer = {}: must be <=", min_cer, max_cer));
    const auto failures = static_cast<double>(c.integer(
        "curve.failures", 150, "codewords", 1, 100000000, "failed codewords each point expects (from the formula)"));
    const double warmup = c.real("sim.warmup_us", 0, "us", 0, 1e9, "stats are reset at this time; results count what follows");
    if (warmup > 0)
      throw ConfigError(fmt::format("sim.warmup_us = {}: phy-fec-curve counts a fixed number of codewords per point from "
                                    "the first; a warm-up would drop some of them; allowed: 0",
                                    warmup));
    const PhyParams base = PhyParams::declare(c, "phy");
    for (const char* key : {"phy.fec", "phy.errors.ber", "phy.errors.p_good_to_bad", "phy.errors.p_bad_to_good",
                            "phy.errors.ber_bad", "phy.errors.dfe_propagation"})
      c.fix(key, "phy-fec-curve, which runs every FEC mode at random bit errors of the BERs it aims (curve.*)");
    // A codeword fails or not whatever the time it takes: these only shift when it is counted.
    for (const char* key : {"phy.rs544.encoder_ns", "phy.rs272.encoder_ns", "phy.none.encoder_ns", "phy.pma_tx_ns",
                            "phy.pma_rx_ns", "phy.max_skew_ns", "phy.cable_m", "phy.cdr_lock_us", "phy.am_period",
                            "phy.am_ns"})
      c.fix(key, "phy-fec-curve, which counts failed codewords: no latency or line time changes which fail");
    c.fix("phy.interleave", "phy-fec-curve, whose FEC modes each take their own layout (random errors: how words "
                            "share the lanes changes nothing in how many fail)");
    domain_ = std::make_unique<ClockDomain>("phy", base.period());
    for (const char* mode : {"rs544", "rs272", "none"}) {
      for (int i = 0; i < points; ++i) {
        PhyParams p = base.with_fec(mode);  // and its layout
        const double cer = points == 1 ? min_cer : min_cer * std::pow(max_cer / min_cer, double(i) / (points - 1));
        p.errors = phy::ErrorModelSpec{};
        p.errors.ber = ber_for_cer(p, cer);
        const std::string name = fmt::format("top.{}.p{}", mode, i);
        auto link = std::make_unique<PhyLink>(name, p, domain_->clock(), stats_, ctx.seed, name, nullptr, nullptr, pool_);
        // A fixed number of codewords per point (not "until k failures"), so the binomial
        // confidence interval applies as it is.
        const auto codewords = static_cast<std::uint64_t>(std::ceil(failures / cer));
        link->stop_after(~0ull, codewords);
        codewords_ += codewords;
        points_.push_back({mode, p.errors.ber, std::move(link)});
      }
    }
  }

  double done_fraction() const override { return static_cast<double>(progress()) / static_cast<double>(codewords_); }
  bool done() const override {
    for (const auto& pt : points_)
      if (!pt.link->stopped() || pt.link->codewords() < pt.link->codewords_sent()) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& pt : points_) n += pt.link->codewords();
    return n;
  }
  void check() const override {
    for (const auto& pt : points_)
      if (pt.link->decoder_failures() || pt.link->failed_codewords() != pt.link->beyond_t())
        throw CheckFailure(fmt::format("{} at ber {}: {} failed codewords, {} beyond t in the error log, {} decoder "
                                       "failures", pt.mode, pt.ber, pt.link->failed_codewords(), pt.link->beyond_t(),
                                       pt.link->decoder_failures()));
  }

  nlohmann::json summary() const override {
    nlohmann::json s = nlohmann::json::object();
    for (const char* mode : {"rs544", "rs272", "none"}) {
      nlohmann::json curve = nlohmann::json::array();
      int agreeing = 0;
      for (const auto& pt : points_) {
        if (pt.mode != mode) continue;
        const auto n = pt.link->codewords(), k = pt.link->failed_codewords();
        using boost::math::binomial_distribution;
        const double lo = binomial_distribution<>::find_lower_bound_on_p(static_cast<double>(n), static_cast<double>(k), 0.025);
        const double hi = binomial_distribution<>::find_upper_bound_on_p(static_cast<double>(n), static_cast<double>(k), 0.025);
        const double formula = phy::codeword_error_ratio(pt.link->params(), pt.ber);
        const bool inside = formula >= lo && formula <= hi;
        agreeing += inside && k >= 100;
        curve.push_back({{"pre_fec_ber", pt.ber},
                         {"codewords", n},
                         {"failed_codewords", k},
                         {"measured_cer", n ? static_cast<double>(k) / n : 0.0},
                         {"binomial_cer", formula},
                         {"ci95_low", lo},
                         {"ci95_high", hi},
                         {"within_ci95", inside}});
      }
      const PhyParams& p = points_.front().link->params();
      const PhyParams m = p.with_fec(mode);
      s[mode] = {{"curve", curve},
                 {"points_agreeing_with_100_failures", agreeing},
                 {"t", m.t()},
                 {"fec_latency_ns", to_ns((m.group_cycles() + m.decoder_cycles()) * p.period())}};
    }
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {:<6} {:>11} {:>10} {:>8} {:>11} {:>11} {:>23}\n", "fec", "pre-FEC BER",
                                  "codewords", "failed", "measured", "binomial", "95% CI");
    for (const char* mode : {"rs544", "rs272", "none"})
      for (const auto& pt : s[mode]["curve"])
        out += fmt::format("  {:<6} {:>11.3e} {:>10} {:>8} {:>11.4e} {:>11.4e}   [{:.4e}, {:.4e}]{}\n", mode,
                           pt["pre_fec_ber"].get<double>(), pt["codewords"].get<std::uint64_t>(),
                           pt["failed_codewords"].get<std::uint64_t>(), pt["measured_cer"].get<double>(),
                           pt["binomial_cer"].get<double>(), pt["ci95_low"].get<double>(), pt["ci95_high"].get<double>(),
                           pt["within_ci95"].get<bool>() ? "" : "  outside");
    return out;
  }

 private:
  struct Point {
    std::string mode;
    double ber;
    std::unique_ptr<PhyLink> link;
  };
  Stats& stats_;
  std::uint64_t codewords_ = 0;  // every point's, as asked
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<Point> points_;
};

}  // namespace

XY_TESTBENCH(PhyFecCurve, 210, "phy-fec-curve",
             "codeword error ratio vs pre-FEC BER per FEC mode, against the binomial formula")

}  // namespace xy
