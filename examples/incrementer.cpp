// xysim-incrementer: xysim with one more scenario, `incrementer`, built outside Xingyun's tree on
// its installed package. Its block is the one of docs/architecture.md ("Writing a block"), between
// a producer that sends 0, 1, 2... and a consumer that checks it gets 1, 2, 3... in order.
#include <cstdint>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "tb/lib/scenario.hpp"
#include "tb/xysim/xysim.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock_domain.hpp"
#include "kernel/stats.hpp"

// A pipeline stage that adds one to every item and passes it on.
class Incrementer : public xy::Core {
 public:
  Incrementer(std::string name, xy::Channel<std::uint64_t>& in, xy::Channel<std::uint64_t>& out,
              xy::Stats& stats)
      : Core(std::move(name)), in_(in), out_(out),
        items_(stats.counter(this->name() + ".items", "items", "items passed on")) {}

  void eval() override {                       // read current inputs, decide
    if (in_.can_pop() && out_.can_push()) {
      out_.push(in_.pop() + 1);
      items_.add();
    }
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }  // more waiting? tick again

 private:
  xy::Channel<std::uint64_t>& in_;
  xy::Channel<std::uint64_t>& out_;
  xy::Counter& items_;
};

// Sends 0, 1, 2... one a cycle while its channel has a credit.
class Producer : public xy::Core {
 public:
  Producer(std::string name, xy::Channel<std::uint64_t>& out, std::uint64_t items)
      : Core(std::move(name)), out_(out), items_(items) {}

  void eval() override {
    if (sent_ < items_ && out_.can_push()) out_.push(sent_++);
  }
  void commit() override { set_busy(sent_ < items_); }

  std::uint64_t sent() const { return sent_; }

 private:
  xy::Channel<std::uint64_t>& out_;
  const std::uint64_t items_;
  std::uint64_t sent_ = 0;
};

// Takes an item when one is there (unless it stalls, at random) and checks it is the next of 1, 2, 3...
class Consumer : public xy::Core {
 public:
  Consumer(std::string name, xy::Channel<std::uint64_t>& in, double stall_probability, xy::Rng rng)
      : Core(std::move(name)), in_(in), stall_probability_(stall_probability), rng_(rng) {}

  void eval() override {
    if (!in_.can_pop() || rng_.chance(stall_probability_)) return;
    const std::uint64_t value = in_.pop();
    if (value != received_ + 1 && error_.empty())
      error_ = fmt::format("{} at cycle {}: item {} came out as {}, not {}", name(), now(), received_, value,
                           received_ + 1);
    ++received_;
    last_cycle_ = now();
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }

  std::uint64_t received() const { return received_; }
  xy::Cycle last_cycle() const { return last_cycle_; }
  const std::string& error() const { return error_; }

 private:
  xy::Channel<std::uint64_t>& in_;
  const double stall_probability_;
  xy::Rng rng_;
  std::uint64_t received_ = 0;
  xy::Cycle last_cycle_ = 0;
  std::string error_;
};

class IncrementerBench : public xy::Testbench {
  // Parameters (xysim params incrementer), then the wiring: one domain, channels, cores.
  const std::uint64_t items;
  const double stall;
  xy::Stats& stats;
  xy::Rng rng;
  xy::ClockDomain domain{"core", xy::period_from_mhz(1000)};
  xy::Channel<std::uint64_t> a{"top.a", domain.clock(), {/*latency*/ 2, /*credits*/ 4}};
  xy::Channel<std::uint64_t> b{"top.b", domain.clock(), {1, 2}};
  Producer producer{"top.producer", a, items};
  Incrementer inc{"top.inc", a, b, stats};
  Consumer consumer{"top.consumer", b, stall, rng};

 public:
  explicit IncrementerBench(xy::RunContext& ctx)
      : items(ctx.config.integer("incrementer.items", 1000, "items", 1, 1000000000, "items the producer sends")),
        stall(ctx.config.real("consumer.stall_probability", 0, "fraction", 0, 0.99,
                              "chance per cycle that the consumer takes nothing (back-pressure)")),
        stats(ctx.stats),
        rng(ctx.rng("top.consumer")) {
    domain.attach(producer);
    domain.attach(inc);
    domain.attach(consumer);
    a.connect(&producer, &inc);   // a push into `a` wakes `inc` at the arrival cycle
    b.connect(&inc, &consumer);   // a pop from `b` wakes `inc` when the credit it waits for is back
    producer.wake_at(0);          // a core ticks once something wakes it: start the producer

    ctx.waves.probe("top.a.credits", 8, [this] { return a.credits_available(); });
    ctx.waves.probe("top.consumer.received", 32, [this] { return consumer.received(); });
    ctx.waves.watch(domain.clock());
  }

  bool done() const override { return consumer.received() == items; }
  std::uint64_t progress() const override { return consumer.received(); }

  void check() const override {
    if (!consumer.error().empty()) throw xy::CheckFailure(consumer.error());
    if (!done()) throw xy::CheckFailure(fmt::format("top.consumer: {} of {} items received", consumer.received(), items));
  }

  nlohmann::json summary() const override {
    return {{"items_sent", producer.sent()},
            {"items_received", consumer.received()},
            {"items_incremented", stats.find_counter("top.inc.items")->value()},
            {"last_item_cycle", consumer.last_cycle()}};
  }

  std::string report() const override {
    return fmt::format("  {:<28} {:>12} / {} sent\n  {:<28} {:>12}\n", "items received", consumer.received(),
                       producer.sent(), "last item taken at cycle", consumer.last_cycle());
  }
};

xy::Scenario incrementer_scenario() {
  return {"incrementer", "producer -> Incrementer (docs/architecture.md) -> consumer that checks every item",
          [](xy::RunContext& ctx) { return std::make_unique<IncrementerBench>(ctx); }};
}

int sc_main(int argc, char** argv) {
  xy::register_scenario(incrementer_scenario());
  return xy::xysim_main(argc, argv);
}
