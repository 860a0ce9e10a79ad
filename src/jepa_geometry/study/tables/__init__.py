"""The tables and sentences the pages show, one module per page family.

* :mod:`~jepa_geometry.study.tables.theory`: chapters 1-3 (the closed forms, the 2-D toy);
* :mod:`~jepa_geometry.study.tables.models`: chapters 4-5 (the tasks, their datasets, the
  world models and their training);
* :mod:`~jepa_geometry.study.tables.planning`: chapter 6's planning pages;
* :mod:`~jepa_geometry.study.tables.gate`: chapter 6's gate and ladder pages;
* :mod:`~jepa_geometry.study.tables.geometry`: chapter 7 (probes, rank channels, landscapes,
  ΛReg's spectra, the claims' dashboard);
* :mod:`~jepa_geometry.study.tables.shared`: what several families use (arm order, rates as
  text, verdict colours).

The rule: a function a page calls to *show* something (results reshaped or formatted, a
sentence, the papers' numbers beside ours, one page's table assembled from the library's
computations) lives here, in its page family's module. A function that *computes* (a closed
form, an interval, a probe, a rule that decides) stays with its concept, whatever its name;
the cross-task page's tables are in :mod:`jepa_geometry.study.across`, beside the collection
of every task's study they read.
"""

from jepa_geometry.study.tables import gate, geometry, models, planning, shared, theory

__all__ = ["gate", "geometry", "models", "planning", "shared", "theory"]
