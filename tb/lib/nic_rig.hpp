// NICs on a fabric of composed Lingyun ASICs: the rig of the nic-* scenarios. Each endpoint gets
// a Tianyi NIC (hw/nic/nic.hpp) on all its ports, one per plane, and a host memory that is a
// scoreboard.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hw/nic/nic.hpp"
#include "kernel/clock_domain.hpp"
#include "rtl/nic/icrc_twin.hpp"
#include "sys/lingyun/fabric.hpp"
#include "tb/lib/fabric_run.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {

// Host memory that stores nothing: endpoint `owner`'s bytes are a pattern of their addresses
// (word()) until written. A scenario says where each transfer must land (expect); every write
// is checked byte by byte against its source's pattern and its range recorded, so a wrong byte,
// a byte written twice or outside every transfer is counted. Exactly once at the right address,
// with memory for the ranges only.
class ScoreboardMemory : public nic::Memory {
 public:
  explicit ScoreboardMemory(std::uint32_t owner) : owner_(owner) {}
  // [addr, addr + size) here is to receive endpoint src's bytes from src_addr on.
  void expect(std::uint64_t addr, std::uint64_t size, std::uint32_t src, std::uint64_t src_addr) {
    regions_[addr] = {addr + size, src, src_addr};
    expected_ += size;
  }
  void read(std::uint64_t addr, std::uint8_t* out, std::size_t size) const override {
    fill(owner_, addr, out, size);
  }
  void write(std::uint64_t addr, const std::uint8_t* data, std::size_t size) override {
    written_ += size;
    auto r = regions_.upper_bound(addr);
    if (r == regions_.begin() || std::prev(r)->second.end < addr + size) {
      stray_ += size;
      return;
    }
    const Region& g = std::prev(r)->second;
    expected_bytes_.resize(size);
    fill(g.src, g.src_addr + (addr - std::prev(r)->first), expected_bytes_.data(), size);
    for (std::size_t i = 0; i < size; ++i) wrong_ += data[i] != expected_bytes_[i];
    record(addr, addr + size);
  }
  std::uint64_t expected() const { return expected_; }
  std::uint64_t written() const { return written_; }
  std::uint64_t wrong() const { return wrong_; }          // bytes not their source's
  std::uint64_t twice() const { return twice_; }          // bytes written more than once
  std::uint64_t stray() const { return stray_; }          // bytes outside every transfer
  std::uint64_t covered() const { return covered_; }      // distinct bytes written in transfers
  // Whether every byte of [addr, addr + size) has been written.
  bool holds(std::uint64_t addr, std::uint64_t size) const {
    auto it = done_.upper_bound(addr);  // written ranges are merged: one must cover it all
    return size == 0 || (it != done_.begin() && std::prev(it)->second >= addr + size);
  }
  std::string problem() const {
    if (wrong_ || twice_ || stray_ || covered_ != expected_)
      return fmt::format("endpoint {}: {} of {} bytes arrived, {} wrong, {} written twice, {} outside every transfer",
                         owner_, covered_, expected_, wrong_, twice_, stray_);
    return "";
  }

