"""The book's extensions beyond one task's study: each reuses the task studies' own models and
cells where it can (the same artifact keys) and is judged by the same verdict rule. One
subpackage or module each:

* :mod:`.kappa`: AnisoWM's κ sweep on trained models (chapter 8): the sweep and its cost
  (:mod:`.kappa.sweep`), building and reading it (:mod:`.kappa.build`), what is read off a
  training log (:mod:`.kappa.saturation`); its claims are judged by
  :mod:`jepa_geometry.verdict.kappa_claims`, chapter 8 shows it through
  :mod:`jepa_geometry.book.tables.kappa`;
* :mod:`.scaling`: the scaling study, the papers' effects as training compute grows
  (chapter 9): the study as written (:mod:`.scaling.spec` with ``scaling/scaling.yaml``), the
  choice of its units within the budget (:mod:`.scaling.choice`), building them
  (:mod:`.scaling.build`), what each point measured (:mod:`.scaling.results`) and each
  effect's trend (:mod:`.scaling.trend`); chapter 9's tables and sentences are page tables,
  :mod:`jepa_geometry.book.tables.scaling`;
* :mod:`.own_objective`: a loss term of the reader's own (chapter 10): its study (the task's
  study with lewm, scale and the reader's arm), its units and cost, its build and its claims
  against LeWM.
"""
