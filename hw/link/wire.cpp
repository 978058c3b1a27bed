#include "hw/link/wire.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "hw/link/crc32.hpp"

namespace xy::link {
namespace {

void put(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  std::uint8_t le[8];  // one append, not a push_back (a call each) per byte
  for (int i = 0; i < bytes; ++i) le[i] = static_cast<std::uint8_t>(v >> (8 * i));
  out.insert(out.end(), le, le + bytes);
}
std::uint64_t get(const std::vector<std::uint8_t>& in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{in[at + i]} << (8 * i);
  return v;
}
constexpr std::array<std::uint8_t, 512> kRamp = [] {
  std::array<std::uint8_t, 512> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(i);
  return r;
}();

void seal(std::vector<std::uint8_t>& out) { put(out, crc32(out.data(), out.size()), kFcsBytes); }

void check_length(std::uint32_t frame_bytes) {
  if (frame_bytes < kFcsBytes + 1) throw std::logic_error("a data frame shorter than its FCS");
}

// encode_data of `frame` as if it were `frame_bytes` long.
void write_data(const Packet& frame, std::uint32_t frame_bytes, std::uint32_t seq, std::vector<std::uint8_t>& out) {
  check_length(frame_bytes);
  const std::uint32_t body = frame_bytes - kFcsBytes;
  out.clear();
  out.reserve(kDataHeaderBytes + body + kFcsBytes);  // `out` is often a frame's old, empty buffer
  out.push_back(static_cast<std::uint8_t>(WireKind::kData));
  put(out, seq, 3);
  if (frame.phantom) {
    // Byte i is (id * 131 + i) mod 256: 256-byte runs appended from a table of 0..255 twice
    // (an append is a library memmove; no zero fill first).
    const std::uint8_t* from = kRamp.data() + static_cast<std::uint8_t>(frame.id * 131);
    for (std::uint32_t left = body; left > 0;) {
      const std::uint32_t run = std::min<std::uint32_t>(256, left);
      out.insert(out.end(), from, from + run);
      left -= run;
    }
    if (body >= kPhantomEthernetBytes) {  // so that a capture shows who sent it to whom
      std::uint8_t* eth = out.data() + kDataHeaderBytes;
      for (const auto& [at, id] : {std::pair{0, frame.dst}, std::pair{6, frame.src}}) {
        std::uint8_t* mac = eth + at;  // byte stores: a local array copied in stalls on store forwarding
        mac[0] = 0x02;
        mac[1] = 0;
        for (int b = 0; b < 4; ++b) mac[2 + b] = static_cast<std::uint8_t>(id >> (24 - 8 * b));
      }
      eth[12] = 0x88;  // EtherType 0x88B5, local experimental
      eth[13] = 0xB5;
    }
  } else {
    if (frame.payload.size() != body)
      throw std::logic_error("a frame with a payload must carry bytes - 4 of it (the FCS is the port's)");
    out.insert(out.end(), frame.payload.begin(), frame.payload.end());
  }
  seal(out);
}

// An LLR set's 3 bytes after its kind: the sequence number in the low 22 bits, the kind above.
std::uint32_t llr_value(const LlrControl& c) { return (c.seq & 0x3FFFFF) | (std::uint32_t{c.kind} << 22); }
LlrControl llr_control(std::uint32_t v) { return {static_cast<LlrControl::Kind>(v >> 22), v & 0x3FFFFF}; }
FcMessage cf_update(std::uint8_t vc, std::uint32_t freed) {
  CreditUpdate u;
  u.kind = CreditUpdate::kCf;
  u.vc = vc;
  u.freed = freed;
  return FcMessage{u, std::nullopt};
}
// A control's owed bytes, from the fields seal_control kept: an LLR set's value (owed_seq); a
// CF_Update's VC and counter (vc, owed_seq).
void make_owed_llr(Packet& w) { encode_llr(llr_control(w.owed_seq), w.payload); }
void make_owed_cf(Packet& w) { encode_fc(cf_update(w.vc, w.owed_seq), w.payload); }
constexpr std::uint32_t kCfWireBytes = 2 + 4 + kFcsBytes;  // kind, VC, R_CF, FCS

}  // namespace

// A phantom frame's owed bytes, from the frame it was when sealed (`owed_bytes` counts the
// header; its payload, which a phantom frame's encoding does not read, receives them).
void detail::make_owed_data(Packet& w) { write_data(w, w.owed_bytes - kDataHeaderBytes, w.owed_seq, w.payload); }

void encode_data(const Packet& frame, std::uint32_t seq, std::vector<std::uint8_t>& out) {
  write_data(frame, frame.bytes, seq, out);
}

void seal_data(Packet& frame, std::uint32_t seq, std::vector<std::uint8_t>& scratch) {
  if (frame.phantom) {
    check_length(frame.bytes);
    // Its payload is left as it is (most often empty, and on a line unread since the frame's
    // last hop): with bytes owed nothing reads it before make_owed_data writes it anew.
    frame.owe = &detail::make_owed_data;
    frame.owed_bytes = kDataHeaderBytes + frame.bytes;
    frame.owed_seq = seq;
    return;
  }
  encode_data(frame, seq, scratch);
  frame.payload.swap(scratch);
}

void encode_llr(const LlrControl& c, std::vector<std::uint8_t>& out) {
  out.clear();
  out.push_back(static_cast<std::uint8_t>(WireKind::kLlr));
  put(out, llr_value(c), 3);
  seal(out);
}

void seal_control(Packet& frame, const LlrControl& c) {
  frame.owe = &make_owed_llr;
  frame.owed_bytes = LlrControl::kWireBytes;
  frame.owed_seq = llr_value(c);
}

void seal_control(Packet& frame, const FcMessage& m) {
  if (!m.credit || m.credit->kind != CreditUpdate::kCf) return encode_fc(m, frame.payload);
  frame.owe = &make_owed_cf;
  frame.owed_bytes = kCfWireBytes;
  frame.vc = static_cast<std::uint8_t>(m.credit->vc);
  frame.owed_seq = m.credit->freed;
}

void encode_fc(const FcMessage& m, std::vector<std::uint8_t>& out) {
  out.clear();
  if (m.pause) {
    out.push_back(static_cast<std::uint8_t>(WireKind::kPause));
    out.push_back(m.pause->enable_vector);
    for (std::uint16_t q : m.pause->quanta) put(out, q, 2);
  } else if (m.credit->kind == CreditUpdate::kCf) {
    out.push_back(static_cast<std::uint8_t>(WireKind::kCf));
    out.push_back(static_cast<std::uint8_t>(m.credit->vc));
    put(out, m.credit->freed, 4);
  } else {
    out.push_back(static_cast<std::uint8_t>(WireKind::kCc));
    out.push_back(static_cast<std::uint8_t>(m.credit->counters.size()));
    for (std::uint32_t c : m.credit->counters) put(out, c, 4);
  }
  seal(out);
}

Received parse(const std::vector<std::uint8_t>& in, bool intact) {
  Received r;
  if (in.size() < 1 + kFcsBytes) return r;
  const std::size_t body = in.size() - kFcsBytes;
  if (!intact && crc32(in.data(), body) != get(in, body, kFcsBytes)) return r;
  r.kind = static_cast<WireKind>(in[0]);
  switch (r.kind) {
    case WireKind::kData:
      if (body < kDataHeaderBytes) return r;
      r.seq = static_cast<std::uint32_t>(get(in, 1, 3));
      break;
    case WireKind::kLlr: {
      if (body != 4) return r;
      const auto v = static_cast<std::uint32_t>(get(in, 1, 3));
      if ((v >> 22) > LlrControl::kInit) return r;
      r.llr = llr_control(v);
      break;
    }
    case WireKind::kCf:
      if (body != 6) return r;
      r.fc = cf_update(in[1], static_cast<std::uint32_t>(get(in, 2, 4)));
      break;
    case WireKind::kCc: {
      if (body < 2 || body != 2 + 4 * std::size_t{in[1]}) return r;
      CreditUpdate u;
      u.kind = CreditUpdate::kCc;
      for (std::size_t vc = 0; vc < in[1]; ++vc) u.counters.push_back(static_cast<std::uint32_t>(get(in, 2 + 4 * vc, 4)));
      r.fc = FcMessage{u, std::nullopt};
      break;
    }
    case WireKind::kPause: {
      if (body != 2 + 16) return r;
      PauseFrame p;
      p.enable_vector = in[1];
      for (int q = 0; q < 8; ++q) p.quanta[q] = static_cast<std::uint16_t>(get(in, 2 + 2 * q, 2));
      r.fc = FcMessage{std::nullopt, p};
      break;
    }
    default: return r;
  }
  r.fcs_ok = true;
  return r;
}

Received parse(Packet& w) {
  if (w.intact && w.owe) {  // as sealed, so its FCS holds: what it was sealed from
    Received r;
    r.fcs_ok = true;
    if (intact_owed_data(w)) {
      r.seq = w.owed_seq;
      return r;
    }
    if (w.owe == &make_owed_llr) {
      r.kind = WireKind::kLlr;
      r.llr = llr_control(w.owed_seq);
      return r;
    }
    if (w.owe == &make_owed_cf) {
      r.kind = WireKind::kCf;
      r.fc = cf_update(w.vc, w.owed_seq);
      return r;
    }
  }
  return parse(w.bytes_now(), w.intact);
}

void unwrap_data(const std::vector<std::uint8_t>& wire, Packet& frame) {
  frame.bytes = static_cast<std::uint32_t>(wire.size() - kDataHeaderBytes);
  if (frame.phantom) frame.payload.clear();
  else frame.payload.assign(wire.begin() + kDataHeaderBytes, wire.end() - kFcsBytes);
}

}  // namespace xy::link
