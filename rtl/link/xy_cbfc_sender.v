// CBFC credit engine, sending end of one port: the RTL twin of xy::link::CbfcSender
// (hw/link/cbfc.hpp). Per VC, wrap-around counters of credits consumed (S_CC) and freed (S_CF);
// a frame may go when its credits, ceil((bytes + OVERHEAD) / 2^CREDIT_SHIFT) and at least one,
// fit in buffer_credits - (S_CC - S_CF). A CF_Update is accepted unless it would free more than
// is in use (an old counter looks like that modulo the range). A CC_Update is due once `now`
// reaches cc_next, the first at cycle resync_period; when it is taken, the next is due
// resync_period after.
//
// The C++ model's call order within a cycle: the CF_Update is applied first, then the frame is
// checked against the counters it leaves, then the CC timer is polled; all take effect at the
// rising edge. `now` is the chip's cycle count rather than a counter in here, so a shell may
// give the twin extra edges within one cycle (a second frame or CF_Update, as the model allows)
// or none on idle cycles, and the timer stays right. Credits are a power of two here
// (CREDIT_SHIFT), and every VC has the same buffer.
module xy_cbfc_sender #(
    parameter VCS = 8,
    parameter VC_BITS = 3,
    parameter COUNTER_BITS = 20,
    parameter CREDIT_SHIFT = 7,
    parameter OVERHEAD = 0,
    parameter BYTES_BITS = 14,
    parameter TIMER_BITS = 32
) (
    input wire clk,
    input wire rst,
    // configuration registers, steady from reset on
    input wire [COUNTER_BITS-1:0] buffer_credits,
    input wire [TIMER_BITS-1:0] resync_period,
    input wire [TIMER_BITS-1:0] now,
    // a frame asks to go on VC frame_vc; it goes (consumes credits) when frame_valid && can_send
    input wire frame_valid,
    input wire [VC_BITS-1:0] frame_vc,
    input wire [BYTES_BITS-1:0] frame_bytes,
    output wire can_send,
    // a CF_Update from the receiver
    input wire cf_valid,
    input wire [VC_BITS-1:0] cf_vc,
    input wire [COUNTER_BITS-1:0] cf_counter,
    output wire cf_accepted,
    // a CC_Update is due; cc_taken when it goes
    output wire cc_due,
    input wire cc_taken,
    output wire [TIMER_BITS-1:0] cc_next,
    // observation of one VC's counters
    input wire [VC_BITS-1:0] probe_vc,
    output wire [COUNTER_BITS-1:0] probe_consumed,
    output wire [COUNTER_BITS-1:0] probe_freed
);
  reg [COUNTER_BITS-1:0] consumed[0:VCS-1];
  reg [COUNTER_BITS-1:0] freed[0:VCS-1];
  reg [TIMER_BITS-1:0] next_cc;

  // CF_Update: accepted unless it frees more than is in use.
  wire [COUNTER_BITS-1:0] cf_in_use = consumed[cf_vc] - freed[cf_vc];
  wire [COUNTER_BITS-1:0] cf_delta = cf_counter - freed[cf_vc];
  assign cf_accepted = cf_valid && cf_delta <= cf_in_use;

  // The frame sees the counters after this cycle's CF_Update.
  wire [COUNTER_BITS-1:0] freed_now = (cf_accepted && cf_vc == frame_vc) ? cf_counter : freed[frame_vc];
  wire [COUNTER_BITS-1:0] in_use = consumed[frame_vc] - freed_now;
  localparam W = BYTES_BITS + 9;  // room for the overhead's sign and the rounding
  localparam signed [W-1:0] OVERHEAD_W = W'(OVERHEAD);
  localparam signed [W-1:0] ROUND_UP = W'((1 << CREDIT_SHIFT) - 1);
  wire signed [W-1:0] charged = $signed({9'b0, frame_bytes}) + OVERHEAD_W;
  wire [W-1:0] rounded = charged + ROUND_UP;
  wire [COUNTER_BITS-1:0] credits = charged <= 0 ? 1 : COUNTER_BITS'(rounded >> CREDIT_SHIFT);
  assign can_send = {1'b0, credits} <= {1'b0, buffer_credits} - {1'b0, in_use};

  assign cc_due = now >= next_cc;
  assign cc_next = next_cc;
  assign probe_consumed = consumed[probe_vc];
  assign probe_freed = freed[probe_vc];

  integer v;
  always @(posedge clk) begin
    if (rst) begin
      for (v = 0; v < VCS; v = v + 1) begin
        consumed[v] <= 0;
        freed[v] <= 0;
      end
      next_cc <= resync_period;
    end else begin
      if (cf_accepted) freed[cf_vc] <= cf_counter;
      if (frame_valid && can_send) consumed[frame_vc] <= consumed[frame_vc] + credits;
      if (cc_due && cc_taken) next_cc <= now + resync_period;
    end
  end
endmodule