 private:
  // Eight bytes of the pattern at a time: a mix of the word's address and its owner.
  static std::uint64_t word(std::uint32_t owner, std::uint64_t index) {
    std::uint64_t x = index * 0x9E3779B97F4A7C15ull ^ (owner + 1) * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    return x * 0xBF58476D1CE4E5B9ull;
  }
  static void fill(std::uint32_t owner, std::uint64_t addr, std::uint8_t* out, std::size_t size) {
    for (std::size_t i = 0; i < size;) {
      const std::uint64_t w = word(owner, (addr + i) >> 3);
      const unsigned first = (addr + i) & 7;
      if (first == 0 && size - i >= 8) {  // a whole word: one store
        for (unsigned b = 0; b < 8; ++b) out[i + b] = static_cast<std::uint8_t>(w >> (8 * b));
        i += 8;
        continue;
      }
      for (unsigned b = first; b < 8 && i < size; ++b, ++i) out[i] = static_cast<std::uint8_t>(w >> (8 * b));
    }
  }
  struct Region {
    std::uint64_t end;
    std::uint32_t src;
    std::uint64_t src_addr;
  };
  void record(std::uint64_t a, std::uint64_t b) {  // [a, b) written: merge, counting overlap
    auto it = done_.upper_bound(a);
    if (it != done_.begin()) --it;
    std::uint64_t lo = a, hi = b;
    while (it != done_.end() && it->first <= b) {
      if (it->second >= a) {  // touches or overlaps
        const std::uint64_t o_lo = std::max(a, it->first), o_hi = std::min(b, it->second);
        if (o_hi > o_lo) twice_ += o_hi - o_lo;
        lo = std::min(lo, it->first);
        hi = std::max(hi, it->second);
        covered_ -= it->second - it->first;
        it = done_.erase(it);
      } else {
        ++it;
      }
    }
    done_[lo] = hi;
    covered_ += hi - lo;
  }
  std::uint32_t owner_;
  std::vector<std::uint8_t> expected_bytes_;  // write()'s scratch
  std::map<std::uint64_t, Region> regions_;
  std::map<std::uint64_t, std::uint64_t> done_;  // written ranges, merged
  std::uint64_t expected_ = 0, written_ = 0, wrong_ = 0, twice_ = 0, stray_ = 0, covered_ = 0;
};

// Throws ConfigError unless the NICs' longest frame fits the ports' (with the INT trailer when
// `with_telemetry`: a design runs ENCC or IGLB).
inline void check_frames_fit(nic::NicParams np, const lingyun::PortParams& pp, bool with_telemetry) {
  np.telemetry = np.telemetry || with_telemetry;
  if (np.largest_frame_bytes() > pp.max_frame_bytes)
    throw ConfigError(fmt::format("nic.mtu = {}: its frames of {} B{} exceed port.max_frame_bytes = {}", np.qp.mtu,
                                  np.largest_frame_bytes(), np.telemetry ? " (the INT trailer included)" : "",
                                  pp.max_frame_bytes));
}

struct NicRig {
  std::unique_ptr<ClockDomain> clocks;  // the switch cores' and NICs' clock, and the PHYs'
  std::unique_ptr<lingyun::Fabric> fabric;
  std::vector<std::unique_ptr<ScoreboardMemory>> memories;
  std::vector<std::unique_ptr<nic::Nic>> nics;  // by endpoint

  // `np`: each endpoint's NIC parameters, by endpoint.
  NicRig(const std::string& name, const std::string& domain, const lingyun::Topology& t, const sw::SwitchParams& sp,
         const lingyun::PortParams& pp, const std::vector<nic::NicParams>& np, Stats& stats, PacketPool& pool,
         RunContext& ctx) {
    clocks = fabric_clocks("clocks_" + domain, sp.period(), pp.phy.period());
    Clock& clock = core();
    fabric = std::make_unique<lingyun::Fabric>(name, t, sp, pp, clock, phy(), clock, stats, ctx.seed, pool, false);
    offer_fabric(ctx, *fabric, clock, phy());
    for (int e = 0; e < fabric->endpoints(); ++e) {
      memories.push_back(std::make_unique<ScoreboardMemory>(static_cast<std::uint32_t>(e)));
      std::vector<link::PortAttachment> ports;
      for (int k = 0; k < fabric->ports_of(e); ++k) ports.push_back(fabric->port(e, k));
      nics.push_back(std::make_unique<nic::Nic>(fmt::format("{}.{}.nic", name, t.nodes[t.endpoints()[e]].name),
                                                static_cast<std::uint32_t>(e), np[e], sp.port_bytes_per_cycle(),
                                                std::move(ports), pool, *memories.back(), stats,
                                                np[e].icrc_rtl ? std::make_unique<rtl::IcrcTwin>() : nullptr));
      clock.attach(*nics.back());
    }
  }
  Clock& core() const { return clocks->clock(0); }
  Clock& phy() const { return clocks->clock(1); }
  Time now() const { return core().time_of(core().now()); }
  // Data frames carried by each link from the switch endpoint e hangs on to another switch (its
  // uplinks), in link order.
  std::vector<std::uint64_t> uplink_frames(const lingyun::Topology& t, int e) const {
    const int node = t.endpoints()[static_cast<std::size_t>(e)];
    int leaf = -1;
    for (const auto& l : t.links)
      if (l.a == node || l.b == node) leaf = l.a == node ? l.b : l.a;
    std::vector<std::uint64_t> frames;
    const auto& links = fabric->links();
    for (std::size_t i = 0; i < links.size(); ++i) {
      const auto& l = t.links[i];
      const int far = l.a == leaf ? l.b : l.b == leaf ? l.a : -1;
      if (far < 0 || !t.nodes[far].is_switch) continue;
      frames.push_back(links[i]->mac(far == l.a ? 0 : 1).delivered());
    }
    return frames;
  }
  // Frames dropped: by the switches, and by NICs whose receive buffer was full.
  std::uint64_t drops() const {
    std::uint64_t n = fabric->drops();
    for (const auto& nic : nics) n += nic->rx_dropped();
    return n;
  }
};

