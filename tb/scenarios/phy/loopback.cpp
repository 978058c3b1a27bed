// phy-loopback: frames through one PHY direction (TX PCS and FEC, noisy PAM4 lanes, RX FEC and
// PCS), checked against the error log (see hw/phy/phy.hpp for the model).
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "hw/phy/phy.hpp"
#include "kernel/clock_domain.hpp"
#include "tb/lib/figure.hpp"
#include "tb/lib/frames.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

using phy::PhyLink;
using phy::PhyParams;

nlohmann::json fec_stats(const Stats& stats, const std::string& name) {
  auto v = [&](const std::string& key) { return stats.find_counter(name + "." + key)->value(); };
  nlohmann::json j;
  j["codewords"] = v("fec.codewords");
  j["corrected_codewords"] = v("fec.corrected_codewords");
  j["corrected_symbols"] = v("fec.corrected_symbols");
  j["uncorrectable_codewords"] = v("fec.uncorrectable_codewords");
  j["miscorrected_codewords"] = v("fec.miscorrected_codewords");
  j["beyond_t_codewords"] = v("fec.beyond_t_codewords");
  j["decoded_codewords"] = v("fec.decoded_codewords");
  const double line = static_cast<double>(v("line_bits")), message = static_cast<double>(v("fec.message_bits"));
  j["pre_fec_ber"] = line ? static_cast<double>(v("pre_fec_bit_errors")) / line : 0.0;
  j["post_fec_ber"] = message ? static_cast<double>(v("post_fec_bit_errors")) / message : 0.0;
  return j;
}

class PhyLoopback : public Testbench {
 public:
  explicit PhyLoopback(RunContext& ctx)
      : p_(PhyParams::declare(ctx.config, "phy")), stats_(ctx.stats),
        frames_(static_cast<std::uint64_t>(ctx.config.integer("traffic.frames", 20000, "frames", 1, 1000000000,
                                                                "frames to send"))),
        domain_("phy", p_.period()),
        to_tx_("top.phy.in", domain_.clock(), ChannelSpec{1, 4, 1, 2}),
        from_rx_("top.phy.out", domain_.clock(), ChannelSpec{1, 0, 1, 2}),
        link_("top.phy", p_, domain_.clock(), ctx.stats, ctx.seed, "top.phy", &to_tx_, &from_rx_, pool_) {
    Config& c = ctx.config;
    const double load = c.real("traffic.load", 0.5, "fraction", 0.0001, 1, "offered load, fraction of PHY payload capacity");
    const auto [min_bytes, max_bytes] = FrameSizes::declare(c, {64, 1518}, 1, 16384);
    // Capacity in 66b blocks per cycle; a frame takes blocks_for_frame() of them.
    const double blocks_per_cycle =
        static_cast<double>(p_.blocks_per_codeword() * p_.interleave) / static_cast<double>(p_.group_cycles());
    const double mean_blocks = static_cast<double>(phy::blocks_for_frame((min_bytes + max_bytes) / 2));
    const double mean_gap = std::max(0.0, mean_blocks / (load * blocks_per_cycle) - 1);
    source_ = std::make_unique<FrameSource>("top.source", to_tx_, pool_, scoreboard_, ctx.rng("top.source"), frames_,
                                            min_bytes, max_bytes, mean_gap);
    sink_ = std::make_unique<FrameSink>("top.sink", from_rx_, pool_, scoreboard_);
    domain_.attach(*source_);
    domain_.attach(*sink_);
    to_tx_.connect(source_.get(), &link_.tx_core());
    from_rx_.connect(&link_.rx_core(), sink_.get());
    source_->wake_at(0);
    ctx.waves.probe("top.phy.frames_in", 32, [this] { return link_.frames_in(); });
    ctx.waves.probe("top.phy.frames_out", 32, [this] { return link_.frames_out(); });
    ctx.waves.probe("top.phy.codewords", 32, [this] { return link_.codewords(); });
    ctx.waves.probe("top.phy.uncorrectable", 32, [this] { return link_.uncorrectable(); });
    ctx.waves.watch(domain_.clock());
  }

