// aquas reference SoC devices: console, exit, 64-bit cycle counter, region markers.
// Simple request/acknowledge slave: a request is held (valid and payload stable) until
// `ack`, which comes one cycle after `valid` (so a device access costs 2 cycles at the bus).
// Side effects are reported to the simulation harness on the ev_* outputs (one-cycle pulse,
// in the cycle of the acknowledgement). `mapped` tells the memory system's decoder whether
// `addr`/`write` name a device register at all (the cycle counter is read-only, the others
// write-only); it never forwards any other access here (aquas_mem_system.v).
`default_nettype none

module aquas_devices #(
  parameter [31:0] DEV_CONSOLE = 32'hF000_0000,
  parameter [31:0] DEV_EXIT = 32'hF000_0004,
  parameter [31:0] DEV_CYCLE_LO = 32'hF000_0008,
  parameter [31:0] DEV_CYCLE_HI = 32'hF000_000C,
  parameter [31:0] DEV_REGION_BEGIN = 32'hF000_0010,
  parameter [31:0] DEV_REGION_END = 32'hF000_0014
) (
  input  wire        clk,
  input  wire        rst,
  input  wire        valid,
  input  wire        write,
  /* verilator lint_off UNUSEDSIGNAL */  // registers are words: the byte offset is ignored
  input  wire [31:0] addr,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire [31:0] wdata,
  output reg         ack,
  output reg  [31:0] rdata,
  output reg  [63:0] cycles,   // cycles since reset
  output wire        mapped,
  output wire        ev_valid,
  output wire [2:0]  ev_kind,  // 1 console, 2 exit, 3 region begin, 4 region end
  output wire [31:0] ev_data
);
  wire [31:0] a = {addr[31:2], 2'b00};
  wire fire = valid && ack;

  always @(posedge clk) begin
    if (rst) begin
      ack <= 1'b0;
      cycles <= 64'd0;
    end else begin
      cycles <= cycles + 64'd1;
      ack <= valid && !ack;
    end
  end

  always @* begin
    rdata = 32'd0;
    if (a == DEV_CYCLE_LO) rdata = cycles[31:0];
    else if (a == DEV_CYCLE_HI) rdata = cycles[63:32];
  end

  reg [2:0] kind;
  always @* begin
    kind = 3'd0;
    if (write) begin
      if (a == DEV_CONSOLE) kind = 3'd1;
      else if (a == DEV_EXIT) kind = 3'd2;
      else if (a == DEV_REGION_BEGIN) kind = 3'd3;
      else if (a == DEV_REGION_END) kind = 3'd4;
    end
  end
  assign mapped = write ? (kind != 3'd0) : (a == DEV_CYCLE_LO || a == DEV_CYCLE_HI);
  assign ev_valid = fire && kind != 3'd0;
  assign ev_kind = kind;
  assign ev_data = wdata;
endmodule

`default_nettype wire
