// Delay line: a DEPTH-stage shift register for a valid-qualified data stream, no back-pressure.
//
// An input sampled at rising edge t appears on m_tdata/m_tvalid after DEPTH rising edges
// (edges t .. t+DEPTH-1), i.e. it is driven during cycle c and seen during cycle c+DEPTH:
// the RTL twin of a Channel of latency DEPTH. Data registers are not reset (only the valid
// bits are), so m_tdata is meaningful only while m_tvalid is high.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module xy_util_delay_line #
(
    parameter DATA_WIDTH = 64,
    parameter DEPTH = 4
)
(
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_WIDTH-1:0] s_tdata,
    input  wire                  s_tvalid,

    output wire [DATA_WIDTH-1:0] m_tdata,
    output wire                  m_tvalid
);

// check configuration
initial begin
    if (DEPTH < 1) begin
        $display("Error: DEPTH must be at least 1 (instance %m)");
        $finish;
    end
end

// stage 0 takes the input; stage DEPTH-1 drives the outputs
reg [DATA_WIDTH-1:0] data_reg[0:DEPTH-1];
reg [DEPTH-1:0] valid_reg = {DEPTH{1'b0}};

assign m_tdata = data_reg[DEPTH-1];
assign m_tvalid = valid_reg[DEPTH-1];

integer i;

initial begin
    for (i = 0; i < DEPTH; i = i + 1) begin
        data_reg[i] = {DATA_WIDTH{1'b0}};
    end
end

always @(posedge clk) begin
    data_reg[0] <= s_tdata;
    valid_reg[0] <= s_tvalid;

    for (i = 1; i < DEPTH; i = i + 1) begin
        data_reg[i] <= data_reg[i-1];
        valid_reg[i] <= valid_reg[i-1];
    end

    if (rst) begin
        valid_reg <= {DEPTH{1'b0}};
    end
end

endmodule

`resetall
