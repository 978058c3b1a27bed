// LLR transmitter (Go-Back-N): the RTL twin of xy::link::LlrTx (hw/link/llr.hpp) — the states
// INIT, ADVANCE, REPLAY and FLUSH, the replay buffer's pointers, the replay and data-age timers.
//
// The buffer holds the unacknowledged frames in slots indexed by the low SLOT_BITS of their
// sequence number (so window <= 2^SLOT_BITS): the oldest is next_seq - kept. The frames
// themselves stay in the shell (a RAM beside this block); here each slot keeps the time it was
// sent, for data_age, and the running total of bytes accepted up to it, so that an ACK releasing
// any number of frames needs one read: kept bytes = accepted total - released total.
//
// One cycle, in the C++ model's call order, each effect seeing the state the one before left:
//   1. a control ordered set from the partner (ctl_valid: ACK or NACK release what they cover;
//      a NACK starts a replay, or FLUSHes if it would be the (replay_limit+1)-th replay without
//      progress, timer replays included; INIT is the RX's and ignored here),
//   2. the timers, when `tick` (LlrTx::tick; a shell calling the model tick() every cycle holds it
//      high, one giving the twin an edge per call raises it on the tick's),
//   3. init_take: the INIT the TX owes, if init_valid,
//   4. replay_take: the next frame to send again, if replay_valid (LlrTx::next_replay),
//   5. frame_valid: a new frame, taken when can_accept (LlrTx::can_accept, accept),
// all registered at the rising edge. Times are TIME_BITS wide and must not wrap within a run.
module xy_llr_tx #(
    parameter SEQ_BITS = 20,
    parameter SLOT_BITS = 6,
    parameter LEN_BITS = 14,
    parameter BYTES_BITS = 24,
    parameter TIME_BITS = 32,
    parameter COUNT_BITS = 32,
    parameter REPLAY_SKIP = 0,  // 1 starts a NACK's replay a frame late: only to plant a bug in a test
    parameter NACK_UNCOUNTED = 0  // 1 leaves a NACK's replay out of the replay limit (issue 12): likewise
) (
    input wire clk,
    input wire rst,
    // configuration registers, steady from reset on
    input wire [SLOT_BITS:0] window,
    input wire [BYTES_BITS-1:0] buffer_bytes,
    input wire [TIME_BITS-1:0] replay_timer,
    input wire [7:0] replay_limit,
    input wire [TIME_BITS-1:0] data_age,  // 0: off
    input wire [TIME_BITS-1:0] now,
    input wire tick,
    // 1. control from the partner: kind 0 ACK, 1 NACK, 2 INIT
    input wire ctl_valid,
    input wire [1:0] ctl_kind,
    input wire [SEQ_BITS-1:0] ctl_seq,
    // 3. the INIT to send
    input wire init_take,
    output reg init_valid,
    output wire [SEQ_BITS-1:0] init_seq,
    // 4. the next frame to replay (its slot is the low bits of replay_seq)
    input wire replay_take,
    output reg replay_valid,
    output reg [SEQ_BITS-1:0] replay_seq,
    // 5. a new frame
    input wire frame_valid,
    input wire [LEN_BITS-1:0] frame_bytes,
    output reg can_accept,
    output wire [SEQ_BITS-1:0] frame_seq,
    // observation: the state and buffer left by the last edge, and the next timer (~0: none)
    output wire [1:0] state,
    output wire [SLOT_BITS:0] kept,
    output wire [BYTES_BITS-1:0] kept_bytes,
    output reg [TIME_BITS-1:0] next_timer,
    output wire [COUNT_BITS-1:0] replays,
    output wire [COUNT_BITS-1:0] replayed_frames,
    output wire [COUNT_BITS-1:0] flushed_frames,
    output wire [COUNT_BITS-1:0] timer_replays
);
  localparam [1:0] INIT = 2'd0, ADVANCE = 2'd1, REPLAY = 2'd2, FLUSH = 2'd3;
  localparam [1:0] ACK = 2'd0, NACK = 2'd1;
  localparam SLOTS = 1 << SLOT_BITS;
  localparam CW = SLOT_BITS + 1;  // frame counts, 0..2^SLOT_BITS

  reg [1:0] st;
  reg [SEQ_BITS-1:0] next_seq;
  reg [CW-1:0] count, pos;  // frames kept; index of the next to replay
  reg [BYTES_BITS-1:0] accepted, released;  // running byte totals
  reg [TIME_BITS-1:0] last_progress;
  reg [7:0] no_progress;  // replays without progress
  reg init_pending;
  reg [COUNT_BITS-1:0] n_replays, n_replayed, n_flushed, n_timer;
  reg [BYTES_BITS-1:0] total_at[0:SLOTS-1];  // accepted bytes up to and including the slot's frame
  reg [TIME_BITS-1:0] sent_at[0:SLOTS-1];

  assign state = st;
  assign kept = count;
  assign kept_bytes = accepted - released;
  assign init_seq = next_seq;
  assign frame_seq = next_seq;
  assign replays = n_replays;
  assign replayed_frames = n_replayed;
  assign flushed_frames = n_flushed;
  assign timer_replays = n_timer;

  /* verilator lint_off UNUSEDSIGNAL */
  function automatic [SLOT_BITS-1:0] slot(input [SEQ_BITS-1:0] seq);
    slot = seq[SLOT_BITS-1:0];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // The next state, one effect after another.
  reg [1:0] s;
  reg [CW-1:0] c, p;
  reg [BYTES_BITS-1:0] rel;
  reg [TIME_BITS-1:0] lp;
  reg [7:0] np;
  reg ip, accept;
  reg [COUNT_BITS-1:0] r, rf, fl, tr;
  reg [SEQ_BITS-1:0] base, acked, from;
  // FLUSH: drop every kept frame (counted) and owe the RX an INIT.
  task automatic flush_kept;
    begin
      s = FLUSH;
      fl = fl + COUNT_BITS'(c);
      c = 0;
      rel = accepted;
      p = 0;
      np = 0;
      ip = 1;
      lp = now;
    end
  endtask
  always @* begin
    s = st; c = count; p = pos; rel = released; lp = last_progress; np = no_progress; ip = init_pending;
    r = n_replays; rf = n_replayed; fl = n_flushed; tr = n_timer;
    from = 0; init_valid = 0; replay_valid = 0; replay_seq = 0; can_accept = 0; accept = 0; next_timer = 0;
    // 1. control: both ACK and NACK say "everything before seq arrived"
    base = next_seq - SEQ_BITS'(count);
    acked = ctl_seq - base;
    if (ctl_valid && ctl_kind != 2'd2 && acked <= SEQ_BITS'(count)) begin
      if (acked != 0) begin
        rel = total_at[slot(ctl_seq - 1'b1)];
        c = count - CW'(acked);
        p = SEQ_BITS'(pos) > acked ? CW'(SEQ_BITS'(pos) - acked) : 0;
        lp = now;
        np = 0;
      end
      if (s == INIT || s == FLUSH) begin
        if (ctl_kind == ACK && ctl_seq == next_seq && s == INIT) begin
          s = ADVANCE;
          lp = now;
        end
      end else begin
        // Replay from the frame the RX expects; a NACK's replay counts toward the limit like
        // the timer's, so one replay without progress too many FLUSHes instead.
        if (ctl_kind == NACK && c != 0 && NACK_UNCOUNTED == 0 && {1'b0, np} + 9'd1 > {1'b0, replay_limit}) begin
          flush_kept();
        end else if (ctl_kind == NACK && c != 0) begin
          from = ctl_seq - (next_seq - SEQ_BITS'(c)) + SEQ_BITS'(REPLAY_SKIP);
          p = from >= SEQ_BITS'(c) ? 0 : CW'(from);
          np = np + 8'(1 - NACK_UNCOUNTED);
          s = REPLAY;
          lp = now;
          r = r + 1'b1;
        end
        if (s == REPLAY && p >= c) s = ADVANCE;
      end
    end
    // 2. timers
    if (tick && (s == INIT || s == FLUSH)) begin
      if (now >= lp + replay_timer) begin  // the INIT or its ACK was lost: again
        ip = 1;
        lp = now;
      end
    end else if (tick && c != 0) begin
      if ((data_age != 0 && now >= sent_at[slot(next_seq - SEQ_BITS'(c))] + data_age) ||
          (now >= lp + replay_timer && {1'b0, np} + 9'd1 > {1'b0, replay_limit})) begin
        flush_kept();
      end else if (now >= lp + replay_timer) begin  // replay everything
        np = np + 8'd1;
        tr = tr + 1'b1;
        p = 0;
        s = REPLAY;
        lp = now;
        r = r + 1'b1;
      end
    end
    // 3. the INIT
    init_valid = ip;
    if (init_take && ip) begin
      ip = 0;
      if (s == FLUSH) s = INIT;
    end
    // 4. a replay
    replay_valid = s == REPLAY && p < c;
    replay_seq = next_seq - SEQ_BITS'(c) + SEQ_BITS'(p);
    if (replay_take && s == REPLAY) begin
      if (p < c) begin
        p = p + 1'b1;
        rf = rf + 1'b1;
      end
      if (p >= c) s = ADVANCE;
    end
    // 5. a new frame
    can_accept = s == ADVANCE && c < window &&
                 {1'b0, accepted - rel} + {1'b0, BYTES_BITS'(frame_bytes)} <= {1'b0, buffer_bytes};
    accept = frame_valid && can_accept;
    if (accept && c == 0) lp = now;
    // The timer the state now left will next need.
    if (s == INIT || s == FLUSH) next_timer = lp + replay_timer;
    else if (c + CW'(accept) == 0) next_timer = {TIME_BITS{1'b1}};
    else begin
      next_timer = lp + replay_timer;
      if (data_age != 0 && (c == 0 ? now : sent_at[slot(next_seq - SEQ_BITS'(c))]) + data_age < next_timer)
        next_timer = (c == 0 ? now : sent_at[slot(next_seq - SEQ_BITS'(c))]) + data_age;
    end
  end

  // The slots need no reset: a slot is read only while its frame is kept, and written when taken.
  always @(posedge clk) begin
    if (rst) begin
      st <= INIT;
      next_seq <= 0;
      count <= 0;
      pos <= 0;
      accepted <= 0;
      released <= 0;
      last_progress <= 0;
      no_progress <= 0;
      init_pending <= 1;
      n_replays <= 0;
      n_replayed <= 0;
      n_flushed <= 0;
      n_timer <= 0;
    end else begin
      st <= s;
      count <= c + CW'(accept);
      pos <= p;
      released <= rel;
      last_progress <= lp;
      no_progress <= np;
      init_pending <= ip;
      n_replays <= r;
      n_replayed <= rf;
      n_flushed <= fl;
      n_timer <= tr;
      if (accept) begin
        next_seq <= next_seq + 1'b1;
        accepted <= accepted + BYTES_BITS'(frame_bytes);
        total_at[slot(next_seq)] <= accepted + BYTES_BITS'(frame_bytes);
        sent_at[slot(next_seq)] <= now;
      end
    end
  end
endmodule
