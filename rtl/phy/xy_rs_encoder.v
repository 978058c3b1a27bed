// Systematic Reed–Solomon encoder over GF(2^10), one symbol a cycle: the RTL twin of
// xy::phy::ReedSolomon::encode (hw/phy/reed_solomon.hpp). PARITY = n − k: 14 for RS(272,257+1),
// 30 for RS(544,514); the field polynomial and the generator's first root are parameters, and
// the generator g(x) = prod (x − alpha^(FIRST_ROOT+i)) is computed at elaboration.
//
// A codeword's message symbols arrive highest degree first with in_valid; in_first marks the
// first (the remainder restarts from zero). After the edge of the last one, `parity` holds the
// PARITY check symbols, parity[10*PARITY-1 -: 10] the first sent (codeword[k]).
module xy_rs_encoder #(
    parameter PARITY = 14,
    parameter FIELD_POLY = 11'h409,  // x^10 + x^3 + 1
    parameter FIRST_ROOT = 0
) (
    input wire clk,
    input wire rst,
    input wire in_valid,
    input wire in_first,
    input wire [9:0] in_symbol,
    output wire [10*PARITY-1:0] parity
);
  function automatic [9:0] gf_mul(input [9:0] a, input [9:0] b);
    reg [9:0] product, shifted;
    integer i;
    begin
      product = 0;
      shifted = a;
      for (i = 0; i < 10; i = i + 1) begin
        if (b[i]) product = product ^ shifted;
        shifted = shifted[9] ? ({shifted[8:0], 1'b0} ^ FIELD_POLY[9:0]) : {shifted[8:0], 1'b0};
      end
      gf_mul = product;
    end
  endfunction

  // g's coefficients, g[j] of x^j at bits 10*j; g[PARITY] = 1 is implicit (monic).
  function automatic [10*(PARITY+1)-1:0] generator(input integer unused);
    reg [10*(PARITY+1)-1:0] g;
    reg [9:0] root;
    integer i, j;
    begin
      g = 0;
      g[9:0] = 10'd1;
      root = 10'd1;
      for (i = 0; i < FIRST_ROOT; i = i + 1) root = gf_mul(root, 10'd2);
      for (i = 0; i < PARITY; i = i + 1) begin  // g *= (x + root)
        for (j = i + 1; j >= 1; j = j - 1) g[10*j +: 10] = g[10*(j-1) +: 10] ^ gf_mul(g[10*j +: 10], root);
        g[9:0] = gf_mul(g[9:0], root);
        root = gf_mul(root, 10'd2);
      end
      generator = g;
    end
  endfunction
  localparam [10*(PARITY+1)-1:0] G = generator(0);

  reg [9:0] r[0:PARITY-1];  // the remainder, r[PARITY-1] the highest degree
  wire [9:0] top = in_first ? 10'd0 : r[PARITY-1];
  wire [9:0] feedback = in_symbol ^ top;

  genvar p;
  generate
    for (p = 0; p < PARITY; p = p + 1) begin : g_parity
      assign parity[10*p +: 10] = r[p];
      wire [9:0] below = (p == 0 || in_first) ? 10'd0 : r[p == 0 ? 0 : p-1];
      always @(posedge clk) begin
        if (rst) r[p] <= 0;
        else if (in_valid) r[p] <= below ^ gf_mul(feedback, G[10*p +: 10]);
      end
    end
  endgenerate
endmodule
