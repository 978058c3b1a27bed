// The Lingyun switch's reduce engine as a clocked block: ALU ports that take reduction
// contributions from the crossbar, an aggregation table (sw::ReduceTable, which does the
// arithmetic), a pool of ALUs that every port and group shares, and a multicast of each result
// back out of its group's ALU ports.
//
// Cycle contract (cycles of the switch clock):
// - A contribution is a packet on ALU port p's input whose payload is one chunk of a reduction:
//   `id` - 1 is the chunk number, the port says which group and member it is (add_group).
// - Each cycle the engine looks, the ports are visited in round-robin order, starting after the
//   last port whose contribution started;
//   the packet at a port's head starts at once if all of these hold, and otherwise waits there
//   with those behind it in the port's input queue (never a drop):
//     * an ALU is free: `alus` ALUs of `lanes` elements each, shared by every port and group;
//     * its chunk has a slot, or one of the table's `slots` is free. A slot is held from the
//       chunk's first contribution until its result has left the ALU.
// - Arrival order: every contribution, the first included (converted into the accumulator),
//   holds an ALU for cycles_for(bytes) = ceil(elements / lanes) cycles. Passes into one chunk
//   may run on several ALUs at once, each chained a cycle behind the one before it (it adds a
//   lane group once the previous pass has written it), so a pass ends no earlier than a cycle
//   after the chunk's previous one, and holds its ALU until then. Member order: a contribution
//   is stored at once, and the last one holds an ALU for group size x cycles_for(bytes)
//   cycles, the passes that add them all in member order.
// - The cycle the chunk's last pass ends, its result is queued to every member's ALU port; each
//   port sends its queue in order, one packet whenever the output channel takes one (id as the
//   contributions', src and dst the ALU port).
// Exact: ALU and slot occupancy, the order of additions and the bits (sw::ReduceTable), the
// contention between ports and groups. Abstracted: an ALU's pipeline depth (a pass ends
// cycles_for(bytes) after it starts, with no fill latency), the table lookup (always one cycle),
// and a chunk never falls back to the hosts: it waits for a slot.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hw/switch/reduce.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/packet.hpp"

namespace xy::sw {

class ReduceEngine : public Core {
 public:
  // Port p takes contributions on in[p] and sends its group's results on out[p]. Throws
  // std::invalid_argument for alus outside 1..4096 or in and out of different sizes.
  ReduceEngine(std::string name, ReduceConfig config, int alus, std::vector<Channel<Packet*>*> in,
               std::vector<Channel<Packet*>*> out, PacketPool& pool);

  // Group `group`'s member m contributes on ALU port ports[m]. Throws std::invalid_argument for a
  // port out of range or already in a group, and as ReduceTable::add_group does.
  void add_group(std::uint32_t group, const std::vector<int>& ports);

  void eval() override;
  void commit() override;

  const ReduceTable& table() const { return table_; }
  int alus() const { return alus_; }
  std::uint64_t alu_busy_cycles() const { return alu_busy_cycles_; }  // summed over the ALUs
  // Cycles contributions waited at their ports' heads, summed, by what first held each: a free
  // slot, a free ALU (counted as each wait ends).
  std::uint64_t slot_wait_cycles() const { return slot_wait_; }
  std::uint64_t alu_wait_cycles() const { return alu_wait_; }
  int peak_slots() const { return peak_slots_; }                 // slots held at once, draining included

 private:
  struct Member {
    std::uint32_t group = 0, member = 0;
    bool listed = false;
  };
  struct Pass {  // a contribution on an ALU
    Cycle ends;
    std::uint64_t key;
    std::shared_ptr<const std::vector<std::uint8_t>> result;  // its chunk's, when the last pass
    std::uint32_t group;
    std::uint64_t chunk;
    bool operator>(const Pass& o) const { return ends > o.ends; }
  };
  struct Result {
    std::uint64_t chunk;
    std::shared_ptr<const std::vector<std::uint8_t>> data;
  };
  static std::uint64_t key_of(std::uint32_t group, std::uint64_t chunk) { return chunk << 16 | group; }
  bool try_start(int port);  // starts the contribution at the port's head, if it can

  ReduceTable table_;
  int alus_;
  std::vector<Channel<Packet*>*> in_, out_;
  PacketPool& pool_;
  struct Waiting {
    Cycle since = 0;  // the cycle its head began to wait, + 1; 0: not waiting
    bool for_alu = false;
  };
  std::vector<Member> members_;                 // by port
  std::vector<Waiting> waiting_;                // by port
  std::vector<std::vector<int>> group_ports_;   // by group: its members' ports
  std::priority_queue<Pass, std::vector<Pass>, std::greater<Pass>> passes_;  // on the ALUs
  std::unordered_map<std::uint64_t, Cycle> adding_;  // arrival order: when a chunk's last pass so far ends
  int draining_ = 0;                            // chunks complete in the table, last pass still running
  std::vector<std::deque<Result>> results_;     // by port
  int next_port_ = 0;  // where the round robin over the ports starts
  bool more_ = false;  // a port that started one this cycle has another ready next cycle
  std::uint64_t alu_busy_cycles_ = 0, slot_wait_ = 0, alu_wait_ = 0;
  int peak_slots_ = 0;
};

}  // namespace xy::sw
