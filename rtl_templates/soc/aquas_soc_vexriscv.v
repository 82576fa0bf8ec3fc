// aquas reference SoC with VexRiscv (VexRiscv_FullCfu.v from pythondata-cpu-vexriscv,
// unmodified: RV32IM, 4 KiB I$ and 4 KiB write-through D$, CfuPlugin).
//
//   dBus (Wishbone) -> aquas_wb_port -> core port 0 (data) \
//   iBus (Wishbone) -> aquas_wb_port -> core port 1 (fetch) +-> aquas_mem_system (RAM, devices,
//   CfuPlugin bus -> cfu_adapter -> ISAX command -----------/    ISAX slot, bad accesses)
//
// Parameters come from the platform file (aquas/sim/platform.py, Verilator -G).
// The ISAX unit is selected with +define+AQUAS_ISAX_MODULE=<name>_isax_unit; without it the
// empty slot is attached.
`default_nettype none

module aquas_soc_vexriscv #(
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
  wire        cfu_cmd_valid, cfu_cmd_ready, cfu_rsp_valid, cfu_rsp_ready;
  wire [9:0]  cfu_fid;
  wire [31:0] cfu_in0, cfu_in1, cfu_out0;
  wire        ib_cyc, ib_stb, ib_ack, ib_we, ib_err;
  wire [29:0] ib_adr;
  wire [31:0] ib_dat_r, ib_dat_w;
  wire [3:0]  ib_sel;
  wire [2:0]  ib_cti;
  wire [1:0]  ib_bte;
  wire        db_cyc, db_stb, db_ack, db_we, db_err;
  wire [29:0] db_adr;
  wire [31:0] db_dat_r, db_dat_w;
  wire [3:0]  db_sel;
  wire [2:0]  db_cti;
  wire [1:0]  db_bte;

  VexRiscv u_cpu (
    .externalResetVector(RAM_BASE),
    .timerInterrupt(1'b0),
    .softwareInterrupt(1'b0),
    .externalInterruptArray(32'd0),
    .CfuPlugin_bus_cmd_valid(cfu_cmd_valid),
    .CfuPlugin_bus_cmd_ready(cfu_cmd_ready),
    .CfuPlugin_bus_cmd_payload_function_id(cfu_fid),
    .CfuPlugin_bus_cmd_payload_inputs_0(cfu_in0),
    .CfuPlugin_bus_cmd_payload_inputs_1(cfu_in1),
    .CfuPlugin_bus_rsp_valid(cfu_rsp_valid),
    .CfuPlugin_bus_rsp_ready(cfu_rsp_ready),
    .CfuPlugin_bus_rsp_payload_outputs_0(cfu_out0),
    .iBusWishbone_CYC(ib_cyc), .iBusWishbone_STB(ib_stb), .iBusWishbone_ACK(ib_ack),
    .iBusWishbone_WE(ib_we), .iBusWishbone_ADR(ib_adr), .iBusWishbone_DAT_MISO(ib_dat_r),
    .iBusWishbone_DAT_MOSI(ib_dat_w), .iBusWishbone_SEL(ib_sel), .iBusWishbone_ERR(ib_err),
    .iBusWishbone_CTI(ib_cti), .iBusWishbone_BTE(ib_bte),
    .dBusWishbone_CYC(db_cyc), .dBusWishbone_STB(db_stb), .dBusWishbone_ACK(db_ack),
    .dBusWishbone_WE(db_we), .dBusWishbone_ADR(db_adr), .dBusWishbone_DAT_MISO(db_dat_r),
    .dBusWishbone_DAT_MOSI(db_dat_w), .dBusWishbone_SEL(db_sel), .dBusWishbone_ERR(db_err),
    .dBusWishbone_CTI(db_cti), .dBusWishbone_BTE(db_bte),
    .clk(clk),
    .reset(rst)
  );
  assign ib_err = 1'b0;
  assign db_err = 1'b0;
  assign core_trap = 1'b0;       // VexRiscv traps to mtvec; software reports
  assign core_trap_pc = 32'd0;

  // ---------------- memory ports: 0 = dBus (data, devices), 1 = iBus (fetch) ----------------
  wire [1:0]  p_req_valid, p_req_ready, p_req_write, p_wvalid, p_wready, p_rvalid, p_rready, p_rlast;
  wire [63:0] p_req_addr, p_wdata, p_rdata;
  wire [3:0]  p_req_size;
  wire [15:0] p_req_len;
  wire [7:0]  p_wstrb;

  aquas_wb_port u_dport (
    .clk(clk), .rst(rst),
    .wb_cyc(db_cyc), .wb_stb(db_stb), .wb_we(db_we), .wb_adr(db_adr),
    .wb_dat_w(db_dat_w), .wb_sel(db_sel), .wb_cti(db_cti), .wb_ack(db_ack), .wb_dat_r(db_dat_r),
    .req_valid(p_req_valid[0]), .req_ready(p_req_ready[0]), .req_write(p_req_write[0]),
    .req_addr(p_req_addr[0*32 +: 32]), .req_size(p_req_size[0*2 +: 2]), .req_len(p_req_len[0*8 +: 8]),
    .wvalid(p_wvalid[0]), .wready(p_wready[0]), .wdata(p_wdata[0*32 +: 32]), .wstrb(p_wstrb[0*4 +: 4]),
    .rvalid(p_rvalid[0]), .rready(p_rready[0]), .rdata(p_rdata[0*32 +: 32]), .rlast(p_rlast[0])
  );
  aquas_wb_port u_iport (
    .clk(clk), .rst(rst),
    .wb_cyc(ib_cyc), .wb_stb(ib_stb), .wb_we(ib_we), .wb_adr(ib_adr),
    .wb_dat_w(ib_dat_w), .wb_sel(ib_sel), .wb_cti(ib_cti), .wb_ack(ib_ack), .wb_dat_r(ib_dat_r),
    .req_valid(p_req_valid[1]), .req_ready(p_req_ready[1]), .req_write(p_req_write[1]),
    .req_addr(p_req_addr[1*32 +: 32]), .req_size(p_req_size[1*2 +: 2]), .req_len(p_req_len[1*8 +: 8]),
    .wvalid(p_wvalid[1]), .wready(p_wready[1]), .wdata(p_wdata[1*32 +: 32]), .wstrb(p_wstrb[1*4 +: 4]),
    .rvalid(p_rvalid[1]), .rready(p_rready[1]), .rdata(p_rdata[1*32 +: 32]), .rlast(p_rlast[1])
  );

  // The pc of the instruction behind the current dBus request, for bad-access reports. The
  // data cache issues a command while the instruction is in writeBack; pipeline registers
  // delay it on its way to the Wishbone bus, so the pcs wait here in the same order (one
  // command per request: a refill burst is acknowledged as one command).
  wire        dc_push = u_cpu.dataCache_1_io_mem_cmd_valid && u_cpu.dataCache_1_io_mem_cmd_ready;
  wire        dc_pop = u_cpu.dBus_cmd_valid && u_cpu.dBus_cmd_ready;
  reg  [31:0] dpc_fifo [0:3];
  reg  [1:0]  dpc_rd, dpc_wr;
  always @(posedge clk) begin
    if (rst) begin
      dpc_rd <= 2'd0;
      dpc_wr <= 2'd0;
    end else begin
      if (dc_push) begin
        dpc_fifo[dpc_wr] <= u_cpu.writeBack_PC;
        dpc_wr <= dpc_wr + 2'd1;
      end
      if (dc_pop) dpc_rd <= dpc_rd + 2'd1;
    end
  end

  // ---------------- custom instructions ----------------
  wire        x_cmd_valid, x_cmd_ready, x_rsp_valid, x_rsp_ready;
  wire [6:0]  x_opcode, x_funct7;
  wire [2:0]  x_funct3;
  wire [31:0] x_rs1, x_rs2, x_rd;
  wire        core_cmd_valid, core_cmd_ready;

  cfu_adapter u_cfu (
    .cfu_cmd_valid(cfu_cmd_valid), .cfu_cmd_ready(cfu_cmd_ready), .cfu_cmd_function_id(cfu_fid),
    .cfu_cmd_inputs_0(cfu_in0), .cfu_cmd_inputs_1(cfu_in1), .cfu_rsp_valid(cfu_rsp_valid),
    .cfu_rsp_ready(cfu_rsp_ready), .cfu_rsp_outputs_0(cfu_out0),
    .cmd_valid(core_cmd_valid), .cmd_ready(core_cmd_ready), .cmd_opcode(x_opcode),
    .cmd_funct3(x_funct3), .cmd_funct7(x_funct7), .cmd_rs1(x_rs1), .cmd_rs2(x_rs2),
    .rsp_valid(x_rsp_valid), .rsp_ready(x_rsp_ready), .rsp_rd(x_rd)
  );
  // Memory ordering: a store the core retired before the custom instruction may still sit in
  // the dBus command pipeline. Hold the command until the dBus is idle so every older store
  // is in memory before the unit can issue a request (stores are acknowledged only then).
  assign x_cmd_valid = core_cmd_valid && !db_cyc;
  assign core_cmd_ready = x_cmd_ready && !db_cyc;
  // PC of the custom instruction (it sits in the execute stage while its command is valid).
  assign unattached_pc = u_cpu.execute_PC;

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
    .core_rdata(p_rdata), .core_rlast(p_rlast), .core_data_pc(dpc_fifo[dpc_rd]),
    .x_cmd_valid(x_cmd_valid), .x_cmd_ready(x_cmd_ready), .x_opcode(x_opcode),
    .x_funct3(x_funct3), .x_funct7(x_funct7), .x_rs1(x_rs1), .x_rs2(x_rs2), .x_pc(unattached_pc),
    .x_rsp_valid(x_rsp_valid), .x_rsp_ready(x_rsp_ready), .x_rd(x_rd),
    .ev_valid(ev_valid), .ev_kind(ev_kind), .ev_data(ev_data),
    .unattached(unattached), .unattached_insn(unattached_insn), .burst_too_long(burst_too_long),
    .bad_access(bad_access), .bad_master(bad_master), .bad_write(bad_write),
    .bad_start(bad_start), .bad_len(bad_len), .bad_addr(bad_addr), .bad_pc(bad_pc),
    .stat_l2_hits(stat_l2_hits), .stat_l2_misses(stat_l2_misses)
  );

  // Unused outputs of the core's buses (the core always reports them).
  wire _unused = &{1'b0, ib_bte, db_bte};
endmodule

`default_nettype wire