  bool done() const override { return scoreboard_.received() >= frames_; }
  double done_fraction() const override { return static_cast<double>(scoreboard_.received()) / frames_; }
  std::string waiting_for() const override {
    if (source_->made() < frames_) return "";
    return fmt::format("the last {} of {} frames through the PHY", frames_ - scoreboard_.received(), frames_);
  }
  std::uint64_t progress() const override { return link_.codewords(); }
  void check() const override {
    if (!sink_->first_error().empty()) throw CheckFailure(sink_->first_error());
    if (!done()) throw CheckFailure(fmt::format("top.sink: {} of {} frames received", scoreboard_.received(), frames_));
    if (link_.decoder_failures())
      throw CheckFailure(fmt::format("top.phy: {} correctable codewords were not restored", link_.decoder_failures()));
    // Every codeword the error log says is beyond t was flagged or miscorrected, and no other.
    if (link_.failed_codewords() != link_.beyond_t())
      throw CheckFailure(fmt::format("top.phy: {} codewords failed but the error log has {} beyond t",
                                     link_.failed_codewords(), link_.beyond_t()));
  }

  nlohmann::json summary() const override {
    const Time period = domain_.clock().period();
    nlohmann::json s;
    s["fec"] = p_.fec;
    s["lanes"] = p_.lanes;
    s["accumulation_cycles"] = p_.group_cycles();
    s["decoder_cycles"] = p_.decoder_cycles();
    s["configured_fec_latency_cycles"] = p_.group_cycles() + p_.decoder_cycles();
    s["fec_latency_cycles"] = link_.measured_fec_latency();
    s["fec_latency_ns"] = to_ns(link_.measured_fec_latency() * period);
    s["clock_period_ps"] = static_cast<double>(period) / kPs;
    s["frames_sent"] = source_->made();
    s["frames_received"] = scoreboard_.received();
    s["frames_marked_bad"] = sink_->bad();
    s["frames_silently_corrupted"] = sink_->silent();
    s["codewords"] = fec_stats(stats_, "top.phy");
    s["frame_latency"] = stats_.find_histogram("top.phy.frame_latency")->to_json();
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    const auto& cw = s["codewords"];
    std::string out;
    out += fmt::format("  {:<26} {} over {} lanes, codec {}\n", "FEC", p_.fec, p_.lanes, p_.fast ? "fast" : "exact");
    out += fmt::format("  {:<26} {} cycles = {:.2f} ns (accumulation {} + decoder {}; configured {})\n", "FEC latency",
                       s["fec_latency_cycles"].get<Cycle>(), s["fec_latency_ns"].get<double>(),
                       p_.group_cycles(), p_.decoder_cycles(), s["configured_fec_latency_cycles"].get<Cycle>());
    out += fmt::format("  {:<26} {} sent, {} received, {} marked bad, {} silently corrupted\n", "frames",
                       source_->made(), scoreboard_.received(), sink_->bad(), sink_->silent());
    out += fmt::format("  {:<26} {} ({} corrected, {} uncorrectable, {} miscorrected; {} beyond t in the log)\n",
                       "codewords", cw["codewords"].get<std::uint64_t>(), cw["corrected_codewords"].get<std::uint64_t>(),
                       cw["uncorrectable_codewords"].get<std::uint64_t>(),
                       cw["miscorrected_codewords"].get<std::uint64_t>(), cw["beyond_t_codewords"].get<std::uint64_t>());
    out += fmt::format("  {:<26} pre-FEC {:.3g}, post-FEC {:.3g}\n", "bit error ratio", cw["pre_fec_ber"].get<double>(),
                       cw["post_fec_ber"].get<double>());
    const auto& l = s["frame_latency"];
    out += fmt::format("  {:<26} p50 {} p99 {} max {} ns\n", "frame latency", figure(l["p50_ns"], 1),
                       figure(l["p99_ns"], 1), figure(l["max_ns"], 1));
    return out;
  }

 private:
  PhyParams p_;
  Stats& stats_;
  std::uint64_t frames_;
  ClockDomain domain_;
  PacketPool pool_;
  Scoreboard scoreboard_;
  Channel<Packet*> to_tx_, from_rx_;
  PhyLink link_;
  std::unique_ptr<FrameSource> source_;
  std::unique_ptr<FrameSink> sink_;
};

}  // namespace

XY_TESTBENCH(PhyLoopback, 200, "phy-loopback",
             "frames through TX PCS/FEC, noisy PAM4 lanes, RX FEC/PCS; checked against the error log")

}  // namespace xy
