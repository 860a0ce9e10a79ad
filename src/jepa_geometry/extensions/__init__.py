"""The book's extensions beyond one task's study: each reuses the task studies' own models and
cells where it can (the same artifact keys) and is judged by the same verdict rule.

AnisoWM's κ sweep on trained models (chapter 8):

* :mod:`~jepa_geometry.extensions.kappa_sweep`: the sweep as data (tasks, bounds κ, the arm,
  its models and cells) and its cost, stated before anything trains;
* :mod:`~jepa_geometry.extensions.kappa_build`: building it (cached, resumable; its units of
  the study grid) and reading its results from the cache;
* :mod:`~jepa_geometry.extensions.kappa_rules`: its rules on a training log (when Λ reaches
  its bound, how far the allocation moves after that); its claims are records of the one
  registry, judged by :mod:`jepa_geometry.verdict.kappa_claims`;
* what chapter 8 shows of it is a page table, :mod:`jepa_geometry.book.tables.kappa`.

The scaling study, the papers' effects as training compute grows (chapter 9):

* :mod:`~jepa_geometry.extensions.scaling`: the study as written (``scaling.yaml``), its
  compute points, each point's profile and training FLOPs;
* :mod:`~jepa_geometry.extensions.scaling_rule`: the cost of a unit and the rule that chooses
  the units within the budget (kept as first stated);
* :mod:`~jepa_geometry.extensions.scaling_build`: building the chosen units (the command line,
  or units of the study grid), the gate at each point;
* :mod:`~jepa_geometry.extensions.scaling_results`: what each built point measured, every
  claim's effect there, success beside the ceiling, the premises, LeWM's own budget;
* :mod:`~jepa_geometry.extensions.scaling_trend`: each effect's trend against training FLOPs
  and where it would cross the verdict's minimum effect;
* chapter 9's tables and sentences are page tables, :mod:`jepa_geometry.book.tables.scaling`.

A loss term of the reader's own (chapter 10):

* :mod:`~jepa_geometry.extensions.own`: its study (the task's study with lewm, scale and the
  reader's arm), its units and cost, its build and its claims against LeWM.
"""
