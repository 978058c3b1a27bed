// LLR receiver (Go-Back-N): the RTL twin of xy::link::LlrRx (hw/link/llr.hpp) — the states
// SEND_ACKS, SEND_NACK and NACK_SENT, the expected sequence number, the ACK coalescing (every
// ack_every frames or ack_timer after the first unacknowledged one) and the NACK timer.
//
// One cycle, in the C++ model's call order, each effect seeing the state the one before left:
//   1. frame_valid: a data frame with frame_seq and whether its FCS was good; `verdict` says
//      what to do with it (0 deliver, 1 duplicate, 2 out of order, 3 bad FCS) (LlrRx::on_frame),
//   2. init_valid: an INIT from the partner's TX (LlrRx::on_control),
//   3. ctl_take: the control ordered set due now, if ctl_valid: a NACK before an ACK (LlrRx::poll),
// all registered at the rising edge. Times are TIME_BITS wide and must not wrap within a run.
module xy_llr_rx #(
    parameter SEQ_BITS = 20,
    parameter TIME_BITS = 32,
    parameter COUNT_BITS = 32,
    parameter ACK_SLACK = 0  // 1 sends the coalesced ACK a frame early: only to plant a bug in a test
) (
    input wire clk,
    input wire rst,
    // configuration registers, steady from reset on
    input wire [15:0] ack_every,
    input wire [TIME_BITS-1:0] ack_timer,
    input wire [TIME_BITS-1:0] nack_timer,
    input wire [TIME_BITS-1:0] now,
    // 1. a data frame
    input wire frame_valid,
    input wire [SEQ_BITS-1:0] frame_seq,
    input wire frame_fcs_ok,
    output reg [1:0] verdict,
    // 2. INIT
    input wire init_valid,
    input wire [SEQ_BITS-1:0] init_seq,
    // 3. the control to send: kind 0 ACK, 1 NACK
    input wire ctl_take,
    output reg ctl_valid,
    output reg [1:0] ctl_kind,
    output reg [SEQ_BITS-1:0] ctl_seq,
    // observation: the state left by the last edge, and the next timer (~0: none)
    output wire [1:0] state,
    output wire [SEQ_BITS-1:0] expected,
    output reg [TIME_BITS-1:0] next_timer,
    output wire [COUNT_BITS-1:0] nacks
);
  localparam [1:0] SEND_ACKS = 2'd0, SEND_NACK = 2'd1, NACK_SENT = 2'd2;
  localparam [1:0] DELIVER = 2'd0, DUPLICATE = 2'd1, OUT_OF_ORDER = 2'd2, BAD_FCS = 2'd3;
  localparam [SEQ_BITS-1:0] HALF = SEQ_BITS'(1) << (SEQ_BITS - 1);

  reg [1:0] st;
  reg [SEQ_BITS-1:0] exp_seq, last_ahead;
  reg [31:0] unacked;
  reg [TIME_BITS-1:0] first_unacked, nack_sent;
  reg ack_now, gap;  // an ACK is owed at once; a frame came out of order or damaged since the NACK
  reg [COUNT_BITS-1:0] n_nacks;

  assign state = st;
  assign expected = exp_seq;
  assign nacks = n_nacks;

  reg [1:0] s;
  reg [SEQ_BITS-1:0] e, la, ahead;
  reg [31:0] u;
  reg [TIME_BITS-1:0] fu, ns;
  reg an, g;
  reg [COUNT_BITS-1:0] nn;
  always @* begin
    s = st; e = exp_seq; la = last_ahead; u = unacked; fu = first_unacked; ns = nack_sent; an = ack_now;
    g = gap; nn = n_nacks;
    verdict = DELIVER; ctl_valid = 0; ctl_kind = 0; ctl_seq = 0; next_timer = 0;
    // 1. a data frame
    ahead = frame_seq - e;
    if (frame_valid) begin
      if (!frame_fcs_ok) begin
        verdict = BAD_FCS;
        if (s != NACK_SENT) s = SEND_NACK;
        g = 1;
      end else if (ahead == 0) begin
        verdict = DELIVER;
        e = e + 1'b1;
        s = SEND_ACKS;
        if (u == 0) fu = now;
        u = u + 1;
      end else if (ahead < HALF) begin  // a frame is missing before this one
        verdict = OUT_OF_ORDER;
        if (s != NACK_SENT || ahead <= la) s = SEND_NACK;
        la = ahead;
        g = 1;
      end else begin  // a replayed frame we already have: our ACK may have been lost
        verdict = DUPLICATE;
        an = 1;
      end
    end
    // 2. INIT: numbering restarts
    if (init_valid) begin
      e = init_seq;
      s = SEND_ACKS;
      u = 0;
      an = 1;
    end
    // 3. the control due: a NACK, or a (coalesced) ACK
    if (s == SEND_NACK || (s == NACK_SENT && g && now >= ns + nack_timer)) begin
      ctl_valid = 1;
      ctl_kind = 2'd1;
      ctl_seq = e;
      if (ctl_take) begin
        s = NACK_SENT;
        ns = now;
        la = 0;
        g = 0;
        nn = nn + 1'b1;
        u = 0;  // the NACK acknowledges everything before it
      end
    end else if (an || u + ACK_SLACK >= {16'd0, ack_every} || (u != 0 && now >= fu + ack_timer)) begin
      ctl_valid = 1;
      ctl_kind = 2'd0;
      ctl_seq = e;
      if (ctl_take) begin
        an = 0;
        u = 0;
      end
    end
    // The timer the state now left will next need.
    next_timer = {TIME_BITS{1'b1}};
    if (s == NACK_SENT && g) next_timer = ns + nack_timer;
    if (u != 0 && fu + ack_timer < next_timer) next_timer = fu + ack_timer;
  end

  always @(posedge clk) begin
    if (rst) begin
      st <= SEND_ACKS;
      exp_seq <= 0;
      last_ahead <= 0;
      unacked <= 0;
      first_unacked <= 0;
      nack_sent <= 0;
      ack_now <= 0;
      gap <= 0;
      n_nacks <= 0;
    end else begin
      st <= s;
      exp_seq <= e;
      last_ahead <= la;
      unacked <= u;
      first_unacked <= fu;
      nack_sent <= ns;
      ack_now <= an;
      gap <= g;
      n_nacks <= nn;
    end
  end
endmodule
