// aquas reference SoC: main memory with configurable latency, optional shared L2 (timing
// model), and a round-robin/priority arbiter over NPORTS request ports.
//
// Ports 0 .. FIRST_DMA-1 are core ports (fixed priority, port 0 highest); ports FIRST_DMA ..
// NPORTS-1 are ISAX DMA channels (round-robin among themselves, below the core ports).
// Core ports win so that a store the core has already put on its bus reaches memory before
// an ISAX request issued after it (see docs/soc.md, "cache maintenance contract").
//
// Timing (one transaction at a time, like a single-channel DRAM controller):
//   request accepted in cycle t; `wait` cycles follow; then one beat per cycle.
//   wait = (DMA port ? DMA_SETUP : 0) + (L2 hit ? L2_HIT_LATENCY : MEM_LATENCY)
//   L2 miss: wait += LINE_WORDS (line fill), plus LINE_WORDS + MEM_LATENCY when the
//   victim line is dirty (write-back); a burst that crosses into a missing line stalls for
//   the miss penalty (MEM_LATENCY + LINE_WORDS [+ dirty eviction]) at the crossing.
//   A write request is acknowledged by one response beat in the cycle after its last data
//   beat was accepted.
// Pipelining (OUTSTANDING > 1, the target's isax_master.outstanding): while a transaction
//   is under way, up to OUTSTANDING - 1 further requests are accepted into a FIFO. Each
//   one's wait (computed as above when it is accepted) counts down from its acceptance,
//   so it overlaps the transactions before it; one data path still moves one beat per
//   cycle, and transactions start in acceptance order (so responses stay in request
//   order per port). A queued request starts its data phase in the cycle after the one
//   before it ends, or once its own wait has run out, whichever is later. With
//   OUTSTANDING = 1 the controller is the one-transaction-at-a-time model above. The L2
//   timing model is not pipelined: the target schema refuses OUTSTANDING > 1 with an L2.
// Data widths: core ports move 32-bit beats (wdata/wstrb in the low 32/4 bits of their
// DW-wide slice, read data on `rdata`); DMA ports move DW-bit beats (DW = 32, 64 or 128)
// on `rdata_wide`. The RAM is an array of 32-bit words: a DW-bit beat reads or writes the
// DW/32 consecutive words of the DW/8-byte aligned block holding its address in one cycle,
// lane-aligned (the byte at address a in lane a % (DW/8)), bytes under wstrb. The L2 model
// counts lines per beat; a line is never narrower than a beat (the target schema checks
// l2.line_bytes >= DW/8), so an aligned beat lies in one line.
// The L2 is a tag-only timing model (write-back, write-allocate, direct mapped): data always
// lives in the one RAM array, so every master sees coherent data by construction.
//
// Snoop: every beat written to RAM is reported on snoop_valid/snoop_addr in the cycle of the
// write, whichever port wrote it, so that an ISAX unit keeping scratchpad contents resident
// across calls (docs/isax-port.md, "Snoop") drops them when their memory changes.
//
// The RAM is loaded with $readmemh from the plusarg +aquas_image=<file> (word-addressed,
// index = (address - RAM_BASE) / 4). It only ever sees requests that lie wholly in RAM:
// aquas_mem_system reports every other one as a bad access instead of forwarding it.
`default_nettype none

module aquas_mem_ctrl #(
  parameter integer NPORTS = 3,
  parameter integer FIRST_DMA = 2,
  parameter [31:0]  RAM_BASE = 32'h0,
  parameter integer RAM_WORDS_LOG2 = 18,
  parameter integer MEM_LATENCY = 10,
  parameter integer DMA_SETUP = 2,
  parameter integer L2_ENABLE = 0,
  parameter integer L2_LINES_LOG2 = 10,
  parameter integer L2_LINE_WORDS_LOG2 = 3,
  parameter integer L2_HIT_LATENCY = 2,
  parameter integer DW = 32,            // DMA port data width: 32, 64 or 128
  parameter integer OUTSTANDING = 1     // transactions accepted at once (1: no FIFO)
) (
  input  wire                 clk,
  input  wire                 rst,
  input  wire [NPORTS-1:0]    req_valid,
  output reg  [NPORTS-1:0]    req_ready,
  input  wire [NPORTS-1:0]    req_write,
  input  wire [NPORTS*32-1:0] req_addr,
  input  wire [NPORTS*3-1:0]  req_size,
  input  wire [NPORTS*8-1:0]  req_len,
  input  wire [NPORTS-1:0]    wvalid,
  output reg  [NPORTS-1:0]    wready,
  input  wire [NPORTS*DW-1:0] wdata,
  input  wire [NPORTS*DW/8-1:0] wstrb,
  output reg  [NPORTS-1:0]    rvalid,
  input  wire [NPORTS-1:0]    rready,
  output wire [31:0]          rdata,        // core ports: the word at the beat's address
  output wire [DW-1:0]        rdata_wide,   // DMA ports: the aligned DW-bit block
  output wire                 rlast,
  output reg  [31:0]          stat_l2_hits,
  output reg  [31:0]          stat_l2_misses,
  // snoop: a beat is written to RAM in this cycle, by any port, at byte address
  // snoop_addr (a core beat: up to 4 bytes there; a DMA beat: the DW/8-byte block)
  output wire                 snoop_valid,
  output wire [31:0]          snoop_addr
);
  localparam integer RAM_WORDS = 1 << RAM_WORDS_LOG2;
  localparam integer L2_LINES = 1 << L2_LINES_LOG2;
  localparam integer LINE_WORDS = 1 << L2_LINE_WORDS_LOG2;
  localparam integer LINE_SHIFT = L2_LINE_WORDS_LOG2 + 2;
  localparam integer TAGW = 32 - LINE_SHIFT - L2_LINES_LOG2;
  localparam integer PW = (NPORTS > 1) ? $clog2(NPORTS) : 1;
  localparam integer BW = DW / 32;      // words per DMA beat
  localparam [1:0] S_IDLE = 2'd0, S_WAIT = 2'd1, S_XFER = 2'd2, S_WACK = 2'd3;
  localparam integer PD = OUTSTANDING - 1;          // FIFO entries behind the active one
  localparam integer PDA = (PD > 0) ? PD : 1;       // (array bounds when there is no FIFO)
  localparam integer QW = (PDA > 1) ? $clog2(PDA) : 1;

  reg [31:0] ram [0:RAM_WORDS-1];
  reg [8*512-1:0] image_file;
  initial begin
    if ($value$plusargs("aquas_image=%s", image_file)) $readmemh(image_file, ram);
  end

  // ---- L2 tags (timing model) ----
  reg [TAGW-1:0] l2_tag   [0:L2_LINES-1];
  reg            l2_valid [0:L2_LINES-1];
  reg            l2_dirty [0:L2_LINES-1];

  // ---- transaction state ----
  reg [1:0]    state;
  reg [PW-1:0] owner;
  reg          cur_write;
  reg [31:0]   cur_addr;
  reg [2:0]    cur_size;
  reg [7:0]    left;
  reg [15:0]   wait_cnt;

  // ---- FIFO of accepted requests waiting for the data path (OUTSTANDING > 1) ----
  reg [PW-1:0] q_owner [0:PDA-1];
  reg          q_write [0:PDA-1];
  reg [31:0]   q_addr  [0:PDA-1];
  reg [2:0]    q_size  [0:PDA-1];
  reg [7:0]    q_len   [0:PDA-1];
  reg [15:0]   q_cnt   [0:PDA-1];   // wait cycles left before its data phase may start
  reg [QW-1:0] q_head, q_tail;
  reg [QW:0]   q_count;

  // ---- arbitration: core ports by fixed priority, then DMA channels round-robin ----
  reg [PW-1:0] rr;     // next DMA channel to favour
  reg [PW-1:0] pick;
  reg          found;
  integer i;
  always @* begin
    found = 1'b0;
    pick = {PW{1'b0}};
    for (i = 0; i < FIRST_DMA; i = i + 1)
      if (!found && req_valid[i]) begin found = 1'b1; pick = i[PW-1:0]; end
    for (i = 0; i < NPORTS - FIRST_DMA; i = i + 1) begin : rr_scan
      /* verilator lint_off UNUSEDSIGNAL */  // k < NPORTS: only its low PW bits are used
      integer k;
      /* verilator lint_on UNUSEDSIGNAL */
      k = FIRST_DMA + ((({{(32-PW){1'b0}}, rr} - FIRST_DMA) + i) % (NPORTS - FIRST_DMA));
      if (!found && req_valid[k]) begin found = 1'b1; pick = k[PW-1:0]; end
    end
  end

  // a request goes straight to the data path when it is idle and nothing is queued,
  // else into the FIFO while it has room
  wire direct = (state == S_IDLE) && (PD == 0 || q_count == 0);
  wire enq = found && !direct && PD > 0 && (q_count < (QW+1)'(PDA));
  always @* begin
    req_ready = {NPORTS{1'b0}};
    if ((direct || enq) && found) req_ready[pick] = 1'b1;
    wready = {NPORTS{1'b0}};
    if (state == S_XFER && cur_write) wready[owner] = 1'b1;
    rvalid = {NPORTS{1'b0}};
    if ((state == S_XFER && !cur_write) || state == S_WACK) rvalid[owner] = 1'b1;
  end

  wire [RAM_WORDS_LOG2-1:0] word_idx = cur_addr[RAM_WORDS_LOG2+1:2] - RAM_BASE[RAM_WORDS_LOG2+1:2];
  assign rdata = ram[word_idx];
  // the block's first word: word_idx with its low BW_LOG2 bits cleared
  wire [RAM_WORDS_LOG2-1:0] block_idx = word_idx & ~RAM_WORDS_LOG2'(BW - 1);
  genvar g;
  generate
    for (g = 0; g < BW; g = g + 1) begin : g_rd
      assign rdata_wide[g*32 +: 32] = ram[block_idx + RAM_WORDS_LOG2'(g)];
    end
  endgenerate
  wire owner_dma = {{(32-PW){1'b0}}, owner} >= FIRST_DMA;
  assign rlast = (state == S_WACK) || (left == 8'd0);

  // L2 lookup of an address; returns the wait the access costs and updates the tags.
  wire [31:0] step = 32'd1 << cur_size;
  wire [31:0] next_addr = cur_addr + step;
  /* verilator lint_off UNUSEDSIGNAL */  // the byte-in-line offset does not select a line
  wire [31:0] acc_addr = (state == S_IDLE) ? req_addr[pick*32 +: 32] : next_addr;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [L2_LINES_LOG2-1:0] l2_idx = acc_addr[LINE_SHIFT +: L2_LINES_LOG2];
  wire [TAGW-1:0] l2_t = acc_addr[31 -: TAGW];
  wire l2_hit = l2_valid[l2_idx] && (l2_tag[l2_idx] == l2_t);
  wire [15:0] miss_pen = 16'(MEM_LATENCY + LINE_WORDS)
                         + ((l2_valid[l2_idx] && l2_dirty[l2_idx]) ? 16'(MEM_LATENCY + LINE_WORDS) : 16'd0);
  wire crosses_line = (next_addr[LINE_SHIFT-1:0] == {LINE_SHIFT{1'b0}});
  wire acc_write = (state == S_IDLE) ? req_write[pick] : cur_write;
  wire [15:0] setup = (state == S_IDLE && {{(32-PW){1'b0}}, pick} >= FIRST_DMA) ? 16'(DMA_SETUP) : 16'd0;

  wire beat = (state == S_XFER) && (cur_write ? wvalid[owner] : rready[owner]);
  assign snoop_valid = beat && cur_write;
  assign snoop_addr = cur_addr;
  // the active transaction ends in this cycle (the data path is free in the next one)
  wire ending = (state == S_XFER && beat && left == 8'd0 && !cur_write)
                || (state == S_WACK && rready[owner]);
  wire pop = PD > 0 && q_count != 0 && (state == S_IDLE || ending);
  wire [15:0] q_wait = setup + 16'(MEM_LATENCY);  // a queued request's wait (no L2)

  integer j;
  always @(posedge clk) begin
    if (rst) begin
      state <= S_IDLE;
      owner <= {PW{1'b0}};
      rr <= FIRST_DMA[PW-1:0];
      cur_write <= 1'b0;
      cur_addr <= 32'd0;
      cur_size <= 3'd2;
      left <= 8'd0;
      wait_cnt <= 16'd0;
      stat_l2_hits <= 32'd0;
      stat_l2_misses <= 32'd0;
      q_head <= {QW{1'b0}};
      q_tail <= {QW{1'b0}};
      q_count <= {(QW+1){1'b0}};
      for (j = 0; j < PDA; j = j + 1) q_cnt[j] <= 16'd0;
      for (j = 0; j < L2_LINES; j = j + 1) begin
        l2_valid[j] <= 1'b0;
        l2_dirty[j] <= 1'b0;
        l2_tag[j] <= {TAGW{1'b0}};
      end
    end else begin
      // the FIFO: waits count down; enqueue at the tail, pop at the head
      if (PD > 0) begin
        for (j = 0; j < PDA; j = j + 1)
          if (q_cnt[j] != 16'd0) q_cnt[j] <= q_cnt[j] - 16'd1;
        if (enq && found) begin
          q_owner[q_tail] <= pick;
          q_write[q_tail] <= req_write[pick];
          q_addr[q_tail] <= req_addr[pick*32 +: 32];
          q_size[q_tail] <= req_size[pick*3 +: 3];
          q_len[q_tail] <= req_len[pick*8 +: 8];
          q_cnt[q_tail] <= q_wait;
          q_tail <= (q_tail == QW'(PDA - 1)) ? {QW{1'b0}} : q_tail + 1'b1;
          if ({{(32-PW){1'b0}}, pick} >= FIRST_DMA)
            rr <= ({{(32-PW){1'b0}}, pick} + 1 >= NPORTS) ? FIRST_DMA[PW-1:0] : pick + 1'b1;
        end
        if (pop) q_head <= (q_head == QW'(PDA - 1)) ? {QW{1'b0}} : q_head + 1'b1;
        q_count <= q_count + (QW+1)'(enq && found) - (QW+1)'(pop);
      end
      if (pop) begin
        // the head takes the data path in the next cycle, or waits out what is left
        owner <= q_owner[q_head];
        cur_write <= q_write[q_head];
        cur_addr <= q_addr[q_head];
        cur_size <= q_size[q_head];
        left <= q_len[q_head];
        if (q_cnt[q_head] <= 16'd1) state <= S_XFER;
        else state <= S_WAIT;
        wait_cnt <= q_cnt[q_head] - 16'd1;
      end else
      case (state)
        S_IDLE: if (found && direct) begin
          owner <= pick;
          cur_write <= req_write[pick];
          cur_addr <= req_addr[pick*32 +: 32];
          cur_size <= req_size[pick*3 +: 3];
          left <= req_len[pick*8 +: 8];
          if ({{(32-PW){1'b0}}, pick} >= FIRST_DMA)
            rr <= ({{(32-PW){1'b0}}, pick} + 1 >= NPORTS) ? FIRST_DMA[PW-1:0] : pick + 1'b1;
          if (L2_ENABLE != 0) begin
            if (l2_hit) begin
              stat_l2_hits <= stat_l2_hits + 1;
              if (setup + 16'(L2_HIT_LATENCY) == 16'd0) state <= S_XFER;
              else state <= S_WAIT;
              wait_cnt <= setup + 16'(L2_HIT_LATENCY);
            end else begin
              stat_l2_misses <= stat_l2_misses + 1;
              state <= S_WAIT;
              wait_cnt <= setup + miss_pen;
            end
            l2_valid[l2_idx] <= 1'b1;
            l2_tag[l2_idx] <= l2_t;
            l2_dirty[l2_idx] <= acc_write | (l2_hit & l2_dirty[l2_idx]);
          end else begin
            if (setup + 16'(MEM_LATENCY) == 16'd0) state <= S_XFER;
            else state <= S_WAIT;
            wait_cnt <= setup + 16'(MEM_LATENCY);
          end
        end
        S_WAIT: begin
          if (wait_cnt <= 16'd1) state <= S_XFER;
          wait_cnt <= wait_cnt - 16'd1;
        end
        S_XFER: if (beat) begin
          if (cur_write && !owner_dma) begin
            if (wstrb[owner*(DW/8) + 0]) ram[word_idx][7:0]   <= wdata[owner*DW + 0  +: 8];
            if (wstrb[owner*(DW/8) + 1]) ram[word_idx][15:8]  <= wdata[owner*DW + 8  +: 8];
            if (wstrb[owner*(DW/8) + 2]) ram[word_idx][23:16] <= wdata[owner*DW + 16 +: 8];
            if (wstrb[owner*(DW/8) + 3]) ram[word_idx][31:24] <= wdata[owner*DW + 24 +: 8];
          end
          if (cur_write && owner_dma)
            for (j = 0; j < DW / 8; j = j + 1)
              if (wstrb[owner*(DW/8) + j])
                ram[block_idx + RAM_WORDS_LOG2'(j / 4)][(j % 4)*8 +: 8] <= wdata[owner*DW + j*8 +: 8];
          if (left == 8'd0) begin
            state <= cur_write ? S_WACK : S_IDLE;
          end else begin
            left <= left - 8'd1;
            cur_addr <= next_addr;
            if (L2_ENABLE != 0 && crosses_line) begin
              l2_valid[l2_idx] <= 1'b1;
              l2_tag[l2_idx] <= l2_t;
              l2_dirty[l2_idx] <= acc_write | (l2_hit & l2_dirty[l2_idx]);
              if (l2_hit) stat_l2_hits <= stat_l2_hits + 1;
              else begin
                stat_l2_misses <= stat_l2_misses + 1;
                state <= S_WAIT;
                wait_cnt <= miss_pen;
              end
            end
          end
        end
        default: if (rready[owner]) state <= S_IDLE;  // S_WACK
      endcase
    end
  end
endmodule

`default_nettype wire
