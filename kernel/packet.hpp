// Packets and flits. A Packet carries its header fields and, when bits matter (FEC, CRC,
// reduce ALUs, OTN), its real payload bytes; otherwise it is "phantom": only its length is
// modelled. Flits are small values that point at their packet, so moving one allocates nothing.
// Packets come from a PacketPool that recycles them (payload capacity included).
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <unordered_set>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernel/units.hpp"

namespace xy {

// A frame's journey, stage by stage. The system a frame crosses names its stages (Lingyun's:
// sys/lingyun/stages.hpp) and tells each block which stage it opens; Packet::advance closes the
// stage the frame was in and opens the next, so a frame's stage times add up to its journey.
// Stage 0 is none: outside every stage, not counted.
using Stage = std::uint8_t;
constexpr Stage kNoStage = 0;
constexpr int kStageSlots = 12;

struct Packet;

// Every field of a packet but its bytes: copied as one block when a packet is made like another.
// Laid out by use: the header and the open stage in the first cache line, what a link reads (the
// owed bytes) and the stage times in the next two, the lending bookkeeping last.
struct PacketFields {
  static constexpr std::uint16_t kDefaultEntropy = 49152;  // the first dynamic UDP port
  std::uint64_t id = 0;
  std::uint32_t src = 0, dst = 0;
  std::uint32_t bytes = 0;
  std::uint8_t vc = 0;
  bool phantom = true;               // true: `payload` is unused, only `bytes` counts
  bool bad = false;                  // marked on the way (uncorrectable FEC codeword, bad FCS)
  bool ecn_ce = false;               // ECN "congestion experienced", set by a switch's RED marking
  bool control = false;              // a link's own message (LLR ACK/NACK, credit update, pause)
  bool intact = false;               // a PHY delivered its bytes exactly as sent; the MAC reading them clears it
  std::uint8_t e2e = 0;              // end-to-end transport: 0 data, else an ACK/NACK/INIT (kind + 1)
  Stage stage = kNoStage;            // the stage it is in, since `stage_since`
  std::uint32_t psn = 0;             // end-to-end sequence number (data), or what an ACK/NACK names
  std::uint16_t entropy = kDefaultEntropy;  // what ECMP hashes as the UDP source port (RoCEv2's flow entropy)
  bool telemetry = false;            // ends in an INT trailer that switches stamp (hw/switch/telemetry.hpp)
  Time created = 0;                  // when the generator made it
  Time injected = 0;                 // when its head entered the first channel
  Time stage_since = 0;
  // Bytes made when first read: a block whose bytes follow from the packet's fields (a MAC
  // sealing a phantom frame for its line, hw/link/wire.hpp), or that are another packet's
  // (PacketPool::lend), may leave `payload` empty and `owe` set; whoever reads the bytes calls
  // bytes_now(), whoever needs their count size_now().
  void (*owe)(Packet&) = nullptr;
  std::uint32_t owed_bytes = 0, owed_seq = 0;  // their count; the maker's number (a MAC's: LLR's sequence number, a control's value)
  std::array<Time, kStageSlots> stage_time{};  // per stage, summed over the hops crossed
  // Lending (PacketPool's own): the packet whose bytes these are, how many packets owe this
  // one's, whether it was released while they still do.
  Packet* lender = nullptr;
  std::uint32_t lent = 0;
  bool released = false;
};

static_assert(sizeof(PacketFields) <= 192, "a packet's fields fill three cache lines at most");

// Whole cache lines (four): a packet is read and copied at every hop, long after its last touch,
// and one that straddled a fifth line would cost a fifth miss. Its fields fill the first three:
// a packet made like another (PacketPool::like) owing its bytes writes no more.
struct alignas(64) Packet : PacketFields {
  class PacketPool* home = nullptr;   // the pool it belongs to, for good
  std::vector<std::uint8_t> payload;  // `bytes` long when !phantom; unread while bytes are owed

  std::vector<std::uint8_t>& bytes_now() {
    if (owe) std::exchange(owe, nullptr)(*this);
    return payload;
  }
  std::size_t size_now() const { return owe ? owed_bytes : payload.size(); }