// The application's view of one QP's deliveries, its messages laid end to end in memory from
// `base`: each must start where the one before ended and be wholly in memory when delivered;
// the bytes of any other are out of order.
class DeliveryOrder {
 public:
  DeliveryOrder(nic::QueuePair& receiver, const ScoreboardMemory& memory, std::uint64_t base) : next_(base) {
    receiver.on_delivery = [this, &memory](const nic::Delivery& d) {
      if (d.addr != next_ || !memory.holds(d.addr, d.bytes)) out_of_order_bytes_ += d.bytes;
      next_ = d.addr + d.bytes;
    };
  }
  DeliveryOrder(const DeliveryOrder&) = delete;  // the receiver holds `this`
  DeliveryOrder& operator=(const DeliveryOrder&) = delete;
  std::uint64_t out_of_order_bytes() const { return out_of_order_bytes_; }

 private:
  std::uint64_t next_;
  std::uint64_t out_of_order_bytes_ = 0;
};

// The value at fraction p of `sorted` (ascending): the sample p of the way along; 0 when empty.
inline double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(p * static_cast<double>(sorted.size())))];
}

// A nic-* testbench's side that follows its designs' rigs: progress and the fraction done as
// bytes placed, a stalled fabric, the QPs whose completions end the run, and the verdict: every
// one of those completions a success, every memory exactly what it expected.
class NicTestbench : public Testbench {
 public:
  bool done() const override {
    for (const Awaited& a : awaited_)
      if (a.qp->completions().size() < a.messages) return false;
    return true;
  }
  void check() const override {
    for (const Awaited& a : awaited_)
      for (const nic::Completion& w : a.qp->completions())
        if (w.status != nic::WcStatus::kSuccess)
          throw CheckFailure(fmt::format("{}: {} ended in {}", a.design, a.what, nic::to_string(w.status)));
    check_memories();
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& [design, rig] : rigs_)
      for (const auto& m : rig->memories) n += m->covered();
    return n;
  }
  double done_fraction() const override {
    double covered = 0, expected = 0;
    for (const auto& [design, rig] : rigs_)
      for (const auto& m : rig->memories) {
        covered += static_cast<double>(m->covered());
        expected += static_cast<double>(m->expected());
      }
    return expected > 0 ? covered / expected : 1;
  }
  std::string stall() const override {
    for (const auto& [design, rig] : rigs_)
      if (std::string s = rig->fabric->stall(); !s.empty()) return s;
    return "";
  }

 protected:
  void follow(const std::string& design, const NicRig& rig) { rigs_.emplace_back(design, &rig); }
  // The run lasts until `requester` has completed `messages` work requests; `what` names its
  // transfer in a failure ("e3 -> e0").
  void await(const std::string& design, const nic::QueuePair& requester, std::size_t messages, std::string what) {
    awaited_.push_back({design, &requester, messages, std::move(what)});
  }

 private:
  // Throws CheckFailure for the first memory that did not get exactly what it expected.
  void check_memories() const {
    for (const auto& [design, rig] : rigs_)
      for (const auto& m : rig->memories)
        if (std::string p = m->problem(); !p.empty()) throw CheckFailure(design + ": " + p);
  }
  struct Awaited {
    std::string design;
    const nic::QueuePair* qp;
    std::size_t messages;
    std::string what;
  };
  std::vector<std::pair<std::string, const NicRig*>> rigs_;
  std::vector<Awaited> awaited_;
};

}  // namespace xy
