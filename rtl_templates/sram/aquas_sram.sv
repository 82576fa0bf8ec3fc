// ${name}: behavioural SRAM model of scratchpad banks (aquas, docs/synthesis.md).
// ${depth} words of ${width} bits, ${ports} read/write port(s) p, each on its own:
// - en<p> = 1 accesses word addr<p> in this cycle; we<p> = 1 writes wdata<p> at the clock
//   edge, otherwise it reads: rdata<p> holds that word from the next cycle on (registered
//   read port, latency 1 cycle) and keeps it until the port's next read.
// - a read in the cycle another port writes the same word returns the old word.
// Contents start at zero (simulation and FPGA initial values); rst does not clear them.
// Yosys treats the model as a black box: the flow prices memories apart from logic.
(* blackbox *)
module ${name} (
    input logic clk,
${port_decls}
);
  logic [${width_m1}:0] mem[${depth}];
  initial begin
    for (int i = 0; i < ${depth}; i++) mem[i] = '0;
  end
  always_ff @(posedge clk) begin
${port_logic}
  end
endmodule
