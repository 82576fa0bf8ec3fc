// aquas reference SoC with PicoRV32 (picorv32.v from pythondata-cpu-picorv32, unmodified):
// RV32IM (fast multiplier + divider as PicoRV32's internal PCPI cores), PCPI enabled for
// the ISAX unit, 64-bit counters (rdcycle/rdcycleh), no caches, no IRQs.
//
//   native memory interface -> core port 0 (fetch and data) \
//                                                            +-> aquas_mem_system (RAM,
//   PCPI -> pcpi_adapter -> ISAX command -------------------/    devices, ISAX slot, bad accesses)
//
// The ISAX unit is selected with +define+AQUAS_ISAX_MODULE=<name>_isax_unit; without it the
// empty slot is attached. Same memory map as the VexRiscv SoC.
`default_nettype none

module aquas_soc_picorv32 #(
  parameter [31:0]  RAM_BASE = 32'h0,
  parameter integer RAM_WORDS_LOG2 = 18,
  parameter integer MEM_LATENCY = 10,
  parameter integer L2_ENABLE = 0,
  parameter integer L2_LINES_LOG2 = 10,
  parameter integer L2_LINE_WORDS_LOG2 = 3,
  parameter integer L2_HIT_LATENCY = 2,
  parameter integer DMA_SETUP = 2,
  parameter integer DMA_CHANNELS = 1,
  parameter integer MAX_BURST_BEATS = 256,
  parameter integer ISAX_WIDTH = 32,
  parameter integer OUTSTANDING = 1,     // transactions the memory controller accepts at once
  parameter [31:0]  DEV_CONSOLE = 32'hF000_0000,
  parameter [31:0]  DEV_EXIT = 32'hF000_0004,
  parameter [31:0]  DEV_CYCLE_LO = 32'hF000_0008,
  parameter [31:0]  DEV_CYCLE_HI = 32'hF000_000C,
  parameter [31:0]  DEV_REGION_BEGIN = 32'hF000_0010,
  parameter [31:0]  DEV_REGION_END = 32'hF000_0014
) (
  input  wire        clk,
  input  wire        rst,
  output wire        ev_valid,
  output wire [2:0]  ev_kind,
  output wire [31:0] ev_data,
  output wire        unattached,
  output wire [16:0] unattached_insn,
  output wire [31:0] unattached_pc,
  output wire        core_trap,
  output wire [31:0] core_trap_pc,
  output wire        burst_too_long,
  output wire        bad_access,
  output wire [3:0]  bad_master,
  output wire        bad_write,
  output wire [31:0] bad_start,
  output wire [7:0]  bad_len,
  output wire [31:0] bad_addr,
  output wire [31:0] bad_pc,
  output wire [31:0] stat_l2_hits,
  output wire [31:0] stat_l2_misses
);
  // ---------------- core ----------------
  wire        trap;
  wire        mem_valid, mem_instr, mem_ready;
  wire [31:0] mem_addr, mem_wdata, mem_rdata;
  wire [3:0]  mem_wstrb;
  wire        pcpi_valid, pcpi_wr, pcpi_wait, pcpi_ready;
  wire [31:0] pcpi_insn, pcpi_rs1, pcpi_rs2, pcpi_rd;
  /* verilator lint_off PINCONNECTEMPTY */  // look-ahead, IRQ and trace outputs are not used
  picorv32 #(
    .ENABLE_COUNTERS(1), .ENABLE_COUNTERS64(1), .ENABLE_REGS_16_31(1), .ENABLE_REGS_DUALPORT(1),
    .BARREL_SHIFTER(1), .COMPRESSED_ISA(0), .CATCH_MISALIGN(1), .CATCH_ILLINSN(1),
    .ENABLE_PCPI(1), .ENABLE_MUL(0), .ENABLE_FAST_MUL(1), .ENABLE_DIV(1), .ENABLE_IRQ(0),
    .ENABLE_TRACE(0), .PROGADDR_RESET(RAM_BASE)
  ) u_cpu (
    .clk(clk), .resetn(!rst), .trap(trap),
    .mem_valid(mem_valid), .mem_instr(mem_instr), .mem_ready(mem_ready), .mem_addr(mem_addr),
    .mem_wdata(mem_wdata), .mem_wstrb(mem_wstrb), .mem_rdata(mem_rdata),
    .mem_la_read(), .mem_la_write(), .mem_la_addr(), .mem_la_wdata(), .mem_la_wstrb(),
    .pcpi_valid(pcpi_valid), .pcpi_insn(pcpi_insn), .pcpi_rs1(pcpi_rs1), .pcpi_rs2(pcpi_rs2),
    .pcpi_wr(pcpi_wr), .pcpi_rd(pcpi_rd), .pcpi_wait(pcpi_wait), .pcpi_ready(pcpi_ready),
    .irq(32'd0), .eoi(),
    .trace_valid(), .trace_data()
  );
  /* verilator lint_on PINCONNECTEMPTY */
  // PicoRV32 without IRQs stops in its trap state on illegal instructions, ecall/ebreak and
  // misaligned accesses; reg_pc is the pc of the offending instruction.
  assign core_trap = trap;
  assign core_trap_pc = u_cpu.reg_pc;

  // ---------------- core port 0: the native memory interface ----------------
  // Single accesses; mem_valid is held with a stable payload until mem_ready.
  wire        p_req_valid, p_req_ready, p_wvalid, p_wready, p_rvalid, p_rlast;
  wire [31:0] p_rdata;
  reg m_busy, m_wdone;
  assign p_req_valid = mem_valid && !m_busy;
  assign p_wvalid = m_busy && (mem_wstrb != 4'd0) && !m_wdone;
  wire mem_done = m_busy && p_rvalid;
  assign mem_ready = mem_done;
  assign mem_rdata = p_rdata;
  always @(posedge clk) begin
    if (rst) begin
      m_busy <= 1'b0;
      m_wdone <= 1'b0;
    end else begin
      if (p_req_valid && p_req_ready) begin m_busy <= 1'b1; m_wdone <= 1'b0; end
      if (p_wvalid && p_wready) m_wdone <= 1'b1;
      if (mem_done) m_busy <= 1'b0;
    end
  end

  // ---------------- custom instructions ----------------
  wire        x_cmd_valid, x_cmd_ready, x_rsp_valid, x_rsp_ready;
  wire [6:0]  x_opcode, x_funct7;
  wire [2:0]  x_funct3;
  wire [31:0] x_rs1, x_rs2, x_rd;
  pcpi_adapter u_pcpi (
    .clk(clk), .rst(rst),
    .pcpi_valid(pcpi_valid), .pcpi_insn(pcpi_insn), .pcpi_rs1(pcpi_rs1), .pcpi_rs2(pcpi_rs2),
    .pcpi_wr(pcpi_wr), .pcpi_rd(pcpi_rd), .pcpi_wait(pcpi_wait), .pcpi_ready(pcpi_ready),
    .cmd_valid(x_cmd_valid), .cmd_ready(x_cmd_ready), .cmd_opcode(x_opcode),
    .cmd_funct3(x_funct3), .cmd_funct7(x_funct7), .cmd_rs1(x_rs1), .cmd_rs2(x_rs2),
    .rsp_valid(x_rsp_valid), .rsp_ready(x_rsp_ready), .rsp_rd(x_rd)
  );
  // PicoRV32 has no caches and finishes each store before the next instruction: no ordering
  // or coherence logic is needed around the ISAX unit.
  // PC of the custom instruction (PicoRV32 holds it in reg_pc while pcpi_valid is high).
  assign unattached_pc = u_cpu.reg_pc;

  aquas_mem_system #(
    .NCORE(1), .DATA_PORT(0), .RAM_BASE(RAM_BASE), .RAM_WORDS_LOG2(RAM_WORDS_LOG2),
    .MEM_LATENCY(MEM_LATENCY), .L2_ENABLE(L2_ENABLE), .L2_LINES_LOG2(L2_LINES_LOG2),
    .L2_LINE_WORDS_LOG2(L2_LINE_WORDS_LOG2), .L2_HIT_LATENCY(L2_HIT_LATENCY),
    .DMA_SETUP(DMA_SETUP), .DMA_CHANNELS(DMA_CHANNELS), .MAX_BURST_BEATS(MAX_BURST_BEATS),
    .ISAX_WIDTH(ISAX_WIDTH), .OUTSTANDING(OUTSTANDING),
    .DEV_CONSOLE(DEV_CONSOLE), .DEV_EXIT(DEV_EXIT), .DEV_CYCLE_LO(DEV_CYCLE_LO),
    .DEV_CYCLE_HI(DEV_CYCLE_HI), .DEV_REGION_BEGIN(DEV_REGION_BEGIN),
    .DEV_REGION_END(DEV_REGION_END)
  ) u_memsys (
    .clk(clk), .rst(rst),
    .core_req_valid(p_req_valid), .core_req_ready(p_req_ready),
    .core_req_write(mem_wstrb != 4'd0), .core_req_fetch(mem_instr),
    .core_req_addr({mem_addr[31:2], 2'b00}), .core_req_size(2'd2), .core_req_len(8'd0),
    .core_wvalid(p_wvalid), .core_wready(p_wready), .core_wdata(mem_wdata),
    .core_wstrb(mem_wstrb), .core_rvalid(p_rvalid), .core_rready(m_busy),
    .core_rdata(p_rdata), .core_rlast(p_rlast),
    // reg_pc is the pc of the instruction being executed, a load or store during its access
    .core_data_pc(u_cpu.reg_pc),
    .x_cmd_valid(x_cmd_valid), .x_cmd_ready(x_cmd_ready), .x_opcode(x_opcode),
    .x_funct3(x_funct3), .x_funct7(x_funct7), .x_rs1(x_rs1), .x_rs2(x_rs2), .x_pc(unattached_pc),
    .x_rsp_valid(x_rsp_valid), .x_rsp_ready(x_rsp_ready), .x_rd(x_rd),
    .ev_valid(ev_valid), .ev_kind(ev_kind), .ev_data(ev_data),
    .unattached(unattached), .unattached_insn(unattached_insn), .burst_too_long(burst_too_long),
    .bad_access(bad_access), .bad_master(bad_master), .bad_write(bad_write),
    .bad_start(bad_start), .bad_len(bad_len), .bad_addr(bad_addr), .bad_pc(bad_pc),
    .stat_l2_hits(stat_l2_hits), .stat_l2_misses(stat_l2_misses)
  );

  // Unused: the byte offset of word accesses (wstrb selects the bytes), the port's last flag
  // (every access is a single beat).
  wire _unused = &{1'b0, mem_addr[1:0], p_rlast};
endmodule

`default_nettype wire
