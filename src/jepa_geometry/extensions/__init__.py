"""The book's extensions beyond one task's study, each built from the task studies' own models
and cells where it can (same artifact keys) and judged by the same verdict rule.

* :mod:`~jepa_geometry.extensions.kappa`: AnisoWM's κ sweep on trained models (chapter 8);
* :mod:`~jepa_geometry.extensions.scaling`: the scaling study, the papers' effects as training
  compute grows (chapter 9; its units in ``scaling.yaml``);
* :mod:`~jepa_geometry.extensions.scaling_tables`: chapter 9's tables and sentences;
* :mod:`~jepa_geometry.extensions.own`: a loss term of the reader's own (chapter 10).
"""
