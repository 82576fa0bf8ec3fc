// The empty ISAX slot: instantiated when no ISAX unit is attached. It accepts every command
// and reports it on `unattached` (one cycle per command); the SoC passes that to the harness,
// which ends the simulation with "custom instruction with no ISAX unit attached: ...".
// It answers rd = 0 so the core would not hang if the harness kept going.
`default_nettype none

module aquas_isax_empty_slot #(
  parameter integer W = 32   // memory master data width: 32, 64 or 128
) (
  input  wire        clk,
  input  wire        rst,
  input  wire        cmd_valid,
  output wire        cmd_ready,
  input  wire [6:0]  cmd_opcode,
  input  wire [2:0]  cmd_funct3,
  input  wire [6:0]  cmd_funct7,
  /* verilator lint_off UNUSEDSIGNAL */  // operands are irrelevant without a unit
  input  wire [31:0] cmd_rs1,
  input  wire [31:0] cmd_rs2,
  /* verilator lint_on UNUSEDSIGNAL */
  output wire        rsp_valid,
  input  wire        rsp_ready,
  output wire [31:0] rsp_rd,
  output wire        mem_req_valid,
  input  wire        mem_req_ready,
  output wire        mem_req_write,
  output wire [31:0] mem_req_addr,
  output wire [2:0]  mem_req_size,
  output wire [7:0]  mem_req_len,
  output wire        mem_wdata_valid,
  input  wire        mem_wdata_ready,
  output wire [W-1:0] mem_wdata,
  output wire [W/8-1:0] mem_wstrb,
  output wire        mem_wlast,
  input  wire        mem_rsp_valid,
  output wire        mem_rsp_ready,
  input  wire [W-1:0] mem_rsp_rdata,
  input  wire        mem_rsp_last,
  output wire        unattached,
  output wire [16:0] unattached_insn   // {funct7, funct3, opcode}
);
  reg pending;
  assign cmd_ready = !pending;
  assign rsp_valid = pending;
  assign rsp_rd = 32'd0;
  assign unattached = cmd_valid && cmd_ready;
  assign unattached_insn = {cmd_funct7, cmd_funct3, cmd_opcode};
  assign mem_req_valid = 1'b0;
  assign mem_req_write = 1'b0;
  assign mem_req_addr = 32'd0;
  assign mem_req_size = 3'd2;
  assign mem_req_len = 8'd0;
  assign mem_wdata_valid = 1'b0;
  assign mem_wdata = {W{1'b0}};
  assign mem_wstrb = {(W/8){1'b0}};
  assign mem_wlast = 1'b0;
  assign mem_rsp_ready = 1'b1;
  wire _unused = &{1'b0, mem_req_ready, mem_wdata_ready, mem_rsp_valid, mem_rsp_rdata, mem_rsp_last};

  always @(posedge clk) begin
    if (rst) pending <= 1'b0;
    else if (cmd_valid && cmd_ready) pending <= 1'b1;
    else if (rsp_ready) pending <= 1'b0;
  end
endmodule

`default_nettype wire
