"""The pass registry behind ``aquas opt -p a,b{k=v}``.

A dict of name → lazy getter, as in xDSL: the CLI starts fast, and a pass's module (with
any heavy dependency) is imported only when the pipeline names it.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass, PassPipeline


def _aquas_reencode() -> type[ModulePass]:
    from aquas.reencode import AquasReencodePass

    return AquasReencodePass


def _aquas_unroll() -> type[ModulePass]:
    from aquas.synth.unroll import AquasUnrollPass

    return AquasUnrollPass


def _aquas_pipeline_loops() -> type[ModulePass]:
    from aquas.synth.loop_pipeline import AquasPipelineLoopsPass

    return AquasPipelineLoopsPass


def _aquas_if_convert() -> type[ModulePass]:
    from aquas.synth.prepare import AquasIfConvertPass

    return AquasIfConvertPass


def _aquas_fold_unsigned_compare() -> type[ModulePass]:
    from aquas.synth.prepare import AquasFoldRangeComparePass

    return AquasFoldRangeComparePass


def _aquas_fold_constants() -> type[ModulePass]:
    from aquas.synth.prepare import AquasFoldConstantsPass

    return AquasFoldConstantsPass


def _aquas_reduce_division() -> type[ModulePass]:
    from aquas.synth.prepare import AquasReduceDivisionPass

    return AquasReduceDivisionPass


def _aquas_drop_unobservable() -> type[ModulePass]:
    from aquas.synth.prepare import AquasDropUnobservablePass

    return AquasDropUnobservablePass


def _aquas_forward_state() -> type[ModulePass]:
    from aquas.synth.prepare import AquasForwardStatePass

    return AquasForwardStatePass


def _aquas_balance_sums() -> type[ModulePass]:
    from aquas.synth.balance import AquasBalanceSumsPass

    return AquasBalanceSumsPass


def _aquas_narrow_arith() -> type[ModulePass]:
    from aquas.synth.narrow import AquasNarrowArithPass

    return AquasNarrowArithPass


def _aquas_schedule() -> type[ModulePass]:
    from aquas.synth.timing import AquasSchedulePass

    return AquasSchedulePass


def _aquas_interface_burst() -> type[ModulePass]:
    from aquas.plans.coalesce import AquasInterfaceBurstPass

    return AquasInterfaceBurstPass


def _aquas_interface_split() -> type[ModulePass]:
    from aquas.plans.split import AquasInterfaceSplitPass

    return AquasInterfaceSplitPass


def _aquas_interface_single() -> type[ModulePass]:
    from aquas.plans.single import AquasInterfaceSinglePass

    return AquasInterfaceSinglePass


def _aquas_interface_outstanding() -> type[ModulePass]:
    from aquas.plans.outstanding import AquasInterfaceOutstandingPass

    return AquasInterfaceOutstandingPass


def _aquas_interface_early() -> type[ModulePass]:
    from aquas.plans.early import AquasInterfaceEarlyPass

    return AquasInterfaceEarlyPass


def _aquas_interface_stream() -> type[ModulePass]:
    from aquas.plans.stream import AquasInterfaceStreamPass

    return AquasInterfaceStreamPass


def _aquas_interface_resident() -> type[ModulePass]:
    from aquas.plans.resident import AquasInterfaceResidentPass

    return AquasInterfaceResidentPass


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _cse() -> type[ModulePass]:
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    return CommonSubexpressionElimination


def _dce() -> type[ModulePass]:
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    return DeadCodeElimination


def _convert_aquas_to_hw() -> type[ModulePass]:
    from aquas.synth.hwgen import ConvertAquasToHwPass

    return ConvertAquasToHwPass


# Synthesis passes in the order `aquas synth` runs them (the re-encoding for a target
# and the interface plans first).
PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "aquas-reencode": _aquas_reencode,
    "aquas-interface-burst": _aquas_interface_burst,
    "aquas-interface-split": _aquas_interface_split,
    "aquas-interface-single": _aquas_interface_single,
    "aquas-interface-outstanding": _aquas_interface_outstanding,
    "aquas-interface-early": _aquas_interface_early,
    "aquas-interface-stream": _aquas_interface_stream,
    "aquas-interface-resident": _aquas_interface_resident,
    "aquas-unroll": _aquas_unroll,
    "aquas-fold-constants": _aquas_fold_constants,
    "aquas-reduce-division": _aquas_reduce_division,
    "aquas-fold-unsigned-compare": _aquas_fold_unsigned_compare,
    "aquas-forward-state": _aquas_forward_state,
    "aquas-if-convert": _aquas_if_convert,
    "aquas-drop-unobservable": _aquas_drop_unobservable,
    "aquas-balance-sums": _aquas_balance_sums,
    "aquas-narrow-arith": _aquas_narrow_arith,
    "aquas-pipeline-loops": _aquas_pipeline_loops,
    "aquas-schedule": _aquas_schedule,
    "convert-aquas-to-hw": _convert_aquas_to_hw,
    "canonicalize": _canonicalize,
    "cse": _cse,
    "dce": _dce,
}


def parse_pipeline(spec: str) -> PassPipeline:
    """``"a,b{opt=v}"`` → a pipeline; unknown passes or options raise ValueError."""
    return PassPipeline.parse_spec(PASSES, spec)


_SUMMARIES = {
    "cse": "Common subexpression elimination (xDSL).",
    "dce": "Dead code elimination (xDSL).",
    "canonicalize": "Constant folding and canonicalization patterns (xDSL).",
}


def describe_passes() -> list[tuple[str, str]]:
    """(name, one-line summary) for every registered pass."""
    out = []
    for name, get in sorted(PASSES.items()):
        doc = (get().__doc__ or "").strip().splitlines()
        out.append((name, _SUMMARIES.get(name) or (doc[0] if doc else "")))
    return out
