// aquas reference SoC with VexRiscv (VexRiscv_FullCfu.v from pythondata-cpu-vexriscv,
// unmodified: RV32IM, 4 KiB I$ and 4 KiB write-through D$, CfuPlugin).
//
//   iBus (Wishbone) ----> port 1 \
//   dBus (Wishbone) -+--> port 0  +--> aquas_mem_ctrl (arbiter, optional L2, RAM)
//                    |           /
//   ISAX mem master -+--------> port 2 (DMA channel 0; channels 1.. tied off)
//                    +--> devices when address bit 31 is set (the core's I/O range)
//   CfuPlugin bus --> aquas_cfu_adapter --> ISAX unit (`AQUAS_ISAX_MODULE) or empty slot
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
  localparam integer NPORTS = 2 + DMA_CHANNELS;

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

  // ---------------- dBus: devices (address bit 31 set) or memory ----------------
  wire dev_sel = db_adr[29];
  wire        dev_ack;
  wire [31:0] dev_rdata;
  wire [63:0] dev_cycles;
  wire        dbm_ack;
  wire [31:0] dbm_dat_r;
  assign db_ack = dev_sel ? dev_ack : dbm_ack;
  assign db_dat_r = dev_sel ? dev_rdata : dbm_dat_r;

  aquas_devices #(
    .DEV_CONSOLE(DEV_CONSOLE), .DEV_EXIT(DEV_EXIT), .DEV_CYCLE_LO(DEV_CYCLE_LO),
    .DEV_CYCLE_HI(DEV_CYCLE_HI), .DEV_REGION_BEGIN(DEV_REGION_BEGIN),
    .DEV_REGION_END(DEV_REGION_END)
  ) u_dev (
    .clk(clk), .rst(rst),
    .valid(db_cyc && db_stb && dev_sel), .write(db_we), .addr({db_adr, 2'b00}),
    .wdata(db_dat_w), .ack(dev_ack), .rdata(dev_rdata), .cycles(dev_cycles),
    .ev_valid(ev_valid), .ev_kind(ev_kind), .ev_data(ev_data)
  );

  // ---------------- memory ports ----------------
  wire [NPORTS-1:0]    p_req_valid, p_req_ready, p_req_write, p_wvalid, p_wready, p_rvalid, p_rready;
  wire [NPORTS*32-1:0] p_req_addr, p_wdata;
  wire [NPORTS*2-1:0]  p_req_size;
  wire [NPORTS*8-1:0]  p_req_len;
  wire [NPORTS*4-1:0]  p_wstrb;
  wire [31:0]          m_rdata;
  wire                 m_rlast;

  aquas_wb_port u_dport (
    .clk(clk), .rst(rst),
    .wb_cyc(db_cyc && !dev_sel), .wb_stb(db_stb), .wb_we(db_we), .wb_adr(db_adr),
    .wb_dat_w(db_dat_w), .wb_sel(db_sel), .wb_cti(db_cti), .wb_ack(dbm_ack), .wb_dat_r(dbm_dat_r),
    .req_valid(p_req_valid[0]), .req_ready(p_req_ready[0]), .req_write(p_req_write[0]),
    .req_addr(p_req_addr[0*32 +: 32]), .req_size(p_req_size[0*2 +: 2]), .req_len(p_req_len[0*8 +: 8]),
    .wvalid(p_wvalid[0]), .wready(p_wready[0]), .wdata(p_wdata[0*32 +: 32]), .wstrb(p_wstrb[0*4 +: 4]),
    .rvalid(p_rvalid[0]), .rready(p_rready[0]), .rdata(m_rdata), .rlast(m_rlast)
  );
  aquas_wb_port u_iport (
    .clk(clk), .rst(rst),
    .wb_cyc(ib_cyc), .wb_stb(ib_stb), .wb_we(ib_we), .wb_adr(ib_adr),
    .wb_dat_w(ib_dat_w), .wb_sel(ib_sel), .wb_cti(ib_cti), .wb_ack(ib_ack), .wb_dat_r(ib_dat_r),
    .req_valid(p_req_valid[1]), .req_ready(p_req_ready[1]), .req_write(p_req_write[1]),
    .req_addr(p_req_addr[1*32 +: 32]), .req_size(p_req_size[1*2 +: 2]), .req_len(p_req_len[1*8 +: 8]),
    .wvalid(p_wvalid[1]), .wready(p_wready[1]), .wdata(p_wdata[1*32 +: 32]), .wstrb(p_wstrb[1*4 +: 4]),
    .rvalid(p_rvalid[1]), .rready(p_rready[1]), .rdata(m_rdata), .rlast(m_rlast)
  );

  // ---------------- ISAX unit ----------------
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
  // PC of the custom instruction (it sits in the execute stage while its command is valid).
  assign unattached_pc = u_cpu.execute_PC;

  // DMA channel 0 = the unit's memory master; further channels are idle in this SoC.
  assign p_req_valid[2] = u_req_valid;
  assign u_req_ready = p_req_ready[2];
  assign p_req_write[2] = u_req_write;
  assign p_req_addr[2*32 +: 32] = u_req_addr;
  assign p_req_size[2*2 +: 2] = u_req_size;
  assign p_req_len[2*8 +: 8] = u_req_len;
  assign p_wvalid[2] = u_wvalid;
  assign u_wready = p_wready[2];
  assign p_wdata[2*32 +: 32] = u_wdata;
  assign p_wstrb[2*4 +: 4] = u_wstrb;
  assign u_rsp_valid = p_rvalid[2];
  assign p_rready[2] = u_rsp_ready;
  assign burst_too_long = u_req_valid && ({24'd0, u_req_len} >= MAX_BURST_BEATS);
  genvar c;
  generate
    for (c = 3; c < NPORTS; c = c + 1) begin : g_idle_dma
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
    .NPORTS(NPORTS), .FIRST_DMA(2), .RAM_BASE(RAM_BASE), .RAM_WORDS_LOG2(RAM_WORDS_LOG2),
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

  // Unused outputs of the core and of its buses (the core always reports them).
  wire _unused = &{1'b0, ib_bte, db_bte, u_wlast, dev_cycles, unattached_insn[0]};
endmodule

`default_nettype wire
