"""Interface plans: rewrites of an ISAX's memory interface, as registered passes.

* ``aquas-interface-burst`` (:mod:`.coalesce`): single-shot accesses → bursts to and from
  new scratchpads;
* ``aquas-interface-split`` (:mod:`.split`): bursts fitted to the descriptor's maximum
  burst length (split long ones, merge continuing ones);
* ``aquas-interface-single`` (:mod:`.single`): bursts → single-shot accesses.

:mod:`.choose` applies a named plan (``as-written``, ``single``, ``burst``) per ISAX and
picks one per ISAX for ``--interface auto``.
"""

from aquas.plans.common import REJECTIONS_ATTR, Rejection

PLANS = ("as-written", "single", "burst")
"""The plans a synthesis can apply to an ISAX, in order of preference on a tie."""

INTERFACES = ("auto", *PLANS)
"""The values of ``aquas synth --interface``."""

__all__ = ["INTERFACES", "PLANS", "REJECTIONS_ATTR", "Rejection"]
