// The RoCEv2 invariant CRC, eight bytes a cycle: the RTL twin of xy::nic::icrc (hw/nic/roce.hpp).
//
// A packet's bytes arrive from its IPv4 header on, byte 0 of a word in in_data[7:0], in_bytes of
// them valid (1..8; only the last word may be partial); in_first marks the first word. The bytes
// switches may rewrite are taken as all ones where they sit: IPv4 TOS (byte 1), TTL (8) and
// header checksum (10, 11), the UDP checksum (26, 27) and BTH byte 4 (32), for a 20-byte IPv4
// header. The register starts from 32'hDEBB20E3, the CRC-32 register after the eight 0xFF bytes of
// the masked LRH; `icrc` is its complement, the value whose least significant byte goes first on
// the wire. After the edge of a packet's last word, `icrc` is its ICRC.
//
// MASK_TOS = 0 leaves TOS unmasked: a planted bug the lockstep test must catch (an ECN mark then
// changes the ICRC).
module xy_icrc #(
    parameter MASK_TOS = 1
) (
    input wire clk,
    input wire rst,
    input wire in_valid,
    input wire in_first,
    input wire [63:0] in_data,
    input wire [3:0] in_bytes,
    output wire [31:0] icrc
);
  localparam [31:0] SEED = 32'hDEBB20E3;

  reg [31:0] crc_q;
  reg [15:0] count_q;  // bytes of the packet before this word

  function automatic [31:0] crc_byte(input [31:0] crc, input [7:0] b);
    reg [31:0] c;
    integer i;
    begin
      c = crc ^ {24'd0, b};
      for (i = 0; i < 8; i = i + 1) c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
      crc_byte = c;
    end
  endfunction

  function automatic masked(input [15:0] pos);
    begin
      masked = (pos == 16'd1 && MASK_TOS != 0) || pos == 16'd8 || pos == 16'd10 || pos == 16'd11 ||
               pos == 16'd26 || pos == 16'd27 || pos == 16'd32;
    end
  endfunction

  reg [31:0] crc_d;
  reg [15:0] base;
  reg [7:0] b;
  integer lane;
  always @* begin
    crc_d = in_first ? SEED : crc_q;
    base = in_first ? 16'd0 : count_q;
    for (lane = 0; lane < 8; lane = lane + 1) begin
      b = in_data[8*lane +: 8];
      if (masked(base + lane[15:0])) b = 8'hFF;
      if (lane < {28'd0, in_bytes}) crc_d = crc_byte(crc_d, b);
    end
  end

  always @(posedge clk) begin
    if (rst) begin
      crc_q <= SEED;
      count_q <= 16'd0;
    end else if (in_valid) begin
      crc_q <= crc_d;
      count_q <= base + {12'd0, in_bytes};
    end
  end

  assign icrc = ~crc_q;
endmodule