  void advance(Stage next, Time now) {
    const Stage one[] = {next};
    const Time at[] = {now};
    advance(one, at);
  }
  // advance(next[i], at[i]) for each i in turn, the packet's stage read and written once (a
  // block that knows when a frame went through each of its stages: a PHY's last group).
  template <std::size_t N>
  void advance(const Stage (&next)[N], const Time (&at)[N]) {
    Stage s = stage;
    Time since = stage_since;
    for (std::size_t i = 0; i < N; ++i) {
      stage_time[s] += at[i] - since;  // kNoStage's slot too, cleared after: no test in the loop
      s = next[i];
      since = at[i];
    }
    stage_time[kNoStage] = 0;
    stage = s;
    stage_since = since;
  }
};

struct Flit {
  Packet* packet = nullptr;
  std::uint32_t index = 0;  // beat number within the packet
  std::uint16_t bytes = 0;  // bytes of the packet in this beat (the last may be partial)
  bool head = false, tail = false;
};

// Packets are copied through the pool (copy, lend, set_aside), never by assignment: a copy must
// not share the lending bookkeeping.
class PacketPool {
 public:
  // A packet with its flags, stage times and bytes cleared (their capacity kept). Cleared here,
  // not on release: a packet released is one whose lines have mostly left the cache (a frame
  // acknowledged a flight after it was sent); one acquired is about to be written.
  Packet* acquire() {
    Packet* p = take();
    p->payload.clear();
    p->owe = nullptr;
    p->released = false;
    p->bad = false;
    p->ecn_ce = false;
    p->control = false;
    p->intact = false;
    p->e2e = 0;
    p->entropy = Packet::kDefaultEntropy;
    p->telemetry = false;
    p->stage_time = {};
    p->stage = kNoStage;
    return p;
  }
  // A packet like `from`, its bytes copied (made first if owed).
  Packet* copy(Packet* from) {
    from->bytes_now();
    Packet* c = like(from);
    c->payload = from->payload;
    return c;
  }
  // A packet like `from` whose bytes are copied only when read (Packet::bytes_now): until then
  // they are `from`'s, which stays alive, however soon it is released, until every packet that
  // owes them has read them or been released. (A frame kept for replay and the copy on its way:
  // one set of bytes between them until the copy arrives.)
  Packet* lend(Packet* from) {
    if (from->lender) from->bytes_now();  // a borrower lends its own copy
    Packet* c = like(from);
    if (!from->owe && !from->payload.empty()) {
      std::vector<std::uint8_t>().swap(c->payload);  // no buffer until it reads the bytes
      borrow_from(from, c);
    }
    return c;
  }
  // A packet for set_aside to fill: none of its lines read or written.
  Packet* take_aside() { return take(false); }
  // Makes `aside` (take_aside's) a copy of `frame` set aside, for a copy seldom read again (a
  // frame LLR keeps for a replay that seldom comes): its fields written past the cache (an
  // ordinary copy would first read lines last touched long ago); `frame`'s bytes, if it has
  // them, moved to it and lent back, so that `frame` reads them only when it must, and one set of
  // bytes stands for both until then. Reading `aside` back costs a miss.
  void set_aside(Packet* aside, Packet* frame) {
    if (frame->lender || frame->lent) throw std::logic_error("a frame set aside that borrows or lends bytes");
    const bool lends = !frame->owe && !frame->payload.empty();  // owed bytes are made from the fields
#if defined(__SSE2__)
    // The fields but the lending bookkeeping (the last 16 bytes) as they are; that as the copy's.
    static_assert(sizeof(PacketFields) % 16 == 0 && alignof(Packet) % 16 == 0, "whole 16-byte stores");
    static_assert(offsetof(PacketFields, lender) == sizeof(PacketFields) - 16 &&
                      offsetof(PacketFields, lent) == sizeof(PacketFields) - 8 &&
                      offsetof(PacketFields, released) == sizeof(PacketFields) - 4,
                  "the lending bookkeeping last");
    auto* out = reinterpret_cast<__m128i*>(static_cast<PacketFields*>(aside));
    const auto* in = reinterpret_cast<const __m128i*>(static_cast<const PacketFields*>(frame));
    constexpr std::size_t kLast = sizeof(PacketFields) / 16 - 1;
    for (std::size_t i = 0; i < kLast; ++i) _mm_stream_si128(out + i, _mm_loadu_si128(in + i));
    _mm_stream_si128(out + kLast, _mm_set_epi64x(lends ? 1 : 0, 0));  // lent = lends, no lender, not released
#else
    static_cast<PacketFields&>(*aside) = *frame;
    aside->lent = lends ? 1 : 0;
#endif
    if (!lends) return;
    aside->payload.swap(frame->payload);
    std::vector<std::uint8_t>().swap(frame->payload);  // no buffer until it reads the bytes
    owe_bytes_of(aside, frame);
    ++lenders_;
  }
  // Frees a packet set aside, without reading it while no packet lends its bytes (it was written
  // past the cache).
  void release_aside(Packet* p) {
    if (lenders_) return release(p);
    free_.push_back(p);
  }
  void release(Packet* p) {
    if (p->lender) let_go(*p);
    if (p->lent) {  // bytes still owed: freed when the last borrower lets go
      p->released = true;
      return;
    }
    free_.push_back(p);
  }
  // Frees the packets not in use: for a testbench whose phases need many packets one after
  // another, so that a later phase's other allocations reuse their memory.
  void trim() {
    const std::unordered_set<const Packet*> unused(free_.begin(), free_.end());
    store_.erase(std::remove_if(store_.begin(), store_.end(), [&](const auto& p) { return unused.count(p.get()) > 0; }),
                 store_.end());
    store_.shrink_to_fit();
    std::vector<Packet*>().swap(free_);
  }
  std::size_t allocated() const { return store_.size(); }
  std::size_t in_use() const { return store_.size() - free_.size(); }

