// aquas reference SoC: OBI (Open Bus Interface, as CV32E40X's instruction and data ports
// speak it) master -> memory controller request port (aquas_mem_ctrl's port protocol).
//
// OBI splits an access into an address phase (req/gnt) and a response phase (rvalid). The
// port protocol allows one request outstanding, so `gnt` is given only when no access is in
// flight and the controller accepts the request in the same cycle; the core keeps further
// requests pending (req held, payload stable) until then. After `gnt` an OBI master may
// change its address-phase signals, so the write data and byte enables are latched at the
// grant. Every access is a single 32-bit beat; a write's acknowledgement is its rvalid.
`default_nettype none

module aquas_obi_port (
  input  wire        clk,
  input  wire        rst,
  input  wire        obi_req,
  output wire        obi_gnt,
  input  wire [31:0] obi_addr,
  input  wire        obi_we,
  input  wire [3:0]  obi_be,
  input  wire [31:0] obi_wdata,
  output wire        obi_rvalid,
  output wire [31:0] obi_rdata,
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
  reg busy, wdone, we_q;
  reg [31:0] wdata_q;
  reg [3:0] be_q;
  assign req_valid = obi_req && !busy;
  assign obi_gnt = req_valid && req_ready;
  assign req_write = obi_we;
  assign req_addr = {obi_addr[31:2], 2'b00};
  assign req_size = 2'd2;
  assign req_len = 8'd0;
  assign wvalid = busy && we_q && !wdone;
  assign wdata = wdata_q;
  assign wstrb = be_q;
  assign rready = busy;
  assign obi_rvalid = busy && rvalid;
  assign obi_rdata = rdata;

  always @(posedge clk) begin
    if (rst) begin
      busy <= 1'b0;
      wdone <= 1'b0;
      we_q <= 1'b0;
      wdata_q <= 32'd0;
      be_q <= 4'd0;
    end else begin
      if (obi_gnt) begin
        busy <= 1'b1;
        wdone <= 1'b0;
        we_q <= obi_we;
        wdata_q <= obi_wdata;
        be_q <= obi_be;
      end
      if (wvalid && wready) wdone <= 1'b1;
      if (busy && rvalid) busy <= 1'b0;
    end
  end

  // Single beats only: the last flag carries no information; word accesses (be selects bytes).
  wire _unused = &{1'b0, rlast, obi_addr[1:0]};
endmodule

`default_nettype wire
