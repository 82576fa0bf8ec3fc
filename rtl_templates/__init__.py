"""Hand-written Verilog the generator instantiates: adapters, SoC tops, simulation harness."""
