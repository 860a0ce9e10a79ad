"""The tables and sentences the pages show, one module per family of chapters.

* :mod:`.theory`: chapters 1-3 (the closed forms, the 2-D toy);
* :mod:`.models`: chapters 4-5 (the tasks, their datasets, the world models and their
  training);
* :mod:`.planning`: chapter 6's planning pages;
* :mod:`.gate`: chapter 6's gate and ladder pages;
* :mod:`.geometry`: chapter 7 (probes, rank channels, landscapes, ΛReg's spectra, the claims'
  dashboard);
* :mod:`.across`: chapter 8's planning (both papers' headline tables across the tasks, the
  ceiling on every task, SCALE's other planning tables);
* :mod:`.across_geometry`: chapter 8's geometry (every measure per task and arm, the learned
  spectra per task, SCALE's PCs per share of variance);
* :mod:`.kappa`: chapter 8's AnisoWM κ sweep on trained models;
* :mod:`.scaling`: chapter 9 (toward the papers' scale);
* :mod:`.own_objective`: chapter 10 (your own objective, judged against LeWM and SCALE);
* :mod:`.shared`: what several families use (arm order, the papers' values and columns
  marked, verdict colours).

The rule: a function a page calls to *show* something (results reshaped or formatted, a
sentence, the papers' numbers beside ours, one page's table assembled from the library's
computations) lives here, in its page family's module. A function that *computes* (a closed
form, an interval, a probe, a rule that decides, reading the studies from the cache) stays
with its concept in the layers below, whatever its name, so nothing below the book imports
a page table. A chapter imports this package (``from jepa_geometry.book import tables``) and
calls ``tables.<family>.<name>``.
"""

from jepa_geometry.book.tables import (
    across,
    across_geometry,
    gate,
    geometry,
    kappa,
    models,
    own_objective,
    planning,
    scaling,
    shared,
    theory,
)

__all__ = [
    "across",
    "across_geometry",
    "gate",
    "geometry",
    "kappa",
    "models",
    "own_objective",
    "planning",
    "scaling",
    "shared",
    "theory",
]
