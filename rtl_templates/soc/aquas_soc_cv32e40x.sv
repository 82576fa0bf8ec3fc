// aquas reference SoC with CV32E40X (the cv32e40x_core of pythondata-cpu-cv32e40x 0.6.0,
// unmodified): RV32IM, 4-stage pipeline (IF, ID, EX, WB), no caches, the CORE-V eXtension
// Interface (X_EXT = 1) for the ISAX unit, no interrupts, no debug.
//
//   data OBI        -> aquas_obi_port -> core port 0 (data)  \
//   instruction OBI -> aquas_obi_port -> core port 1 (fetch)  +-> aquas_mem_system (RAM,
//   X interface (issue/commit/result) -> xif_adapter -> ISAX command  devices, ISAX slot, ...)
//
// SystemVerilog because the core's X interface is an SV interface (if_xif); this top unpacks
// it into xif_adapter's plain ports. The X interface's memory (mem/mem_result) and compressed
// channels are not used: the unit's memory traffic goes through its own master, like on the
// other SoCs.
//
// Reset. The core's sleep unit gates its clock while rst_ni is low, so its flops reset on
// the falling edge of rst_ni (asynchronous reset), not on a clock edge. The harness holds
// `rst` from time 0, which would give no edge; rst_n_q starts at 1 and falls at the first
// clock edge, so the core always sees the edge (symptom otherwise: mcountinhibit reads 0).
// Parameters come from the target descriptor (Verilator -G).
`default_nettype none

module aquas_soc_cv32e40x #(
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
  parameter [31:0]  DEV_REGION_END = 32'hF000_0014,
  parameter integer XIF_NAIVE = 0   // tests only: xif_adapter's negative control
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
  localparam integer X_ID_WIDTH = 4;

  // See "Reset" above. The initial value is the point: the register must read 1 before the
  // first clock edge so that it can fall.
  reg rst_n_q;
  initial rst_n_q = 1'b1;
  always @(posedge clk) rst_n_q <= !rst;

  // ---------------- core ----------------
  wire        i_req, i_gnt, i_rvalid, d_req, d_gnt, d_rvalid, d_we;
  wire [31:0] i_addr, i_rdata, d_addr, d_wdata, d_rdata;
  wire [3:0]  d_be;
  if_xif #(.X_NUM_RS(2), .X_ID_WIDTH(X_ID_WIDTH)) xif ();

  /* verilator lint_off PINCONNECTEMPTY */  // OBI attributes, mcycle, debug and sleep outputs
  cv32e40x_core #(
    .X_EXT(1), .X_NUM_RS(2), .X_ID_WIDTH(X_ID_WIDTH), .NUM_MHPMCOUNTERS(1)
  ) u_cpu (
    .clk_i(clk), .rst_ni(rst_n_q), .scan_cg_en_i(1'b0),
    .boot_addr_i(RAM_BASE), .dm_exception_addr_i(32'd0), .dm_halt_addr_i(32'd0),
    .mhartid_i(32'd0), .mimpid_patch_i(4'd0), .mtvec_addr_i(RAM_BASE),
    .instr_req_o(i_req), .instr_gnt_i(i_gnt), .instr_rvalid_i(i_rvalid),
    .instr_addr_o(i_addr), .instr_memtype_o(), .instr_prot_o(), .instr_dbg_o(),
    .instr_rdata_i(i_rdata), .instr_err_i(1'b0),
    .data_req_o(d_req), .data_gnt_i(d_gnt), .data_rvalid_i(d_rvalid), .data_addr_o(d_addr),
    .data_be_o(d_be), .data_we_o(d_we), .data_wdata_o(d_wdata), .data_memtype_o(),
    .data_prot_o(), .data_dbg_o(), .data_atop_o(), .data_rdata_i(d_rdata),
    .data_err_i(1'b0), .data_exokay_i(1'b0),
    .mcycle_o(),
    .xif_compressed_if(xif), .xif_issue_if(xif), .xif_commit_if(xif), .xif_mem_if(xif),
    .xif_mem_result_if(xif), .xif_result_if(xif),
    .irq_i(32'd0), .wu_wfe_i(1'b0),
    .clic_irq_i(1'b0), .clic_irq_id_i(5'd0), .clic_irq_level_i(8'd0), .clic_irq_priv_i(2'd0),
    .clic_irq_shv_i(1'b0),
    .fencei_flush_req_o(), .fencei_flush_ack_i(1'b1),
    .debug_req_i(1'b0), .debug_havereset_o(), .debug_running_o(), .debug_halted_o(),
    .fetch_enable_i(1'b1), .core_sleep_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */
  // CV32E40X traps to mtvec (crt0's handler reports the cause): no trap output.
  assign core_trap = 1'b0;
  assign core_trap_pc = 32'd0;

  // ---------------- OBI ports: data = port 0, instructions = port 1 ----------------
  wire [1:0]  p_req_valid, p_req_ready, p_req_write, p_wvalid, p_wready, p_rvalid, p_rready;
  wire [1:0]  p_rlast;
  wire [63:0] p_req_addr, p_wdata, p_rdata;
  wire [3:0]  p_req_size;
  wire [15:0] p_req_len;
  wire [7:0]  p_wstrb;
  aquas_obi_port u_dport (
    .clk(clk), .rst(rst),
    .obi_req(d_req), .obi_gnt(d_gnt), .obi_addr(d_addr), .obi_we(d_we), .obi_be(d_be),
    .obi_wdata(d_wdata), .obi_rvalid(d_rvalid), .obi_rdata(d_rdata),
    .req_valid(p_req_valid[0]), .req_ready(p_req_ready[0]), .req_write(p_req_write[0]),
    .req_addr(p_req_addr[31:0]), .req_size(p_req_size[1:0]), .req_len(p_req_len[7:0]),
    .wvalid(p_wvalid[0]), .wready(p_wready[0]), .wdata(p_wdata[31:0]), .wstrb(p_wstrb[3:0]),
    .rvalid(p_rvalid[0]), .rready(p_rready[0]), .rdata(p_rdata[31:0]), .rlast(p_rlast[0])
  );
  aquas_obi_port u_iport (
    .clk(clk), .rst(rst),
    .obi_req(i_req), .obi_gnt(i_gnt), .obi_addr(i_addr), .obi_we(1'b0), .obi_be(4'hF),
    .obi_wdata(32'd0), .obi_rvalid(i_rvalid), .obi_rdata(i_rdata),
    .req_valid(p_req_valid[1]), .req_ready(p_req_ready[1]), .req_write(p_req_write[1]),
    .req_addr(p_req_addr[63:32]), .req_size(p_req_size[3:2]), .req_len(p_req_len[15:8]),
    .wvalid(p_wvalid[1]), .wready(p_wready[1]), .wdata(p_wdata[63:32]), .wstrb(p_wstrb[7:4]),
    .rvalid(p_rvalid[1]), .rready(p_rready[1]), .rdata(p_rdata[63:32]), .rlast(p_rlast[1])
  );

  // ---------------- custom instructions: X interface ----------------
  wire        x_cmd_valid, x_cmd_ready, x_rsp_valid, x_rsp_ready;
  wire [6:0]  x_opcode, x_funct7;
  wire [2:0]  x_funct3;
  wire [31:0] x_rs1, x_rs2, x_rd;
  wire        issue_accept, issue_writeback;
  xif_adapter #(.X_ID_WIDTH(X_ID_WIDTH), .NAIVE(XIF_NAIVE)) u_xif (
    .clk(clk), .rst(rst),
    .ex_ready(u_cpu.ex_ready),
    .issue_valid(xif.issue_valid), .issue_ready(xif.issue_ready),
    .issue_instr(xif.issue_req.instr), .issue_id(xif.issue_req.id),
    .issue_rs1(xif.issue_req.rs[0]), .issue_rs2(xif.issue_req.rs[1]),
    .issue_pc(u_cpu.if_id_pipe.pc),
    .issue_accept(issue_accept), .issue_writeback(issue_writeback),
    .commit_valid(xif.commit_valid), .commit_id(xif.commit.id),
    .commit_kill(xif.commit.commit_kill),
    .result_valid(xif.result_valid), .result_ready(xif.result_ready),
    .result_id(xif.result.id), .result_data(xif.result.data), .result_rd(xif.result.rd),
    .result_we(xif.result.we),
    .cmd_valid(x_cmd_valid), .cmd_ready(x_cmd_ready), .cmd_opcode(x_opcode),
    .cmd_funct3(x_funct3), .cmd_funct7(x_funct7), .cmd_rs1(x_rs1), .cmd_rs2(x_rs2),
    .cmd_pc(unattached_pc),
    .rsp_valid(x_rsp_valid), .rsp_ready(x_rsp_ready), .rsp_rd(x_rd)
  );
  assign xif.issue_resp = '{accept: issue_accept, writeback: issue_writeback, dualwrite: 1'b0,
                            dualread: 3'b000, loadstore: 1'b0, ecswrite: 1'b0, exc: 1'b0};
  assign xif.result.ecsdata = 6'd0;
  assign xif.result.ecswe = 3'd0;
  assign xif.result.exc = 1'b0;
  assign xif.result.exccode = 6'd0;
  assign xif.result.err = 1'b0;
  assign xif.result.dbg = 1'b0;
  // Unused channels: no compressed custom instructions, no memory transactions through the
  // core's LSU.
  assign xif.compressed_ready = 1'b0;
  assign xif.compressed_resp = '0;
  assign xif.mem_valid = 1'b0;
  assign xif.mem_req = '0;

  aquas_mem_system #(
    .NCORE(2), .DATA_PORT(0), .RAM_BASE(RAM_BASE), .RAM_WORDS_LOG2(RAM_WORDS_LOG2),
    .MEM_LATENCY(MEM_LATENCY), .L2_ENABLE(L2_ENABLE), .L2_LINES_LOG2(L2_LINES_LOG2),
    .L2_LINE_WORDS_LOG2(L2_LINE_WORDS_LOG2), .L2_HIT_LATENCY(L2_HIT_LATENCY),
    .DMA_SETUP(DMA_SETUP), .DMA_CHANNELS(DMA_CHANNELS), .MAX_BURST_BEATS(MAX_BURST_BEATS),
    .ISAX_WIDTH(ISAX_WIDTH), .OUTSTANDING(OUTSTANDING),
    .DEV_CONSOLE(DEV_CONSOLE), .DEV_EXIT(DEV_EXIT), .DEV_CYCLE_LO(DEV_CYCLE_LO),
    .DEV_CYCLE_HI(DEV_CYCLE_HI), .DEV_REGION_BEGIN(DEV_REGION_BEGIN),
    .DEV_REGION_END(DEV_REGION_END)
  ) u_memsys (
    .clk(clk), .rst(rst),
    .core_req_valid(p_req_valid), .core_req_ready(p_req_ready), .core_req_write(p_req_write),
    .core_req_fetch(2'b10), .core_req_addr(p_req_addr), .core_req_size(p_req_size),
    .core_req_len(p_req_len), .core_wvalid(p_wvalid), .core_wready(p_wready),
    .core_wdata(p_wdata), .core_wstrb(p_wstrb), .core_rvalid(p_rvalid), .core_rready(p_rready),
    .core_rdata(p_rdata), .core_rlast(p_rlast),
    // The LSU issues a request from EX (one access outstanding): id_ex_pipe holds its pc.
    .core_data_pc(u_cpu.id_ex_pipe.pc),
    .x_cmd_valid(x_cmd_valid), .x_cmd_ready(x_cmd_ready), .x_opcode(x_opcode),
    .x_funct3(x_funct3), .x_funct7(x_funct7), .x_rs1(x_rs1), .x_rs2(x_rs2), .x_pc(unattached_pc),
    .x_rsp_valid(x_rsp_valid), .x_rsp_ready(x_rsp_ready), .x_rd(x_rd),
    .ev_valid(ev_valid), .ev_kind(ev_kind), .ev_data(ev_data),
    .unattached(unattached), .unattached_insn(unattached_insn), .burst_too_long(burst_too_long),
    .bad_access(bad_access), .bad_master(bad_master), .bad_write(bad_write),
    .bad_start(bad_start), .bad_len(bad_len), .bad_addr(bad_addr), .bad_pc(bad_pc),
    .stat_l2_hits(stat_l2_hits), .stat_l2_misses(stat_l2_misses)
  );
endmodule

`default_nettype wire
