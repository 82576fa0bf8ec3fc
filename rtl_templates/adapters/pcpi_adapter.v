// PicoRV32 PCPI -> canonical ISAX unit port (docs/isax-port.md).
//
// PicoRV32 raises pcpi_valid with pcpi_insn/rs1/rs2 for every instruction it does not
// execute itself and waits for pcpi_ready (or traps as illegal after 16 cycles unless some
// coprocessor drives pcpi_wait). Its internal MUL/DIV coprocessors answer the M extension;
// this adapter claims only the four custom opcodes (custom-0..3: 0x0B, 0x2B, 0x5B, 0x7B), so
// every other unknown instruction still traps as illegal and MUL/DIV keep working.
//   opcode = insn[6:0], funct3 = insn[14:12], funct7 = insn[31:25]
// While a claimed instruction is in flight pcpi_wait is high; the response is returned with
// pcpi_ready = pcpi_wr = 1 for one cycle (PicoRV32 drops pcpi_valid on the next edge).
`default_nettype none

module pcpi_adapter (
  input  wire        clk,
  input  wire        rst,
  input  wire        pcpi_valid,
  /* verilator lint_off UNUSEDSIGNAL */  // rd/rs1/rs2 fields: PicoRV32 supplies the operands
  input  wire [31:0] pcpi_insn,
  /* verilator lint_on UNUSEDSIGNAL */
  input  wire [31:0] pcpi_rs1,
  input  wire [31:0] pcpi_rs2,
  output wire        pcpi_wr,
  output wire [31:0] pcpi_rd,
  output wire        pcpi_wait,
  output wire        pcpi_ready,
  output wire        cmd_valid,
  input  wire        cmd_ready,
  output wire [6:0]  cmd_opcode,
  output wire [2:0]  cmd_funct3,
  output wire [6:0]  cmd_funct7,
  output wire [31:0] cmd_rs1,
  output wire [31:0] cmd_rs2,
  input  wire        rsp_valid,
  output wire        rsp_ready,
  input  wire [31:0] rsp_rd
);
  localparam [1:0] S_IDLE = 2'd0, S_CMD = 2'd1, S_RSP = 2'd2;
  wire [6:0] op = pcpi_insn[6:0];
  wire custom = (op == 7'h0B) || (op == 7'h2B) || (op == 7'h5B) || (op == 7'h7B);
  reg [1:0] state;

  assign cmd_valid = (state == S_CMD);
  assign cmd_opcode = op;
  assign cmd_funct3 = pcpi_insn[14:12];
  assign cmd_funct7 = pcpi_insn[31:25];
  assign cmd_rs1 = pcpi_rs1;
  assign cmd_rs2 = pcpi_rs2;
  assign rsp_ready = (state == S_RSP);
  assign pcpi_ready = (state == S_RSP) && rsp_valid;
  assign pcpi_wr = pcpi_ready;
  assign pcpi_rd = rsp_rd;
  assign pcpi_wait = pcpi_valid && custom && !pcpi_ready;

  always @(posedge clk) begin
    if (rst) begin
      state <= S_IDLE;
    end else begin
      case (state)
        S_IDLE: if (pcpi_valid && custom) state <= S_CMD;
        S_CMD: if (cmd_ready) state <= S_RSP;
        S_RSP: if (rsp_valid) state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end
endmodule

`default_nettype wire
