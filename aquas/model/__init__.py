"""The memory-interface model: predicted ISAX cycles from the target descriptor and a spec.

``formulas`` holds the named-parameter formulas, ``predict`` applies them to the ISAXs of a
lowered spec (compute cycles from the synthesis scheduler), ``offload`` adds the core-side
cache maintenance of an offload site, and ``plans`` is ``aquas model --plan``'s view of the
one plan chooser (``aquas.plans.choose``), whose cost this model is. See docs/memory-model.md.
"""

from aquas.model.formulas import MemParams
from aquas.model.offload import OffloadCost, offload_cost
from aquas.model.predict import IsaxPrediction, TransferPrediction, predict_module

__all__ = [
    "IsaxPrediction",
    "MemParams",
    "OffloadCost",
    "TransferPrediction",
    "offload_cost",
    "predict_module",
]
