"""The book's figures, one module per family of chapters, and the one place they are saved.

- :mod:`.shared`: the style (``set_theme``), the figures' sizes and ``savefig``, which writes
  every figure to ``data/figures/<profile>/<fig_id>.png`` (one colour per arm or task and one
  display name per code name: :mod:`jepa_geometry.book.style`);
- :mod:`.theory`: chapters 1-3 (metric leverage, the closed forms, the 2-D toy);
- :mod:`.models`: chapters 4-5 (a task's episodes, the world models' training);
- :mod:`.planning`: chapter 6 (planning success, each arm against the baseline);
- :mod:`.geometry`: chapter 7 (spectra, probes, rank channels, cost landscapes);
- :mod:`.across`: chapter 8 (across the tasks, AnisoWM's κ sweep on trained models);
- :mod:`.primary`: the papers' headline claims, ours beside theirs (the landing page, chapter 8);
- :mod:`.scaling`: chapter 9 (toward the papers' scale).

What a figure plots is computed elsewhere (the library's layers below); these functions only
draw it. A chapter imports this package (``from jepa_geometry.book import plots``) and calls
``plots.<name>``: every figure function is re-exported here, so a page needs one import.
"""

from jepa_geometry.book.plots.across import (
    plot_contrast_forest,
    plot_geometry_heatmap,
    plot_lambda_by_task,
    plot_scale_success,
    plot_trained_kappa_sweep,
)
from jepa_geometry.book.plots.geometry import (
    RANK_METRICS,
    plot_lambda_spectra,
    plot_landscape_distribution,
    plot_landscape_examples,
    plot_landscapes,
    plot_pca_probes,
    plot_ranking,
)
from jepa_geometry.book.plots.models import (
    DIAGNOSTIC_PANELS,
    plot_lambda_target_spectrum,
    plot_loss_terms,
    plot_task_strip,
    plot_training_diagnostics,
)
from jepa_geometry.book.plots.planning import plot_paired, plot_success_cells
from jepa_geometry.book.plots.primary import plot_primary
from jepa_geometry.book.plots.scaling import plot_scaling_effects, plot_scaling_premises
from jepa_geometry.book.plots.shared import (
    INLINE_DPI,
    PAGE_WIDTH,
    figure_path,
    savefig,
    set_theme,
)
from jepa_geometry.book.plots.theory import (
    plot_box_planning,
    plot_cost_landscape,
    plot_cumulative_leverage,
    plot_kappa_sweep,
    plot_leverage_identity,
    plot_leverage_sweep,
    plot_lowest_cost_sets,
    plot_prediction_vs_regret,
    plot_regret_vs_eta,
)

__all__ = [
    "DIAGNOSTIC_PANELS",
    "INLINE_DPI",
    "PAGE_WIDTH",
    "RANK_METRICS",
    "figure_path",
    "plot_box_planning",
    "plot_contrast_forest",
    "plot_cost_landscape",
    "plot_cumulative_leverage",
    "plot_geometry_heatmap",
    "plot_kappa_sweep",
    "plot_lambda_by_task",
    "plot_lambda_spectra",
    "plot_lambda_target_spectrum",
    "plot_landscape_distribution",
    "plot_landscape_examples",
    "plot_landscapes",
    "plot_leverage_identity",
    "plot_leverage_sweep",
    "plot_loss_terms",
    "plot_lowest_cost_sets",
    "plot_paired",
    "plot_pca_probes",
    "plot_prediction_vs_regret",
    "plot_primary",
    "plot_ranking",
    "plot_regret_vs_eta",
    "plot_scale_success",
    "plot_scaling_effects",
    "plot_scaling_premises",
    "plot_success_cells",
    "plot_task_strip",
    "plot_trained_kappa_sweep",
    "plot_training_diagnostics",
    "savefig",
    "set_theme",
]