 private:
  // A packet as its last use left it: `like` and `acquire` write what it needs.
  Packet* take(bool prefetch_next = true) {
    if (free_.empty()) {
      store_.push_back(std::make_unique<Packet>());
      store_.back()->home = this;
      return store_.back().get();
    }
    Packet* p = free_.back();
    free_.pop_back();
    // The next one asked for is likely the one below it, released long ago: its lines are
    // asked of memory now, to be written by the next acquire or copy.
    if (prefetch_next && !free_.empty())
      for (int line = 0; line < 4; ++line) __builtin_prefetch(reinterpret_cast<const char*>(free_.back()) + 64 * line, 1);
    return p;
  }
  // A packet with `from`'s fields, not lent or lending, and an empty payload (of its own
  // capacity); or, when it owes its bytes as `from` does, the payload its last use left, which
  // nothing reads before the bytes are made into it.
  Packet* like(Packet* from) {
    Packet* c = take();
    static_cast<PacketFields&>(*c) = *from;
    if (!c->owe) c->payload.clear();
    c->lender = nullptr;
    c->lent = 0;
    c->released = false;
    return c;
  }
  // `borrower` owes `lender`'s bytes from here on (its own payload left empty, of no capacity
  // or of what the bytes were moved out of).
  static void borrow_from(Packet* lender, Packet* borrower) {
    owe_bytes_of(lender, borrower);
    if (lender->lent++ == 0) ++lenders_;
  }
  static void owe_bytes_of(Packet* lender, Packet* borrower) {
    borrower->owe = &borrow;
    borrower->owed_bytes = static_cast<std::uint32_t>(lender->payload.size());
    borrower->lender = lender;
  }
  static void borrow(Packet& c) {
    c.payload = c.lender->payload;
    let_go(c);
  }
  static void let_go(Packet& c) {
    Packet* l = std::exchange(c.lender, nullptr);
    if (l->lent == 0) throw std::logic_error("a packet owes the bytes of one that lent none (recycled?)");
    if (--l->lent > 0) return;
    --lenders_;
    if (l->released) l->home->release(l);
  }

  std::vector<std::unique_ptr<Packet>> store_;
  std::vector<Packet*> free_;
  // Packets whose bytes others owe, in every pool: a pool hands out whatever was released to it,
  // so a copy set aside may belong to another.
  static inline std::size_t lenders_ = 0;
};

}  // namespace xy
