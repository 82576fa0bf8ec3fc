// ${name}: behavioural SRAM model of scratchpad banks (aquas, docs/synthesis.md).
// ${depth} words of ${width} bits, ${ports} read/write port(s) p, each on its own:
// - en<p> = 1 accesses word addr<p> in this cycle; we<p> = 1 writes wdata<p> at the clock
//   edge, otherwise it reads: rdata<p> holds that word from the next cycle on (registered
//   read port, latency 1 cycle) and keeps it until the port's next read.
// - a read in the cycle another port writes the same word returns the old word.
// Contents start undefined, as a macro's do at power-up, and rst does not clear them: the
// unit zeroes the scratchpads kept across calls after reset itself (synth/rtlgen.py,
// clear_srams); a simulator starts them at its initial value for variables.
// Yosys treats the model as a black box: the flow prices memories apart from logic.
(* blackbox *)
module ${name} (
    input logic clk,
${port_decls}
);
  logic [${width_m1}:0] mem[${depth}];
  always_ff @(posedge clk) begin
${port_logic}
  end
endmodule
