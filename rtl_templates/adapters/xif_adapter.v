// CORE-V eXtension Interface (CV-X-IF, as CV32E40X 0.6.0 implements it) -> canonical ISAX
// unit port (docs/isax-port.md). The X interface's fields arrive flattened (the SoC top
// unpacks the core's if_xif interface), so this module is plain Verilog and lints alone.
//
//   issue   The core offers every instruction it cannot decode (and CSR accesses) in ID with
//           issue_valid, the instruction word and rs1/rs2. The adapter accepts the four custom
//           opcodes (custom-0..3: 0x0B, 0x2B, 0x5B, 0x7B) with writeback = 1 and rejects
//           everything else, so the core executes or traps on it as before.
//   commit  In EX the core says whether the accepted instruction commits (commit_kill = 0) or
//           is killed (an older instruction trapped, a branch was taken, a rejected CSR
//           access...). Only a committed instruction is handed to the unit, so a killed one
//           has no side effect (no register write, no memory access).
//   result  The unit's rsp_rd goes back as result.data for rd with we = 1 once the core's WB
//           stage waits for it (result_ready).
//
// The ID->EX rule (openhwgroup/cv32e40x#941). This core samples the issue response
// (writeback, loadstore, exc) only in the cycle the instruction moves from ID to EX, and
// drops issue_valid after the handshake. Accepting while EX is stalled (behind a store
// waiting for memory, a division...) loses `writeback`: rd is never written. So a custom
// instruction is accepted only in a cycle where the core's EX stage is ready (`ex_ready`,
// the core's own ID->EX condition; issue_valid already implies ID is neither halted nor
// killed), and the instruction always moves to EX in the handshake cycle.
// Rejections carry no flags and are answered at once.
//
// One instruction is in flight at a time (the canonical port's rule): while it is, further
// custom instructions wait in ID (issue_ready low).
`default_nettype none

module xif_adapter #(
  parameter integer X_ID_WIDTH = 4,
  // Negative control for the tests only (tests/sim/test_cv32e40x.py): 1 accepts whatever the
  // EX stage does and hands the instruction to the unit without waiting for its commit, the
  // two mistakes this adapter exists to avoid.
  parameter integer NAIVE = 0
) (
  input  wire                  clk,
  input  wire                  rst,
  input  wire                  ex_ready,        // the core's EX stage accepts ID's instruction
  // issue
  input  wire                  issue_valid,
  output wire                  issue_ready,
  input  wire [31:0]           issue_instr,
  input  wire [X_ID_WIDTH-1:0] issue_id,
  input  wire [31:0]           issue_rs1,
  input  wire [31:0]           issue_rs2,
  input  wire [31:0]           issue_pc,        // pc of the instruction in ID (reports)
  output wire                  issue_accept,
  output wire                  issue_writeback,
  // commit
  input  wire                  commit_valid,
  input  wire [X_ID_WIDTH-1:0] commit_id,
  input  wire                  commit_kill,
  // result
  output wire                  result_valid,
  input  wire                  result_ready,
  output wire [X_ID_WIDTH-1:0] result_id,
  output wire [31:0]           result_data,
  output wire [4:0]            result_rd,
  output wire                  result_we,
  // canonical command/response channels
  output wire                  cmd_valid,
  input  wire                  cmd_ready,
  output wire [6:0]            cmd_opcode,
  output wire [2:0]            cmd_funct3,
  output wire [6:0]            cmd_funct7,
  output wire [31:0]           cmd_rs1,
  output wire [31:0]           cmd_rs2,
  output wire [31:0]           cmd_pc,          // pc of the instruction behind cmd
  input  wire                  rsp_valid,
  output wire                  rsp_ready,
  input  wire [31:0]           rsp_rd
);
  localparam [1:0] S_IDLE = 2'd0, S_COMMIT = 2'd1, S_CMD = 2'd2, S_RSP = 2'd3;
  wire [6:0] op = issue_instr[6:0];
  wire custom = (op == 7'h0B) || (op == 7'h2B) || (op == 7'h5B) || (op == 7'h7B);
  reg [1:0] state;
  reg [31:0] instr_q, rs1_q, rs2_q, pc_q;
  reg [X_ID_WIDTH-1:0] id_q;

  assign issue_ready = !custom || (state == S_IDLE && (ex_ready || NAIVE != 0));
  assign issue_accept = custom;
  assign issue_writeback = custom;
  wire accepted = issue_valid && issue_ready && custom;

  assign cmd_valid = (state == S_CMD);
  assign cmd_opcode = instr_q[6:0];
  assign cmd_funct3 = instr_q[14:12];
  assign cmd_funct7 = instr_q[31:25];
  assign cmd_rs1 = rs1_q;
  assign cmd_rs2 = rs2_q;
  assign cmd_pc = pc_q;

  // The unit's response is passed through: result_valid is rsp_valid (which does not depend on
  // rsp_ready), and the unit sees the core's result_ready.
  assign result_valid = (state == S_RSP) && rsp_valid;
  assign rsp_ready = (state == S_RSP) && result_ready;
  assign result_id = id_q;
  assign result_data = rsp_rd;
  assign result_rd = instr_q[11:7];
  assign result_we = 1'b1;

  // rs1/rs2 register numbers: the core supplies the operands.
  wire _unused = &{1'b0, instr_q[24:15]};

  always @(posedge clk) begin
    if (rst) begin
      state <= S_IDLE;
      instr_q <= 32'd0;
      rs1_q <= 32'd0;
      rs2_q <= 32'd0;
      pc_q <= 32'd0;
      id_q <= {X_ID_WIDTH{1'b0}};
    end else begin
      case (state)
        S_IDLE:
          if (accepted) begin
            state <= (NAIVE != 0) ? S_CMD : S_COMMIT;
            instr_q <= issue_instr;
            rs1_q <= issue_rs1;
            rs2_q <= issue_rs2;
            pc_q <= issue_pc;
            id_q <= issue_id;
          end
        // Commits of other (rejected) instructions carry other ids and are ignored.
        S_COMMIT: if (commit_valid && commit_id == id_q) state <= commit_kill ? S_IDLE : S_CMD;
        S_CMD: if (cmd_ready) state <= S_RSP;
        S_RSP: if (rsp_valid && result_ready) state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end
endmodule

`default_nettype wire
