// aquas reference SoC with PicoRV32 (picorv32.v from pythondata-cpu-picorv32, unmodified):
// RV32IM (fast multiplier + divider as PicoRV32's internal PCPI cores), PCPI enabled for
// the ISAX unit, 64-bit counters (rdcycle/rdcycleh), no caches, no IRQs.
//
//   native memory interface -> port 0 \
//                                      +--> aquas_mem_ctrl (arbiter, optional L2, RAM)
//   ISAX mem master ------------> port 1 (DMA channel 0; channels 1.. tied off)
//   devices when address bit 31 is set (same memory map as the VexRiscv SoC)
//   PCPI --> aquas_pcpi_adapter --> ISAX unit (`AQUAS_ISAX_MODULE) or empty slot
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
  output wire [31:0] stat_l2_hits,
  output wire [31:0] stat_l2_misses
);
  localparam integer NPORTS = 1 + DMA_CHANNELS;

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

  // ---------------- memory interface: devices (address bit 31 set) or memory ----------------
  wire dev_sel = mem_addr[31];
  wire        dev_ack;
  wire [31:0] dev_rdata;
  wire [63:0] dev_cycles;
  aquas_devices #(
    .DEV_CONSOLE(DEV_CONSOLE), .DEV_EXIT(DEV_EXIT), .DEV_CYCLE_LO(DEV_CYCLE_LO),
    .DEV_CYCLE_HI(DEV_CYCLE_HI), .DEV_REGION_BEGIN(DEV_REGION_BEGIN),
    .DEV_REGION_END(DEV_REGION_END)
  ) u_dev (
    .clk(clk), .rst(rst),
    .valid(mem_valid && dev_sel), .write(mem_wstrb != 4'd0), .addr(mem_addr),
    .wdata(mem_wdata), .ack(dev_ack), .rdata(dev_rdata), .cycles(dev_cycles),
    .ev_valid(ev_valid), .ev_kind(ev_kind), .ev_data(ev_data)
  );

  wire [NPORTS-1:0]    p_req_valid, p_req_ready, p_req_write, p_wvalid, p_wready, p_rvalid, p_rready;
  wire [NPORTS*32-1:0] p_req_addr, p_wdata;
  wire [NPORTS*2-1:0]  p_req_size;
  wire [NPORTS*8-1:0]  p_req_len;
  wire [NPORTS*4-1:0]  p_wstrb;
  wire [31:0]          m_rdata;
  wire                 m_rlast;

  // Port 0: the core's native memory interface (single accesses; mem_valid is held with a
  // stable payload until mem_ready).
  reg m_busy, m_wdone;
  assign p_req_valid[0] = mem_valid && !dev_sel && !m_busy;
  assign p_req_write[0] = mem_wstrb != 4'd0;
  assign p_req_addr[31:0] = {mem_addr[31:2], 2'b00};
  assign p_req_size[1:0] = 2'd2;
  assign p_req_len[7:0] = 8'd0;
  assign p_wvalid[0] = m_busy && (mem_wstrb != 4'd0) && !m_wdone;
  assign p_wdata[31:0] = mem_wdata;
  assign p_wstrb[3:0] = mem_wstrb;
  assign p_rready[0] = m_busy;
  wire mem_done = m_busy && p_rvalid[0];
  assign mem_ready = dev_sel ? dev_ack : mem_done;
  assign mem_rdata = dev_sel ? dev_rdata : m_rdata;
  always @(posedge clk) begin
    if (rst) begin
      m_busy <= 1'b0;
      m_wdone <= 1'b0;
    end else begin
      if (p_req_valid[0] && p_req_ready[0]) begin m_busy <= 1'b1; m_wdone <= 1'b0; end
      if (p_wvalid[0] && p_wready[0]) m_wdone <= 1'b1;
      if (mem_done) m_busy <= 1'b0;
    end
  end

  // ---------------- ISAX unit ----------------
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

  wire        u_req_valid, u_req_ready, u_req_write, u_wvalid, u_wready, u_wlast, u_rsp_valid, u_rsp_ready;
  wire [31:0] u_req_addr, u_wdata;
  wire [1:0]  u_req_size;
  wire [7:0]  u_req_len;
  wire [3:0]  u_wstrb;

`ifdef AQUAS_ISAX_MODULE
  `AQUAS_ISAX_MODULE u_isax (
    .clk(clk), .rst(rst),
    .cmd_valid(x_cmd_valid), .cmd_ready(x_cmd_ready), .cmd_opcode(x_opcode), .cmd_funct3(x_funct3),
    .cmd_funct7(x_funct7), .cmd_rs1(x_rs1), .cmd_rs2(x_rs2),
    .rsp_valid(x_rsp_valid), .rsp_ready(x_rsp_ready), .rsp_rd(x_rd),
    .mem_req_valid(u_req_valid), .mem_req_ready(u_req_ready), .mem_req_write(u_req_write),
    .mem_req_addr(u_req_addr), .mem_req_size(u_req_size), .mem_req_len(u_req_len),
    .mem_wdata_valid(u_wvalid), .mem_wdata_ready(u_wready), .mem_wdata(u_wdata),
    .mem_wstrb(u_wstrb), .mem_wlast(u_wlast),
    .mem_rsp_valid(u_rsp_valid), .mem_rsp_ready(u_rsp_ready), .mem_rsp_rdata(m_rdata),
    .mem_rsp_last(m_rlast)
  );
  assign unattached = 1'b0;
  assign unattached_insn = 17'd0;
`else
  aquas_isax_empty_slot u_isax (
    .clk(clk), .rst(rst),
    .cmd_valid(x_cmd_valid), .cmd_ready(x_cmd_ready), .cmd_opcode(x_opcode), .cmd_funct3(x_funct3),
    .cmd_funct7(x_funct7), .cmd_rs1(x_rs1), .cmd_rs2(x_rs2),
    .rsp_valid(x_rsp_valid), .rsp_ready(x_rsp_ready), .rsp_rd(x_rd),
    .mem_req_valid(u_req_valid), .mem_req_ready(u_req_ready), .mem_req_write(u_req_write),
    .mem_req_addr(u_req_addr), .mem_req_size(u_req_size), .mem_req_len(u_req_len),
    .mem_wdata_valid(u_wvalid), .mem_wdata_ready(u_wready), .mem_wdata(u_wdata),
    .mem_wstrb(u_wstrb), .mem_wlast(u_wlast),
    .mem_rsp_valid(u_rsp_valid), .mem_rsp_ready(u_rsp_ready), .mem_rsp_rdata(m_rdata),
    .mem_rsp_last(m_rlast),
    .unattached(unattached), .unattached_insn(unattached_insn)
  );
`endif
  // PC of the custom instruction (PicoRV32 holds it in reg_pc while pcpi_valid is high).
  assign unattached_pc = u_cpu.reg_pc;

  // DMA channel 0 = the unit's memory master; further channels are idle in this SoC.
  assign p_req_valid[1] = u_req_valid;
  assign u_req_ready = p_req_ready[1];
  assign p_req_write[1] = u_req_write;
  assign p_req_addr[1*32 +: 32] = u_req_addr;
  assign p_req_size[1*2 +: 2] = u_req_size;
  assign p_req_len[1*8 +: 8] = u_req_len;
  assign p_wvalid[1] = u_wvalid;
  assign u_wready = p_wready[1];
  assign p_wdata[1*32 +: 32] = u_wdata;
  assign p_wstrb[1*4 +: 4] = u_wstrb;
  assign u_rsp_valid = p_rvalid[1];
  assign p_rready[1] = u_rsp_ready;
  assign burst_too_long = u_req_valid && ({24'd0, u_req_len} >= MAX_BURST_BEATS);
  genvar c;
  generate
    for (c = 2; c < NPORTS; c = c + 1) begin : g_idle_dma
      assign p_req_valid[c] = 1'b0;
      assign p_req_write[c] = 1'b0;
      assign p_req_addr[c*32 +: 32] = 32'd0;
      assign p_req_size[c*2 +: 2] = 2'd2;
      assign p_req_len[c*8 +: 8] = 8'd0;
      assign p_wvalid[c] = 1'b0;
      assign p_wdata[c*32 +: 32] = 32'd0;
      assign p_wstrb[c*4 +: 4] = 4'd0;
      assign p_rready[c] = 1'b1;
    end
  endgenerate

  aquas_mem_ctrl #(
    .NPORTS(NPORTS), .FIRST_DMA(1), .RAM_BASE(RAM_BASE), .RAM_WORDS_LOG2(RAM_WORDS_LOG2),
    .MEM_LATENCY(MEM_LATENCY), .DMA_SETUP(DMA_SETUP), .L2_ENABLE(L2_ENABLE),
    .L2_LINES_LOG2(L2_LINES_LOG2), .L2_LINE_WORDS_LOG2(L2_LINE_WORDS_LOG2),
    .L2_HIT_LATENCY(L2_HIT_LATENCY)
  ) u_mem (
    .clk(clk), .rst(rst),
    .req_valid(p_req_valid), .req_ready(p_req_ready), .req_write(p_req_write),
    .req_addr(p_req_addr), .req_size(p_req_size), .req_len(p_req_len),
    .wvalid(p_wvalid), .wready(p_wready), .wdata(p_wdata), .wstrb(p_wstrb),
    .rvalid(p_rvalid), .rready(p_rready), .rdata(m_rdata), .rlast(m_rlast),
    .stat_l2_hits(stat_l2_hits), .stat_l2_misses(stat_l2_misses)
  );

  // Unused outputs (byte offset of word accesses, instruction flag, cycle counter copy).
  wire _unused = &{1'b0, u_wlast, dev_cycles, mem_instr, mem_addr[1:0], unattached_insn[0]};
endmodule

`default_nettype wire
