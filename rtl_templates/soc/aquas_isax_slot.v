// aquas reference SoC: the ISAX slot. It holds the generated unit selected with
// +define+AQUAS_ISAX_MODULE=<name>_isax_unit, or the empty slot when none is attached, behind
// the canonical port (docs/isax-port.md). `unattached` is only ever raised by the empty slot.
// A unit that keeps scratchpads resident across calls has the snoop inputs too: the builder
// defines AQUAS_ISAX_SNOOP for it (aquas.sim.builder), and the slot connects them.
`default_nettype none

module aquas_isax_slot #(
  parameter integer W = 32   // memory master data width: 32, 64 or 128
) (
  input  wire        clk,
  input  wire        rst,
  input  wire        snoop_valid,     // a beat was written to RAM (any master) ...
  input  wire [31:0] snoop_addr,      // ... at this byte address
  input  wire        cmd_valid,
  output wire        cmd_ready,
  input  wire [6:0]  cmd_opcode,
  input  wire [2:0]  cmd_funct3,
  input  wire [6:0]  cmd_funct7,
  input  wire [31:0] cmd_rs1,
  input  wire [31:0] cmd_rs2,
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
`ifdef AQUAS_ISAX_MODULE
  `AQUAS_ISAX_MODULE u_isax (
`else
  aquas_isax_empty_slot #(.W(W)) u_isax (
`endif
    .clk(clk), .rst(rst),
`ifdef AQUAS_ISAX_SNOOP
    .snoop_valid(snoop_valid), .snoop_addr(snoop_addr),
`endif
    .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_opcode(cmd_opcode), .cmd_funct3(cmd_funct3),
    .cmd_funct7(cmd_funct7), .cmd_rs1(cmd_rs1), .cmd_rs2(cmd_rs2),
    .rsp_valid(rsp_valid), .rsp_ready(rsp_ready), .rsp_rd(rsp_rd),
    .mem_req_valid(mem_req_valid), .mem_req_ready(mem_req_ready), .mem_req_write(mem_req_write),
    .mem_req_addr(mem_req_addr), .mem_req_size(mem_req_size), .mem_req_len(mem_req_len),
    .mem_wdata_valid(mem_wdata_valid), .mem_wdata_ready(mem_wdata_ready), .mem_wdata(mem_wdata),
    .mem_wstrb(mem_wstrb), .mem_wlast(mem_wlast),
    .mem_rsp_valid(mem_rsp_valid), .mem_rsp_ready(mem_rsp_ready), .mem_rsp_rdata(mem_rsp_rdata),
`ifdef AQUAS_ISAX_MODULE
    .mem_rsp_last(mem_rsp_last)
  );
  assign unattached = 1'b0;
  assign unattached_insn = 17'd0;
`ifndef AQUAS_ISAX_SNOOP
  wire _unused_snoop = &{1'b0, snoop_valid, snoop_addr};
`endif
`else
    .mem_rsp_last(mem_rsp_last),
    .unattached(unattached), .unattached_insn(unattached_insn)
  );
  wire _unused_snoop = &{1'b0, snoop_valid, snoop_addr};
`endif
endmodule

`default_nettype wire
