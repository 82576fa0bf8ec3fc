"""Measured ISAX cycles through the real SoC memory path, to hold the model to.

A small top (``aquas_model_top``, generated here) holds the synthesized unit and the SoC's
``aquas_mem_ctrl`` (``rtl_templates/soc``) with its core port tied off: the unit's memory
master is DMA channel 0, exactly as in ``aquas_mem_system``, with the controller's DMA
setup, latency and L2 timing model. The memory parameters of a run are the top's Verilog
parameters, set with ``-G``: one Verilator build per (unit, parameter set), cached under
the user cache directory by a content hash of the Verilog, the parameters and the tool
installs (as ``synth/cosim.py`` keys its builds).

The testbench (:mod:`aquas.model.measure_tb`) issues one command at a time with random
operands (word-aligned pointers into RAM) over random RAM contents, checks ``rd`` against
the golden interpreter, and reads the cycles from command handshake to the first
``rsp_valid`` off a counter in the top. ``l2=cold`` resets the SoC (L2 tags invalid)
before every case; ``warm`` runs each command twice and measures the second run (the L2
holds its lines, and resident scratchpads their claims: synth/memengine.py), with or
without an L2.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aquas.cachedir import cache_dir as default_cache_dir
from aquas.diagnostics import AquasError
from aquas.target import Target

if TYPE_CHECKING:
    from aquas.reencode import Encoding

#: RAM of the measurement top (256 KiB): the testbench keeps a Python image of it.
RAM_WORDS_LOG2 = 16

TOP = """\
// aquas_model_top: one generated ISAX unit on DMA channel 0 of the SoC's memory
// controller (core port 0 tied off), for the memory-interface model's accuracy benchmark.
// meas_cycles: cycles from the command handshake to the first rsp_valid of the last
// command; meas_count counts completed commands.
`default_nettype none
module aquas_model_top #(
  parameter integer RAM_WORDS_LOG2 = 16,
  parameter integer MEM_LATENCY = 10,
  parameter integer DMA_SETUP = 2,
  parameter integer L2_ENABLE = 0,
  parameter integer L2_LINES_LOG2 = 10,
  parameter integer L2_LINE_WORDS_LOG2 = 3,
  parameter integer L2_HIT_LATENCY = 2,
  parameter integer DW = 32,
  parameter integer OUTSTANDING = 1
) (
  input  wire        clk,
  input  wire        rst,
  input  wire        cmd_valid,
  output wire        cmd_ready,
  input  wire [6:0]  cmd_opcode,
  input  wire [2:0]  cmd_funct3,
  input  wire [6:0]  cmd_funct7,
  input  wire [31:0] cmd_rs1,
  input  wire [31:0] cmd_rs2,
  output wire        rsp_valid,
  output wire [31:0] rsp_rd,
  output reg  [31:0] meas_cycles,
  output reg  [31:0] meas_count,
  output reg  [31:0] meas_rd,
  output wire [31:0] stat_l2_hits,
  output wire [31:0] stat_l2_misses
);
  wire        u_req_valid, u_req_write, u_wvalid, u_wlast, u_rsp_ready;
  wire [31:0] u_req_addr, m_rdata;
  wire [DW-1:0] u_wdata, m_rdata_wide;
  wire [2:0]  u_req_size;
  wire [7:0]  u_req_len;
  wire [DW/8-1:0] u_wstrb;
  wire [1:0]  p_req_ready, p_wready, p_rvalid;
  wire        m_rlast;
  wire        snoop_valid;
  wire [31:0] snoop_addr;
  {unit} u_isax (
    .clk(clk), .rst(rst),{snoop}
    .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_opcode(cmd_opcode),
    .cmd_funct3(cmd_funct3), .cmd_funct7(cmd_funct7), .cmd_rs1(cmd_rs1), .cmd_rs2(cmd_rs2),
    .rsp_valid(rsp_valid), .rsp_ready(1'b1), .rsp_rd(rsp_rd),
    .mem_req_valid(u_req_valid), .mem_req_ready(p_req_ready[1]), .mem_req_write(u_req_write),
    .mem_req_addr(u_req_addr), .mem_req_size(u_req_size), .mem_req_len(u_req_len),
    .mem_wdata_valid(u_wvalid), .mem_wdata_ready(p_wready[1]), .mem_wdata(u_wdata),
    .mem_wstrb(u_wstrb), .mem_wlast(u_wlast),
    .mem_rsp_valid(p_rvalid[1]), .mem_rsp_ready(u_rsp_ready), .mem_rsp_rdata(m_rdata_wide),
    .mem_rsp_last(m_rlast)
  );
  aquas_mem_ctrl #(
    .NPORTS(2), .FIRST_DMA(1), .RAM_BASE(32'h0), .RAM_WORDS_LOG2(RAM_WORDS_LOG2),
    .MEM_LATENCY(MEM_LATENCY), .DMA_SETUP(DMA_SETUP), .L2_ENABLE(L2_ENABLE),
    .L2_LINES_LOG2(L2_LINES_LOG2), .L2_LINE_WORDS_LOG2(L2_LINE_WORDS_LOG2),
    .L2_HIT_LATENCY(L2_HIT_LATENCY), .DW(DW), .OUTSTANDING(OUTSTANDING)
  ) u_mem (
    .clk(clk), .rst(rst),
    .req_valid({{u_req_valid, 1'b0}}), .req_ready(p_req_ready),
    .req_write({{u_req_write, 1'b0}}), .req_addr({{u_req_addr, 32'd0}}),
    .req_size({{u_req_size, 3'd2}}), .req_len({{u_req_len, 8'd0}}),
    .wvalid({{u_wvalid, 1'b0}}), .wready(p_wready), .wdata({{u_wdata, {{DW{{1'b0}}}}}}),
    .wstrb({{u_wstrb, {{(DW/8){{1'b0}}}}}}), .rvalid(p_rvalid), .rready({{u_rsp_ready, 1'b1}}),
    .rdata(m_rdata), .rdata_wide(m_rdata_wide), .rlast(m_rlast),
    .stat_l2_hits(stat_l2_hits), .stat_l2_misses(stat_l2_misses),
    .snoop_valid(snoop_valid), .snoop_addr(snoop_addr)
  );
  reg busy;
  reg [31:0] cnt;
  always @(posedge clk) begin
    if (rst) begin
      busy <= 1'b0;
      cnt <= 32'd0;
      meas_cycles <= 32'd0;
      meas_count <= 32'd0;
      meas_rd <= 32'd0;
    end else if (cmd_valid && cmd_ready) begin
      busy <= 1'b1;
      cnt <= 32'd1;
    end else if (busy) begin
      if (rsp_valid) begin
        busy <= 1'b0;
        meas_cycles <= cnt;
        meas_count <= meas_count + 32'd1;
        meas_rd <= rsp_rd;
      end else cnt <= cnt + 32'd1;
    end
  end
  wire _unused = &{{1'b0, u_wlast, m_rdata}};
endmodule
`default_nettype wire
"""


def top_params(target: Target) -> dict[str, int]:
    """The measurement top's parameters from the descriptor (as the SoC top gets them)."""
    p = target.verilog_params()
    keys = ("MEM_LATENCY", "DMA_SETUP", "L2_ENABLE", "L2_LINES_LOG2", "L2_LINE_WORDS_LOG2")
    out = {k: p[k] for k in keys}
    out["L2_HIT_LATENCY"] = p["L2_HIT_LATENCY"]
    out["OUTSTANDING"] = p["OUTSTANDING"]
    out["DW"] = p["ISAX_WIDTH"]  # the unit's memory master, as synthesized for the target
    out["RAM_WORDS_LOG2"] = RAM_WORDS_LOG2
    return out


