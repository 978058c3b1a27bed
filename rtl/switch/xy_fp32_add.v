// IEEE 754 binary32 addition, round to nearest, ties to even (the host's `float + float`, as
// sw::ReduceTable's fp32 accumulator uses it), combinational: subnormal operands and results,
// signed zeros (an exact cancellation gives +0), overflow to infinity. A NaN operand gives that
// NaN quieted (a's first), infinity minus infinity the default NaN 0xFFC00000; which NaN comes
// out is implementation-defined in IEEE 754, so a lockstep compares NaNs by class.
//
// The smaller operand is aligned to the larger with three extra bits (guard, round, sticky); a
// sum that carries is shifted right one place, a difference is normalised left, but never below
// the smallest exponent (the result is then subnormal); one rounding at the end.
module xy_fp32_add #(
    parameter TRUNCATE = 0  // 1 rounds toward zero instead: only to plant a bug in a test
) (
    input wire [31:0] a,
    input wire [31:0] b,
    output wire [31:0] sum
);
  wire a_nan = &a[30:23] && |a[22:0];
  wire b_nan = &b[30:23] && |b[22:0];
  wire a_inf = &a[30:23] && ~|a[22:0];
  wire b_inf = &b[30:23] && ~|b[22:0];

  // x is the operand of larger magnitude.
  wire swap = a[30:0] < b[30:0];
  wire [31:0] x = swap ? b : a;
  wire [31:0] y = swap ? a : b;
  wire [9:0] ex = {2'b0, |x[30:23] ? x[30:23] : 8'd1};  // subnormals have exponent 1
  wire [9:0] ey = {2'b0, |y[30:23] ? y[30:23] : 8'd1};
  wire [26:0] mx = {|x[30:23], x[22:0], 3'b0};
  wire [26:0] my = {|y[30:23], y[22:0], 3'b0};
  wire [9:0] d = ex - ey;
  wire [26:0] my_shifted = d >= 10'd27 ? 27'd0 : my >> d;
  wire sticky = d >= 10'd27 ? |my : (my_shifted << d) != my;
  wire [26:0] ma = {my_shifted[26:1], my_shifted[0] | sticky};
  wire [27:0] raw = x[31] == y[31] ? {1'b0, mx} + {1'b0, ma} : {1'b0, mx} - {1'b0, ma};

  // Normalise: a carry shifts right (keeping the sticky bit); otherwise shift the leading one
  // up to bit 26, but no further than exponent 1 allows.
  function automatic [4:0] leading_zeros(input [26:0] v);  // 27 for zero
    reg [31:0] w;
    begin
      w = {v, 5'b11111};
      leading_zeros = 5'd0;
      if (w[31:16] == 16'd0) begin leading_zeros = leading_zeros + 5'd16; w = w << 16; end
      if (w[31:24] == 8'd0) begin leading_zeros = leading_zeros + 5'd8; w = w << 8; end
      if (w[31:28] == 4'd0) begin leading_zeros = leading_zeros + 5'd4; w = w << 4; end
      if (w[31:30] == 2'd0) begin leading_zeros = leading_zeros + 5'd2; w = w << 2; end
      if (w[31] == 1'b0) leading_zeros = leading_zeros + 5'd1;
    end
  endfunction
  wire [4:0] lz = leading_zeros(raw[26:0]);
  wire [9:0] room = ex - 10'd1;
  wire [9:0] left = {5'b0, lz} < room ? {5'b0, lz} : room;
  wire [26:0] m = raw[27] ? {raw[27:2], raw[1] | raw[0]} : raw[26:0] << left;
  wire [9:0] e = raw[27] ? ex + 10'd1 : ex - left;

  // Round to nearest, ties to even; a carry out of the significand raises the exponent.
  wire up = TRUNCATE == 0 && m[2] && (m[1] || m[0] || m[3]);
  wire [24:0] rounded = {1'b0, m[26:3]} + {24'b0, up};
  wire [23:0] sig = rounded[24] ? rounded[24:1] : rounded[23:0];
  wire [9:0] e_out = rounded[24] ? e + 10'd1 : e;
  wire [7:0] field = sig[23] ? e_out[7:0] : 8'd0;  // no leading one: subnormal

  wire [31:0] finite = raw == 28'd0 ? {x[31] & y[31], 31'd0}
                     : e_out >= 10'd255 ? {x[31], 8'hFF, 23'd0}
                     : {x[31], field, sig[22:0]};
  assign sum = a_nan ? a | 32'h00400000
             : b_nan ? b | 32'h00400000
             : a_inf && b_inf && a[31] != b[31] ? 32'hFFC00000
             : a_inf ? a
             : b_inf ? b
             : finite;
endmodule
