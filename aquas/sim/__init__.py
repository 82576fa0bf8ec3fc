"""Reference SoC simulation: Verilator builds, ELF loading, cycle-accurate runs."""