@dataclass
class Measurement:
    """Per ISAX: the cycles of every measured case (and the golden-model mismatches)."""

    cycles: dict[str, list[int]]
    mismatches: list[str]
    l2_hits: dict[str, list[int]]
    l2_misses: dict[str, list[int]]


def measure(
    spec: Path,
    verilog: Path,
    unit: str,
    target: Target,
    *,
    l2: str = "cold",
    cases: int = 8,
    seed: int = 1,
    cache_dir: Path | None = None,
    encodings: Sequence[tuple[str, Encoding]] = (),
    subset: Sequence[str] = (),
) -> Measurement:
    """Measure every ISAX of the unit in ``verilog`` (synthesized from ``spec``) on the
    memory parameters of ``target``; ``l2``: ``cold`` calls start from reset, ``warm``
    ones repeat the call before them.
    ``encodings``: ISAXs the unit was synthesized re-encoded (:mod:`aquas.reencode`), with
    their new encodings (the commands use them). ``subset``: the ISAXs of a unit built
    from part of the extension (:mod:`aquas.spec.subset`; empty: all)."""
    from cocotb_tools.runner import get_runner

    from aquas.sim.builder import unit_snoops
    from aquas.synth.cosim import build_key, verilator_tools

    cache_dir = (cache_dir or default_cache_dir("model-measure")).resolve()
    params = top_params(target)
    ctrl_text = (resources.files("aquas.rtl_templates") / "soc" / "aquas_mem_ctrl.v").read_text()
    unit_text = verilog.read_bytes()
    snoop = (
        "\n    .snoop_valid(snoop_valid), .snoop_addr(snoop_addr),"
        if unit_snoops([verilog])
        else ""
    )
    top_text = TOP.format(unit=unit, snoop=snoop)
    # every source is copied to a directory named by their content: the same unit from
    # another synthesis directory then compiles nothing again (Verilator's output names
    # the source paths, so a new path would make everything stale)
    h = hashlib.sha256((top_text + ctrl_text).encode() + unit_text).hexdigest()[:16]
    src = cache_dir / "src" / h
    src.mkdir(parents=True, exist_ok=True)
    for name, data in (
        ("aquas_model_top.v", top_text.encode()),
        ("aquas_mem_ctrl.v", ctrl_text.encode()),
        (verilog.name, unit_text),
    ):
        if not (src / name).exists():  # unchanged sources keep their times for make
            (src / name).write_bytes(data)
    sources = [src / verilog.name, src / "aquas_mem_ctrl.v", src / "aquas_model_top.v"]
    build_dir = cache_dir / build_key(*sources, extra=json.dumps(params, sort_keys=True))
    build_dir.mkdir(parents=True, exist_ok=True)
    image = build_dir / f"image-{seed}.hex"
    if not image.exists():
        rng = random.Random(seed)
        words = [f"{rng.getrandbits(32):08x}" for _ in range(1 << RAM_WORDS_LOG2)]
        image.write_text("\n".join(words) + "\n")
    result = build_dir / f"result-{l2}-{seed}-{cases}.json"
    result.unlink(missing_ok=True)
    with verilator_tools(cache_dir):
        runner = get_runner("verilator")
        try:
            runner.build(
                sources=sources,
                hdl_toplevel="aquas_model_top",
                build_dir=build_dir,
                parameters=params,
                build_args=["-O2", "--x-assign", "0", "--x-initial", "0", "-Wno-fatal"],
                timescale=("1ns", "1ps"),
                log_file=build_dir / "build.log",
            )
        except RuntimeError as e:
            log = build_dir / "build.log"
            tail = log.read_text()[-3000:] if log.exists() else ""
            raise AquasError(
                f"Verilator build of the measurement top failed: {e}\n{tail}"
            ) from None
        runner.test(
            test_module="aquas.model.measure_tb",
            hdl_toplevel="aquas_model_top",
            build_dir=build_dir,
            test_dir=build_dir,
            plusargs=[f"+aquas_image={image}"],
            extra_env={
                "AQUAS_MEASURE_SPEC": str(spec.resolve()),
                "AQUAS_MEASURE_IMAGE": str(image),
                "AQUAS_MEASURE_RAM_WORDS_LOG2": str(RAM_WORDS_LOG2),
                # without an L2 a warm call still repeats the one before (resident
                # scratchpads keep their claims); a cold one is the same as no L2
                "AQUAS_MEASURE_L2": l2 if params["L2_ENABLE"] or l2 == "warm" else "off",
                "AQUAS_MEASURE_CASES": str(cases),
                "AQUAS_MEASURE_SEED": str(seed),
                "AQUAS_MEASURE_ENCODINGS": json.dumps([[n, *e] for n, e in encodings]),
                "AQUAS_MEASURE_SUBSET": json.dumps(list(subset)),
                "AQUAS_MEASURE_RESULT": str(result),
                "PYTHONPATH": os.pathsep.join(sys.path),
            },
            results_xml=str(build_dir / f"results-{l2}-{seed}.xml"),
            log_file=build_dir / f"test-{l2}-{seed}.log",
        )
    if not result.exists():
        log = build_dir / f"test-{l2}-{seed}.log"
        tail = log.read_text()[-3000:] if log.exists() else ""
        raise AquasError(f"the measurement produced no result; log tail:\n{tail}")
    doc: dict[str, Any] = json.loads(result.read_text())
    return Measurement(doc["cycles"], doc["mismatches"], doc["l2_hits"], doc["l2_misses"])


__all__ = ["Measurement", "measure", "top_params"]
