// aquas reference SoC: Wishbone (classic, with CTI incrementing bursts) master -> memory
// controller request port. VexRiscv's iBus and dBus refills are 8-beat CTI=010 bursts that
// start line aligned; they become one request of len = 7 - ADR[2:0] beats and are then
// acknowledged at one beat per cycle. Writes are single beats acknowledged once in memory.
`default_nettype none

module aquas_wb_port (
  input  wire        clk,
  input  wire        rst,
  input  wire        wb_cyc,
  input  wire        wb_stb,
  input  wire        wb_we,
  input  wire [29:0] wb_adr,
  input  wire [31:0] wb_dat_w,
  input  wire [3:0]  wb_sel,
  input  wire [2:0]  wb_cti,
  output wire        wb_ack,
  output wire [31:0] wb_dat_r,
  output wire        req_valid,
  input  wire        req_ready,
  output wire        req_write,
  output wire [31:0] req_addr,
  output wire [1:0]  req_size,
  output wire [7:0]  req_len,
  output wire        wvalid,
  input  wire        wready,
  output wire [31:0] wdata,
  output wire [3:0]  wstrb,
  input  wire        rvalid,
  output wire        rready,
  input  wire [31:0] rdata,
  input  wire        rlast
);
  reg busy;
  reg wdone;
  assign req_valid = wb_cyc && wb_stb && !busy;
  assign req_write = wb_we;
  assign req_addr = {wb_adr, 2'b00};
  assign req_size = 2'd2;
  assign req_len = (wb_cti == 3'b010 && !wb_we) ? {5'd0, 3'd7 - wb_adr[2:0]} : 8'd0;
  assign wvalid = busy && wb_we && !wdone;
  assign wdata = wb_dat_w;
  assign wstrb = wb_sel;
  assign rready = busy;
  assign wb_ack = busy && rvalid;
  assign wb_dat_r = rdata;

  always @(posedge clk) begin
    if (rst) begin
      busy <= 1'b0;
      wdone <= 1'b0;
    end else begin
      if (req_valid && req_ready) begin
        busy <= 1'b1;
        wdone <= 1'b0;
      end
      if (wvalid && wready) wdone <= 1'b1;
      if (busy && rvalid && rlast) busy <= 1'b0;
    end
  end
endmodule

`default_nettype wire
