// Reduce ALU lane group, int32 with a 32-bit accumulator: the RTL twin of sw::ReduceTable's int32
// kernel (hw/switch/reduce.hpp: two's-complement, wrapping modulo 2^32). Each cycle with
// in_valid adds LANES little-endian int32 elements into the accumulator of LANES lanes;
// in_first starts a new sum (loads instead of adding). `out` holds the sums after the edge.
module xy_reduce_int32 #(
    parameter LANES = 16,
    parameter KEEP_BITS = 32  // bits of each sum kept: below 32 only to plant a bug in a test
) (
    input wire clk,
    input wire rst,
    input wire in_valid,
    input wire in_first,
    input wire [32*LANES-1:0] in_data,
    output wire [32*LANES-1:0] out
);
  localparam [31:0] KEEP = KEEP_BITS >= 32 ? 32'hffffffff : (32'd1 << KEEP_BITS) - 32'd1;
  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      reg [31:0] sum;
      assign out[32*l +: 32] = sum;
      always @(posedge clk) begin
        if (rst) sum <= 0;
        else if (in_valid) sum <= ((in_first ? 32'd0 : sum) + in_data[32*l +: 32]) & KEEP;
      end
    end
  endgenerate
endmodule
