// VexRiscv CfuPlugin bus -> canonical ISAX unit port (docs/isax-port.md).
//
// What VexRiscv_FullCfu (pythondata-cpu-vexriscv) does, read from its Verilog:
// * Decode: only major opcode custom-0 (0x0B) is legal for the CfuPlugin:
//   decode_LEGAL_INSTRUCTION contains ((insn & 0x7f) == 0x0b), and CFU_ENABLE is
//   ((insn & 0xc) == 0x8) within the legal set. custom-1/2/3 (0x2B/0x5B/0x7B) are illegal
//   instructions (trap, mcause 2) and can never reach the ISAX unit on this core.
// * function_id[9:0] = {insn[31:25], insn[14:12]} = {funct7, funct3}
//   (_zz_execute_CfuPlugin_functionsIds_0 = {execute_INSTRUCTION[31:25], execute_INSTRUCTION[14:12]}).
// * inputs_0 = rs1; inputs_1 = rs2 (CFU_INPUT_2_KIND is constant RS in this build: R-type).
// * The CFU must be enabled by software first: CSR 0xBC0 bit 31 (CfuPlugin_en, csr_3008);
//   while it is 0 a custom-0 instruction is illegal. Start code: li t0, 0x80000000;
//   csrs 0xBC0, t0 (the low bits of 0xBC0 are the external interrupt mask).
// * cmd_valid is held with a stable payload until cmd_ready; rsp_ready = !rsp buffer full.
// Hence: cmd_opcode is constant 0x0B, funct7/funct3 come from function_id.
`default_nettype none

module cfu_adapter (
  // VexRiscv CfuPlugin bus
  input  wire        cfu_cmd_valid,
  output wire        cfu_cmd_ready,
  input  wire [9:0]  cfu_cmd_function_id,
  input  wire [31:0] cfu_cmd_inputs_0,
  input  wire [31:0] cfu_cmd_inputs_1,
  output wire        cfu_rsp_valid,
  input  wire        cfu_rsp_ready,
  output wire [31:0] cfu_rsp_outputs_0,
  // canonical ISAX unit command/response channels
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
  assign cmd_valid = cfu_cmd_valid;
  assign cfu_cmd_ready = cmd_ready;
  assign cmd_opcode = 7'h0B;
  assign cmd_funct7 = cfu_cmd_function_id[9:3];
  assign cmd_funct3 = cfu_cmd_function_id[2:0];
  assign cmd_rs1 = cfu_cmd_inputs_0;
  assign cmd_rs2 = cfu_cmd_inputs_1;
  assign cfu_rsp_valid = rsp_valid;
  assign rsp_ready = cfu_rsp_ready;
  assign cfu_rsp_outputs_0 = rsp_rd;
endmodule

`default_nettype wire
