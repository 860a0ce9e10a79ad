"""The study's decisions, each written down before the results it decides on were seen.

* :mod:`~jepa_geometry.study.decisions.sigreg`: SIGReg's strength at a CPU profile's batch
  (book: rec-sigreg-strength);
* :mod:`~jepa_geometry.study.decisions.lambdareg`: which ΛReg variant a study trains
  (book: rec-lambdareg-variants);
* :mod:`~jepa_geometry.study.decisions.gate`: the protocol gate and the ladder of levers that
  decide whether, and under which protocol, a task's arms are compared by planning
  (book: rec-protocol-gate, rec-manipulation-gate).

A decision returns its evidence (a table) with its choice; how a page shows them is in
:mod:`jepa_geometry.book.tables`.
"""

from jepa_geometry.study.decisions import gate, lambdareg, sigreg

__all__ = ["gate", "lambdareg", "sigreg"]
