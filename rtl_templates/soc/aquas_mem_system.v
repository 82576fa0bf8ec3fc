// aquas reference SoC: the memory system both SoC tops share. A top converts its core's
// buses to request ports (aquas_mem_ctrl's port protocol) and its custom-instruction bus to
// the canonical command channel; everything behind that lives here:
//
//   core port 0 .. NCORE-1 --+-- RAM ------------------------------> aquas_mem_ctrl
//   (fixed priority)         +-- devices (DATA_PORT, bit 31 set) --> aquas_devices     (RAM,
//                            +-- anything else: bad access                              optional
//   ISAX command --> aquas_isax_slot --> memory master = DMA channel 0 -----------------> L2)
//                                        (channels 1 .. DMA_CHANNELS-1 are tied off)
//
// Widths. The core ports are 32 bits wide. The ISAX memory master (the unit's canonical port
// and the DMA channels) is ISAX_WIDTH bits wide (32, 64 or 128, the target's
// isax_master.bus_width): its beats carry ISAX_WIDTH/8 bytes, lane-aligned.
//
// Address decode. RAM is [RAM_BASE, RAM_BASE + 4 << RAM_WORDS_LOG2); a request goes to RAM
// only when every byte of all its beats lies there. A data request of DATA_PORT with bit 31
// set goes to the devices when it names a device register in the right direction. Every other
// request - past the end of RAM, below its base, an unknown I/O address, an instruction fetch
// from I/O, any ISAX access outside RAM - is never accepted; `bad_access` reports the first
// one from the next cycle on (it stays set) so the harness ends the run instead of letting
// the access alias into RAM.
//
// Devices are reached through a bridge that keeps their timing: a request accepted in cycle
// t is acknowledged (rvalid, and wready for a write) in t+1, as the devices acknowledge one
// cycle after `valid`.
`default_nettype none

module aquas_mem_system #(
  parameter integer NCORE = 1,       // core request ports
  parameter integer DATA_PORT = 0,   // the core port whose data requests may reach the devices
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
  input  wire                clk,
  input  wire                rst,
  // core request ports (aquas_mem_ctrl protocol; one request outstanding per port)
  input  wire [NCORE-1:0]    core_req_valid,
  output wire [NCORE-1:0]    core_req_ready,
  input  wire [NCORE-1:0]    core_req_write,
  input  wire [NCORE-1:0]    core_req_fetch,   // the request is an instruction fetch
  input  wire [NCORE*32-1:0] core_req_addr,
  input  wire [NCORE*2-1:0]  core_req_size,
  input  wire [NCORE*8-1:0]  core_req_len,
  input  wire [NCORE-1:0]    core_wvalid,
  output wire [NCORE-1:0]    core_wready,
  input  wire [NCORE*32-1:0] core_wdata,
  input  wire [NCORE*4-1:0]  core_wstrb,
  output wire [NCORE-1:0]    core_rvalid,
  input  wire [NCORE-1:0]    core_rready,
  output wire [NCORE*32-1:0] core_rdata,
  output wire [NCORE-1:0]    core_rlast,
  input  wire [31:0]         core_data_pc,     // pc of the instruction behind a data request
  // custom instructions (canonical command/response channels, from the core's adapter)
  input  wire                x_cmd_valid,
  output wire                x_cmd_ready,
  input  wire [6:0]          x_opcode,
  input  wire [2:0]          x_funct3,
  input  wire [6:0]          x_funct7,
  input  wire [31:0]         x_rs1,
  input  wire [31:0]         x_rs2,
  input  wire [31:0]         x_pc,             // pc of the custom instruction while x_cmd_valid
  output wire                x_rsp_valid,
  input  wire                x_rsp_ready,
  output wire [31:0]         x_rd,
  // to the simulation harness
  output wire                ev_valid,
  output wire [2:0]          ev_kind,
  output wire [31:0]         ev_data,
  output wire                unattached,
  output wire [16:0]         unattached_insn,
  output wire                burst_too_long,
  output wire                bad_access,
  output reg  [3:0]          bad_master,       // 0 core fetch, 1 core data, 2 + n ISAX channel n
  output reg                 bad_write,
  output reg  [31:0]         bad_start,        // the request's address
  output reg  [7:0]          bad_len,          // its beats - 1
  output reg  [31:0]         bad_addr,         // the first byte address outside RAM and devices
  output reg  [31:0]         bad_pc,           // core data: core_data_pc; ISAX: x_pc; fetch: 0
  output wire [31:0]         stat_l2_hits,
  output wire [31:0]         stat_l2_misses
);
  localparam integer NPORTS = NCORE + DMA_CHANNELS;
  localparam integer UNIT = NCORE;  // port of DMA channel 0, the ISAX unit's memory master
  localparam [33:0] RAM_SIZE = 34'd1 << (RAM_WORDS_LOG2 + 2);
  localparam integer DW = ISAX_WIDTH;

  // Offset of an address from the RAM base, 34 bits wide: an address below the base wraps to
  // a value far above RAM_SIZE, and a request's end cannot wrap at 2^32.
  function automatic [33:0] ram_off(input [31:0] a);
    ram_off = {2'b00, a} - {2'b00, RAM_BASE};
  endfunction
  function automatic in_ram(input [31:0] a, input [2:0] size, input [7:0] len);
    in_ram = (ram_off(a) < RAM_SIZE) && (ram_off(a) + (({26'd0, len} + 34'd1) << size) <= RAM_SIZE);
  endfunction
  // The first beat address outside RAM: the start itself, or the first beat past the end.
  function automatic [31:0] first_outside(input [31:0] a, input [2:0] size);
    reg [33:0] beats_in;
    begin
      if (ram_off(a) >= RAM_SIZE) first_outside = a;
      else begin
        beats_in = (RAM_SIZE - ram_off(a) + (34'd1 << size) - 34'd1) >> size;
        first_outside = a + 32'(beats_in << size);
      end
    end
  endfunction

  wire [NPORTS-1:0]    p_req_valid, p_req_ready, p_req_write, p_wvalid, p_wready, p_rvalid, p_rready;
  wire [NPORTS*32-1:0] p_req_addr;
  wire [NPORTS*DW-1:0] p_wdata;
  wire [NPORTS*3-1:0]  p_req_size;
  wire [NPORTS*8-1:0]  p_req_len;
  wire [NPORTS*DW/8-1:0] p_wstrb;
  wire [31:0]          m_rdata;
  wire [DW-1:0]        m_rdata_wide;
  wire                 m_rlast;

  // ---------------- devices, behind the bridge on DATA_PORT ----------------
  wire [31:0] d_addr = core_req_addr[DATA_PORT*32 +: 32];
  wire        d_write = core_req_write[DATA_PORT];
  reg         dev_busy, dev_hold, dev_write_q;
  reg  [31:0] dev_addr_q, dev_rdata_q;
  wire        dev_ack, dev_mapped;
  wire [31:0] dev_rdata;
  wire [63:0] dev_cycles;
  // dev_mapped describes the live request while the bridge is idle.
  wire d_is_dev = d_addr[31] && !core_req_fetch[DATA_PORT] && dev_mapped;
  wire dev_start = core_req_valid[DATA_PORT] && d_is_dev && !dev_busy;
  wire dev_valid = dev_start
                   || (dev_busy && !dev_hold && (!dev_write_q || core_wvalid[DATA_PORT]));
  wire dev_fire = dev_busy && dev_valid && dev_ack;
  wire dev_rvalid = dev_fire || dev_hold;
  aquas_devices #(
    .DEV_CONSOLE(DEV_CONSOLE), .DEV_EXIT(DEV_EXIT), .DEV_CYCLE_LO(DEV_CYCLE_LO),
    .DEV_CYCLE_HI(DEV_CYCLE_HI), .DEV_REGION_BEGIN(DEV_REGION_BEGIN),
    .DEV_REGION_END(DEV_REGION_END)
  ) u_dev (
    .clk(clk), .rst(rst),
    .valid(dev_valid), .write(dev_busy ? dev_write_q : d_write),
    .addr(dev_busy ? dev_addr_q : d_addr), .wdata(core_wdata[DATA_PORT*32 +: 32]),
    .ack(dev_ack), .rdata(dev_rdata), .cycles(dev_cycles), .mapped(dev_mapped),
    .ev_valid(ev_valid), .ev_kind(ev_kind), .ev_data(ev_data)
  );
  always @(posedge clk) begin
    if (rst) begin
      dev_busy <= 1'b0;
      dev_hold <= 1'b0;
      dev_write_q <= 1'b0;
      dev_addr_q <= 32'd0;
      dev_rdata_q <= 32'd0;
    end else begin
      if (dev_start) begin
        dev_busy <= 1'b1;
        dev_write_q <= d_write;
        dev_addr_q <= d_addr;
      end
      if (dev_fire && !core_rready[DATA_PORT]) begin
        dev_hold <= 1'b1;
        dev_rdata_q <= dev_rdata;
      end
      if (dev_rvalid && core_rready[DATA_PORT]) begin
        dev_busy <= 1'b0;
        dev_hold <= 1'b0;
      end
    end
  end

  // ---------------- core ports: RAM, devices or bad ----------------
  wire [NCORE-1:0] c_bad;
  genvar c;
  generate
    for (c = 0; c < NCORE; c = c + 1) begin : g_core
      wire [31:0] a = core_req_addr[c*32 +: 32];
      wire ram = in_ram(a, {1'b0, core_req_size[c*2 +: 2]}, core_req_len[c*8 +: 8]);
      wire dev = (c == DATA_PORT) && d_is_dev;
      wire bridge = (c == DATA_PORT) && dev_busy;
      assign c_bad[c] = core_req_valid[c] && !ram && !dev;
      assign p_req_valid[c] = core_req_valid[c] && ram;
      assign p_req_write[c] = core_req_write[c];
      assign p_req_addr[c*32 +: 32] = a;
      assign p_req_size[c*3 +: 3] = {1'b0, core_req_size[c*2 +: 2]};
      assign p_req_len[c*8 +: 8] = core_req_len[c*8 +: 8];
      assign p_wvalid[c] = core_wvalid[c];
      assign p_wdata[c*DW +: DW] = DW'(core_wdata[c*32 +: 32]);
      assign p_wstrb[c*(DW/8) +: DW/8] = (DW/8)'(core_wstrb[c*4 +: 4]);
      assign p_rready[c] = core_rready[c];
      assign core_req_ready[c] = p_req_ready[c] || (dev && !dev_busy);
      assign core_wready[c] = bridge ? dev_fire : p_wready[c];
      assign core_rvalid[c] = bridge ? dev_rvalid : p_rvalid[c];
      assign core_rdata[c*32 +: 32] = !bridge ? m_rdata : (dev_hold ? dev_rdata_q : dev_rdata);
      assign core_rlast[c] = bridge ? 1'b1 : m_rlast;
    end
  endgenerate

  // ---------------- ISAX slot; its memory master is DMA channel 0 ----------------
  wire        u_req_valid, u_req_write, u_wvalid, u_wlast, u_rsp_ready;
  wire [31:0] u_req_addr;
  wire [DW-1:0] u_wdata;
  wire [2:0]  u_req_size;
  wire [7:0]  u_req_len;
  wire [DW/8-1:0] u_wstrb;
  // every write to RAM, for a unit that keeps scratchpads resident (docs/isax-port.md)
  wire snoop_valid;
  wire [31:0] snoop_addr;
  aquas_isax_slot #(.W(DW)) u_slot (
    .clk(clk), .rst(rst),
    .snoop_valid(snoop_valid), .snoop_addr(snoop_addr),
    .cmd_valid(x_cmd_valid), .cmd_ready(x_cmd_ready), .cmd_opcode(x_opcode), .cmd_funct3(x_funct3),
    .cmd_funct7(x_funct7), .cmd_rs1(x_rs1), .cmd_rs2(x_rs2),
    .rsp_valid(x_rsp_valid), .rsp_ready(x_rsp_ready), .rsp_rd(x_rd),
    .mem_req_valid(u_req_valid), .mem_req_ready(p_req_ready[UNIT]), .mem_req_write(u_req_write),
    .mem_req_addr(u_req_addr), .mem_req_size(u_req_size), .mem_req_len(u_req_len),
    .mem_wdata_valid(u_wvalid), .mem_wdata_ready(p_wready[UNIT]), .mem_wdata(u_wdata),
    .mem_wstrb(u_wstrb), .mem_wlast(u_wlast),
    .mem_rsp_valid(p_rvalid[UNIT]), .mem_rsp_ready(u_rsp_ready), .mem_rsp_rdata(m_rdata_wide),
    .mem_rsp_last(m_rlast),
    .unattached(unattached), .unattached_insn(unattached_insn)
  );
  wire u_ram = in_ram(u_req_addr, u_req_size, u_req_len);
  wire u_bad = u_req_valid && !u_ram;
  assign p_req_valid[UNIT] = u_req_valid && u_ram;
  assign p_req_write[UNIT] = u_req_write;
  assign p_req_addr[UNIT*32 +: 32] = u_req_addr;
  assign p_req_size[UNIT*3 +: 3] = u_req_size;
  assign p_req_len[UNIT*8 +: 8] = u_req_len;
  assign p_wvalid[UNIT] = u_wvalid;
  assign p_wdata[UNIT*DW +: DW] = u_wdata;
  assign p_wstrb[UNIT*(DW/8) +: DW/8] = u_wstrb;
  assign p_rready[UNIT] = u_rsp_ready;
  assign burst_too_long = u_req_valid && ({24'd0, u_req_len} >= MAX_BURST_BEATS);
  generate
    for (c = UNIT + 1; c < NPORTS; c = c + 1) begin : g_idle_dma
      assign p_req_valid[c] = 1'b0;
      assign p_req_write[c] = 1'b0;
      assign p_req_addr[c*32 +: 32] = 32'd0;
      assign p_req_size[c*3 +: 3] = 3'd2;
      assign p_req_len[c*8 +: 8] = 8'd0;
      assign p_wvalid[c] = 1'b0;
      assign p_wdata[c*DW +: DW] = {DW{1'b0}};
      assign p_wstrb[c*(DW/8) +: DW/8] = {(DW/8){1'b0}};
      assign p_rready[c] = 1'b1;
    end
  endgenerate

  // The pc of the custom instruction whose unit is accessing memory (the unit may issue its
  // requests after the core has moved the instruction on in its pipeline).
  reg  [31:0] x_pc_q;
  wire [31:0] x_pc_now = (x_cmd_valid && x_cmd_ready) ? x_pc : x_pc_q;
  always @(posedge clk) begin
    if (rst) x_pc_q <= 32'd0;
    else if (x_cmd_valid && x_cmd_ready) x_pc_q <= x_pc;
  end

  // ---------------- bad-access report: the lowest core port first, then the unit ----------
  // Latched in the cycle the request appears (it is never accepted, so nothing changes
  // meanwhile) and reported from the next cycle on: the details are then computed once, not
  // in every simulated cycle.
  reg bad_q;
  assign bad_access = bad_q;
  integer k;
  always @(posedge clk) begin
    if (rst) begin
      bad_q <= 1'b0;
      bad_master <= 4'd0;
      bad_write <= 1'b0;
      bad_start <= 32'd0;
      bad_len <= 8'd0;
      bad_addr <= 32'd0;
      bad_pc <= 32'd0;
    end else if (((|c_bad) || u_bad) && !bad_q) begin
      bad_q <= 1'b1;
      bad_master <= 4'd2;
      bad_write <= u_req_write;
      bad_start <= u_req_addr;
      bad_len <= u_req_len;
      bad_addr <= first_outside(u_req_addr, u_req_size);
      bad_pc <= x_pc_now;
      for (k = NCORE - 1; k >= 0; k = k - 1)
        if (c_bad[k]) begin
          bad_master <= core_req_fetch[k] ? 4'd0 : 4'd1;
          bad_write <= core_req_write[k];
          bad_start <= core_req_addr[k*32 +: 32];
          bad_len <= core_req_len[k*8 +: 8];
          bad_addr <= first_outside(core_req_addr[k*32 +: 32], {1'b0, core_req_size[k*2 +: 2]});
          bad_pc <= core_req_fetch[k] ? 32'd0 : core_data_pc;
        end
    end
  end

  aquas_mem_ctrl #(
    .NPORTS(NPORTS), .FIRST_DMA(NCORE), .RAM_BASE(RAM_BASE), .RAM_WORDS_LOG2(RAM_WORDS_LOG2),
    .MEM_LATENCY(MEM_LATENCY), .DMA_SETUP(DMA_SETUP), .L2_ENABLE(L2_ENABLE),
    .L2_LINES_LOG2(L2_LINES_LOG2), .L2_LINE_WORDS_LOG2(L2_LINE_WORDS_LOG2),
    .L2_HIT_LATENCY(L2_HIT_LATENCY), .DW(DW), .OUTSTANDING(OUTSTANDING)
  ) u_mem (
    .clk(clk), .rst(rst),
    .req_valid(p_req_valid), .req_ready(p_req_ready), .req_write(p_req_write),
    .req_addr(p_req_addr), .req_size(p_req_size), .req_len(p_req_len),
    .wvalid(p_wvalid), .wready(p_wready), .wdata(p_wdata), .wstrb(p_wstrb),
    .rvalid(p_rvalid), .rready(p_rready), .rdata(m_rdata), .rdata_wide(m_rdata_wide), .rlast(m_rlast),
    .stat_l2_hits(stat_l2_hits), .stat_l2_misses(stat_l2_misses),
    .snoop_valid(snoop_valid), .snoop_addr(snoop_addr)
  );

  // The unit's wlast is implied by its beat count; the harness counts cycles itself.
  wire _unused = &{1'b0, u_wlast, dev_cycles};
endmodule

`default_nettype wire
