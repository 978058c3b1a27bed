// Reduce ALU lane group, bf16 or fp32 elements with an fp32 accumulator: the RTL twin of
// sw::ReduceTable's float kernels with `accumulate` 32 in arrival order (hw/switch/reduce.hpp).
// Each cycle with in_valid takes LANES little-endian elements, widened exactly to fp32, and adds
// them into the lanes' accumulators with xy_fp32_add (round to nearest even); in_first starts a
// new sum (loads instead of adding). `out` is the accumulators after the edge, as elements:
// fp32 as they are, bf16 rounded once to nearest even (a NaN keeps its sign and the top of its
// payload, or becomes the quiet NaN).
module xy_reduce_float #(
    parameter LANES = 16,
    parameter BF16 = 0,      // 1: bf16 elements, 0: fp32
    parameter TRUNCATE = 0,  // passed to the adders: 1 only to plant a bug in a test
    localparam EW = BF16 != 0 ? 16 : 32
) (
    input wire clk,
    input wire rst,
    input wire in_valid,
    input wire in_first,
    input wire [EW*LANES-1:0] in_data,
    output wire [EW*LANES-1:0] out
);
  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      reg [31:0] acc;
      wire [31:0] x;
      wire [31:0] sum;
      xy_fp32_add #(.TRUNCATE(TRUNCATE)) adder (.a(acc), .b(x), .sum(sum));
      always @(posedge clk) begin
        if (rst) acc <= 0;
        else if (in_valid) acc <= in_first ? x : sum;
      end
      if (BF16 != 0) begin : g_bf16
        assign x = {in_data[16*l +: 16], 16'd0};
        wire nan = &acc[30:23] && |acc[22:0];
        wire up = acc[15] && (|acc[14:0] || acc[16]);
        assign out[16*l +: 16] = nan ? {acc[31:23], |acc[22:16] ? acc[22:16] : 7'h40} : acc[31:16] + {15'd0, up};
      end else begin : g_fp32
        assign x = in_data[32*l +: 32];
        assign out[32*l +: 32] = acc;
      end
    end
  endgenerate
endmodule
