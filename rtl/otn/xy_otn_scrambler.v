// The OTU4 frame-synchronous scrambler, a byte a cycle: the RTL twin of xy::otn::scramble
// (hw/otn/otu4.hpp).
//
// A frame's 16320 bytes arrive in order, in_first with its first (FAS byte 1); idle cycles
// (in_valid low) may come between any two. The six FAS bytes pass unchanged; from the MFAS byte
// on each byte is added the next eight bits of 1 + x + x^3 + x^12 + x^16, whose register holds
// all ones at the MFAS's first bit. A byte's result is out_data, out_valid high, after the edge
// that takes it.
//
// SKIP_TAP = 1 leaves x^12 out: a planted bug the lockstep test must catch.
module xy_otn_scrambler #(
    parameter SKIP_TAP = 0
) (
    input wire clk,
    input wire rst,
    input wire in_valid,
    input wire in_first,
    input wire [7:0] in_data,
    output reg out_valid,
    output reg [7:0] out_data
);
  localparam [13:0] LAST = 14'd16319;  // a frame's last byte
  localparam [13:0] MFAS = 14'd6;

  reg [13:0] pos_q;   // the next byte's place in its frame
  reg [15:0] lfsr_q;  // the next 16 keystream bits, the first in bit 15

  reg [13:0] pos;
  reg [15:0] s;
  reg [7:0] key;
  reg next_bit;
  integer j;
  always @* begin
    pos = in_first ? 14'd0 : pos_q;
    s = pos == MFAS ? 16'hFFFF : lfsr_q;
    key = s[15:8];
    for (j = 0; j < 8; j = j + 1) begin  // b(m + 16) = b(m + 15) + b(m + 13) + b(m + 4) + b(m)
      next_bit = s[0] ^ s[2] ^ (SKIP_TAP != 0 ? 1'b0 : s[11]) ^ s[15];
      s = {s[14:0], next_bit};
    end
  end

  always @(posedge clk) begin
    if (rst) begin
      pos_q <= 14'd0;
      lfsr_q <= 16'hFFFF;
      out_valid <= 1'b0;
      out_data <= 8'd0;
    end else begin
      out_valid <= in_valid;
      if (in_valid) begin
        out_data <= pos < MFAS ? in_data : in_data ^ key;
        if (pos >= MFAS) lfsr_q <= s;
        pos_q <= pos == LAST ? 14'd0 : pos + 14'd1;
      end
    end
  end
endmodule
