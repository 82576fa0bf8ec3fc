// RoCC (Rocket Custom Coprocessor: Rocket/BOOM's accelerator port) -> canonical ISAX unit
// port (docs/isax-port.md). Command and response channels only: the unit keeps its own
// memory master (the SoC connects it like on the other cores), so RoCC's mem/ptw/
// interrupt ports are not used.
//
// A RoCC instruction word is R-type with funct3's three bits redefined:
//   funct7[31:25] rs2[24:20] rs1[19:15] xd[14] xs1[13] xs2[12] rd[11:7] opcode[6:0]
// xd: the core waits for a response writing rd; xs1/xs2: rs1/rs2 carry register values.
// The canonical port's funct3 is those three bits ({xd, xs1, xs2}), so the unit decodes the
// same instruction word on every core; an ISAX meant for Rocket must be encoded with
// funct3 = {has rd, reads rs1, reads rs2} (docs/soc.md).
//
// cmd is a Decoupled channel whose valid need not stay up, so an accepted command is
// latched and then offered to the unit with a stable payload. The unit's response becomes a
// RoCC response (rd and data) when xd is set; otherwise the adapter consumes it (the core
// does not expect one). busy is high from the accepted command until that response has
// transferred, so the core's fence/ordering logic sees the instruction as outstanding.
// One instruction is in flight at a time (cmd_ready low meanwhile).
`default_nettype none

module rocc_adapter #(
  parameter integer XLEN = 32  // the canonical port is 32 bits wide: an RV32 Rocket
) (
  input  wire            clk,
  input  wire            rst,
  // RoCC command
  input  wire            rocc_cmd_valid,
  output wire            rocc_cmd_ready,
  input  wire [6:0]      rocc_cmd_inst_funct,   // funct7
  /* verilator lint_off UNUSEDSIGNAL */  // register numbers: the core supplies the values
  input  wire [4:0]      rocc_cmd_inst_rs2,
  input  wire [4:0]      rocc_cmd_inst_rs1,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire            rocc_cmd_inst_xd,
  input  wire            rocc_cmd_inst_xs1,
  input  wire            rocc_cmd_inst_xs2,
  input  wire [4:0]      rocc_cmd_inst_rd,
  input  wire [6:0]      rocc_cmd_inst_opcode,
  input  wire [XLEN-1:0] rocc_cmd_rs1,
  input  wire [XLEN-1:0] rocc_cmd_rs2,
  // RoCC response
  output wire            rocc_resp_valid,
  input  wire            rocc_resp_ready,
  output wire [4:0]      rocc_resp_rd,
  output wire [XLEN-1:0] rocc_resp_data,
  output wire            rocc_busy,
  // canonical command/response channels
  output wire            cmd_valid,
  input  wire            cmd_ready,
  output wire [6:0]      cmd_opcode,
  output wire [2:0]      cmd_funct3,
  output wire [6:0]      cmd_funct7,
  output wire [31:0]     cmd_rs1,
  output wire [31:0]     cmd_rs2,
  input  wire            rsp_valid,
  output wire            rsp_ready,
  input  wire [31:0]     rsp_rd
);
  localparam [1:0] S_IDLE = 2'd0, S_CMD = 2'd1, S_RSP = 2'd2;
  reg [1:0] state;
  reg [6:0] opcode_q, funct7_q;
  reg [2:0] funct3_q;   // {xd, xs1, xs2}
  reg [4:0] rd_q;
  reg [31:0] rs1_q, rs2_q;

  assign rocc_cmd_ready = (state == S_IDLE);
  assign rocc_busy = (state != S_IDLE);
  assign cmd_valid = (state == S_CMD);
  assign cmd_opcode = opcode_q;
  assign cmd_funct3 = funct3_q;
  assign cmd_funct7 = funct7_q;
  assign cmd_rs1 = rs1_q;
  assign cmd_rs2 = rs2_q;

  wire xd = funct3_q[2];
  assign rocc_resp_valid = (state == S_RSP) && xd && rsp_valid;
  assign rocc_resp_rd = rd_q;
  assign rocc_resp_data = {{(XLEN - 32){1'b0}}, rsp_rd};
  assign rsp_ready = (state == S_RSP) && (!xd || rocc_resp_ready);

  // XLEN = 64 (an RV64 Rocket): the upper halves of the operands do not reach the unit.
  wire _unused = &{1'b0, rocc_cmd_rs1, rocc_cmd_rs2};

  always @(posedge clk) begin
    if (rst) begin
      state <= S_IDLE;
      opcode_q <= 7'd0;
      funct7_q <= 7'd0;
      funct3_q <= 3'd0;
      rd_q <= 5'd0;
      rs1_q <= 32'd0;
      rs2_q <= 32'd0;
    end else begin
      case (state)
        S_IDLE:
          if (rocc_cmd_valid) begin
            state <= S_CMD;
            opcode_q <= rocc_cmd_inst_opcode;
            funct7_q <= rocc_cmd_inst_funct;
            funct3_q <= {rocc_cmd_inst_xd, rocc_cmd_inst_xs1, rocc_cmd_inst_xs2};
            rd_q <= rocc_cmd_inst_rd;
            rs1_q <= rocc_cmd_rs1[31:0];
            rs2_q <= rocc_cmd_rs2[31:0];
          end
        S_CMD: if (cmd_ready) state <= S_RSP;
        S_RSP: if (rsp_valid && rsp_ready) state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end
endmodule

`default_nettype wire
