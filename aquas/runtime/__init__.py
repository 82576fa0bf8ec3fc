"""RISC-V bare-metal runtime (crt0, linker script, libc subset) and the aquas_isax.h generator."""
