"""The geometry of every trained arm, measured as the papers do, cached per checkpoint.

For one trained world model (:func:`measure_model`), on held-out Two-Room data:

* **probes** (SCALE's probe protocol, :mod:`.probes`): PCA spectrum of the embeddings
  of :data:`PROBE_FRAMES` held-out frames, variance share and ridge R² of q from the top-2/4/8
  PCs, full-embedding ridge and MLP R², distance-ratio dispersion P90/P10;
* **rank channels** (SCALE's Kendall τ and AnisoWM's cost-ordering table, :mod:`.ranking`):
  Kendall τ of imagined / encoded / physical costs and the ordering agreement of J_enc and J_pred
  for candidates executed in the simulator, from the first starts of the code protocol's
  episode set, with SCALE's Gaussian candidates and AnisoWM's recorded ones;
* **cost landscape** (AnisoWM Figure 4, :mod:`.landscape`): iou of the cost's 10 %
  sub-level set with the disc of the same area and Spearman ρ with physical distance, for random
  goals on a grid of agent positions;
* **ΛReg spectrum** (AnisoWM Figure 5): the learned target variances over training, read from
  the training log (ΛReg arms only).

The simulated candidates and the rendered position grid do not depend on the model: they are
built once per run, and only when some model's measurements are missing from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from jepa_geometry.analysis import landscape, probes, ranking
from jepa_geometry.artifacts import Artifact, get_or_build, memo
from jepa_geometry.envs import make_task, q_names, task_class
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.jobs import job_threads, progress_bar
from jepa_geometry.planning.protocol import draw_episode_set, make_protocol
from jepa_geometry.profiles import Profile
from jepa_geometry.wm.arms import LAMBDAREG_ARMS, check_arms
from jepa_geometry.wm.model import encode_frames
from jepa_geometry.wm.training import load_world_model, training_log, world_model_artifact


@dataclass(frozen=True)
class GeometrySettings:
    """What is measured, fixed before any result: the sizes of the profile's ``geometry``
    section (SCALE's and AnisoWM's protocol sizes at laptop and paper) and the seeds."""

    probe_frames: int  # SCALE's probe frames
    dispersion_pairs: int  # SCALE's dispersion pairs
    ranking_starts: int  # SCALE's starts; book: rec-cost-ordering
    ranking_candidates: int
    grid: int  # positions per side of the landscape grid
    landscape_goals: int
    probe_seed: int = 0
    ranking_seed: int = 7  # SCALE's CAND_SEED
    landscape_seed: int = 0
    version: int = 1

    @classmethod
    def of(cls, profile: Profile) -> GeometrySettings:
        """The settings of ``profile`` (its ``geometry`` section, the default seeds)."""
        return cls(**asdict(profile.geometry))


@dataclass
class Geometry:
    """All measurements of several arms x training seeds, as tidy tables."""

    probes: pd.DataFrame  # one row per model (with the wall time of its measurement)
    spectra: pd.DataFrame  # arm, train_seed, pc, share
    ranking: pd.DataFrame  # one row per (model, candidate source, start)
    landscape: pd.DataFrame  # one row per (model, goal)
    lambda_spectra: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)


class _Context:
    """Model-independent inputs, built on first use."""

    def __init__(self, task: str, profile: Profile, settings: GeometrySettings) -> None:
        self.task, self.profile, self.s = task, profile, settings
        self._cache: dict[str, Any] = {}

    def _get(self, key: str, build: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    @property
    def data(self) -> Any:
        return self._get("data", lambda: load_dataset(self.task, self.profile))

    @property
    def env(self) -> Any:
        return self._get("env", lambda: make_task(self.task, self.profile.data.image_size, seed=0))

    def probe_rows(self) -> np.ndarray:
        """``probe_frames`` held-out rows, drawn without replacement (SCALE's held-out frames)."""

        def build() -> np.ndarray:
            held = np.flatnonzero(np.isin(self.data.episode, self.data.heldout_episodes))
            rng = np.random.default_rng(self.s.probe_seed)
            return np.sort(
                rng.choice(held, size=min(self.s.probe_frames, len(held)), replace=False)
            )

        return self._get("rows", build)

    def outcomes(self, source: str) -> ranking.Outcomes:
        def build() -> ranking.Outcomes:
            proto = make_protocol(self.profile, "goal25_budget50")
            n = max(self.profile.eval.episodes, self.s.ranking_starts)
            eps = draw_episode_set(self.env, self.data, proto, n, self.profile.seeds.eval)
            return ranking.simulate_candidates(
                self.env,
                self.data,
                eps,
                n_starts=self.s.ranking_starts,
                n_candidates=self.s.ranking_candidates,
                source=source,
                seed=self.s.ranking_seed,
                frameskip=proto.frameskip,
                horizon=proto.horizon,
            )

        return self._get(f"outcomes-{source}", build)

    def positions(self) -> landscape.LandscapePositions:
        return self._get(
            "positions", lambda: cached_landscape_positions(self.task, self.profile, self.s)
        )

    def close(self) -> None:
        if "env" in self._cache:
            self._cache["env"].close()


def geometry_artifact(
    task: str, arm: str, seed: int, profile: Profile, settings: GeometrySettings
) -> Artifact:
    spec = {
        "task": task,
        "checkpoint": world_model_artifact(task, arm, seed, profile).key,
        "dataset": dataset_artifact(task, profile).key,
        "eval_seed": profile.seeds.eval,
        "eval_episodes": profile.eval.episodes,
        "settings": asdict(settings),
    }
    return Artifact("results", f"geometry-{task}", spec)


def _probe_frames(model: Any, ctx: _Context) -> tuple[np.ndarray, np.ndarray]:
    rows = ctx.probe_rows()
    z = encode_frames(model, ctx.data.pixels[rows]).numpy().astype(np.float64)
    return z, ctx.data.q[rows].astype(np.float64)


def _encode_probe_frames(
    task: str, arm: str, seed: int, profile: Profile, settings: GeometrySettings
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_probe_frames` of one trained model in a context of its own, on one thread (as
    :func:`measure_model` builds): the same bits on any machine."""
    ctx = _Context(task, profile, settings)
    try:
        with job_threads():
            return _probe_frames(load_world_model(task, arm, seed, profile), ctx)
    finally:
        ctx.close()


def probe_frames(
    task: str, arm: str, seed: int, profile: Profile, settings: GeometrySettings | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(z, q)`` of the held-out probe frames that every per-model measure uses: the
    embeddings under one trained model (float64) and the raw task state q of the same frames
    (:meth:`_Context.probe_rows`, SCALE's held-out sample of ``settings.probe_frames``).

    Both are float32 casts (the encoder's output, the recorded q), kept as a small cached
    result in float32 (:func:`~jepa_geometry.artifacts.memo`), so a page reads them without
    the model or the frames; encoded on one thread, as the measurements are.
    """
    s = settings or GeometrySettings.of(profile)

    def compute() -> dict[str, np.ndarray]:
        z, q = _encode_probe_frames(task, arm, seed, profile, s)
        return {"z": z.astype(np.float32), "q": q.astype(np.float32)}

    spec = geometry_artifact(task, arm, seed, profile, s).spec
    frames = memo(f"probe-frames-{task}", spec, compute)
    return frames["z"].astype(np.float64), frames["q"].astype(np.float64)


def measure_model(
    task: str, arm: str, seed: int, profile: Profile, ctx: _Context
) -> dict[str, Any]:
    """All per-model measurements (cached): probes, spectrum, rank channels, landscape."""
    s = ctx.s
    art = geometry_artifact(task, arm, seed, profile, s)

    def build(tmp: Any) -> None:
        model = load_world_model(task, arm, seed, profile)
        z, q = _probe_frames(model, ctx)
        probe = probes.geometry_probe(z, q, seed=s.probe_seed)
        disp = probes.distance_ratio_dispersion(z, q, n_pairs=s.dispersion_pairs, seed=s.probe_seed)
        probe.update({f"ratio_{k}": v for k, v in disp.items()})
        (tmp / "probe.json").write_text(json.dumps(probe, indent=1))
        np.save(tmp / "spectrum.npy", probes.pca_spectrum(z))
        tables = []
        for source in ranking.SOURCES:
            df = ranking.ranking_metrics(model, ctx.outcomes(source))
            df.insert(0, "source", source)
            tables.append(df)
        pd.concat(tables, ignore_index=True).to_parquet(tmp / "ranking.parquet", index=False)
        mesh = ctx.positions()
        z_grid = encode_frames(model, mesh.frames).numpy().astype(np.float64)
        np.save(tmp / "z_grid.npy", z_grid)
        landscape.landscape_distribution(
            z_grid,
            mesh.positions,
            n_goals=s.landscape_goals,
            seed=s.landscape_seed,
            period=task_class(task).landscape_period,
        ).to_parquet(tmp / "landscape.parquet", index=False)

    with job_threads():  # the same bits on any machine (jepa_geometry.jobs)
        path = get_or_build(art, build)
    return {
        "build_seconds": art.manifest().get("wall_time_s"),
        "probe": json.loads((path / "probe.json").read_text()),
        "spectrum": np.load(path / "spectrum.npy"),
        "ranking": pd.read_parquet(path / "ranking.parquet"),
        "landscape": pd.read_parquet(path / "landscape.parquet"),
        "z_grid_path": path / "z_grid.npy",
    }


def measure(
    task: str, arm: str, seed: int, profile: Profile, settings: GeometrySettings | None = None
) -> dict[str, Any]:
    """:func:`measure_model` for one model on its own (a unit of the study grid,
    :mod:`jepa_geometry.cluster`): the model-independent inputs are built for it alone."""
    ctx = _Context(task, profile, settings or GeometrySettings.of(profile))
    try:
        return measure_model(task, arm, seed, profile, ctx)
    finally:
        ctx.close()


def model_list(
    arms: Sequence[str], profile: Profile, models: Sequence[tuple[str, int]] | None
) -> list[tuple[str, int]]:
    """The (arm, training seed) models a measurement covers: ``models`` when given (a study's
    :meth:`~jepa_geometry.study.spec.StudySpec.models`, with its headline seeds), else every
    arm with every training seed of the profile, seed by seed."""
    if models is not None:
        return list(models)
    return [(m, seed) for seed in profile.seeds.train for m in check_arms(list(arms))]


def coordinate_probes(
    task: str,
    arms: list[str],
    profile: Profile,
    settings: GeometrySettings | None = None,
    models: Sequence[tuple[str, int]] | None = None,
) -> pd.DataFrame:
    """Held-out ridge R² of each coordinate of q (:func:`probes.coordinate_r2`) for every
    arm x training seed (or ``models``: :func:`model_list`), on the probe frames of
    :func:`measure_model`. Columns: ``arm``, ``train_seed``, ``coordinate`` (the task's q
    names), ``r2``. Each model's R² are a small cached result
    (:func:`~jepa_geometry.artifacts.memo`): one encoding of its probe frames, on one thread,
    once."""
    s = settings or GeometrySettings.of(profile)
    names = q_names(task)
    rows = []
    for m, seed in model_list(arms, profile, models):

        def compute(arm: str = m, train_seed: int = seed) -> list[float]:
            z, q = _encode_probe_frames(task, arm, train_seed, profile, s)
            return [float(v) for v in probes.coordinate_r2(z, q, seed=s.probe_seed)]

        spec = geometry_artifact(task, m, seed, profile, s).spec
        r2 = memo(f"coordinate-r2-{task}", spec, compute)
        rows += [
            {"arm": m, "train_seed": seed, "coordinate": c, "r2": v}
            for c, v in zip(names, r2, strict=True)
        ]
    return pd.DataFrame(rows)


def measure_arms(
    task: str,
    arms: list[str],
    profile: Profile,
    settings: GeometrySettings | None = None,
    progress: bool = True,
    models: Sequence[tuple[str, int]] | None = None,
) -> Geometry:
    """:func:`measure_model` for every arm x training seed (or ``models``: :func:`model_list`),
    gathered into tidy tables."""
    s = settings or GeometrySettings.of(profile)
    ctx = _Context(task, profile, s)
    probe_rows, spectra, ranks, lands, lams = [], [], [], [], {}
    jobs = model_list(arms, profile, models)
    try:
        for m, seed in progress_bar(jobs, desc=f"geometry {task}", progress=progress):
            r = measure_model(task, m, seed, profile, ctx)
            key = {"arm": m, "train_seed": seed}
            probe_rows.append({**key, **r["probe"], "build_seconds": r["build_seconds"]})
            spectra.append(
                pd.DataFrame(
                    {**key, "pc": np.arange(1, len(r["spectrum"]) + 1), "share": r["spectrum"]}
                )
            )
            for df, out in ((r["ranking"], ranks), (r["landscape"], lands)):
                df = df.copy()
                df.insert(0, "train_seed", seed)
                df.insert(0, "arm", m)
                out.append(df)
            if m in LAMBDAREG_ARMS:
                lams[(m, seed)] = probes.lambda_spectrum(training_log(task, m, seed, profile))
    finally:
        ctx.close()
    return Geometry(
        probes=pd.DataFrame(probe_rows),
        spectra=pd.concat(spectra, ignore_index=True),
        ranking=pd.concat(ranks, ignore_index=True),
        landscape=pd.concat(lands, ignore_index=True),
        lambda_spectra=lams,
    )


def cached_landscape_positions(
    task: str, profile: Profile, settings: GeometrySettings | None = None
) -> landscape.LandscapePositions:
    """The rendered positions of :func:`landscape.landscape_positions`, cached as an artifact."""
    s = settings or GeometrySettings.of(profile)
    art = Artifact(
        "results",
        f"position-grid-{task}",
        {"task": task, "image_size": profile.data.image_size, "n": s.grid, "version": 1},
    )

    def build(tmp: Any) -> None:
        env = make_task(task, profile.data.image_size, seed=0)
        try:
            g = landscape.landscape_positions(env, s.grid)
        finally:
            env.close()
        np.savez_compressed(
            tmp / "grid.npz", xs=g.xs, ys=g.ys, mask=g.mask, positions=g.positions, frames=g.frames
        )

    with np.load(get_or_build(art, build) / "grid.npz") as f:
        return landscape.LandscapePositions(task=task, **{k: f[k] for k in f.files})


def load_landscape_embeddings(
    task: str, arm: str, seed: int, profile: Profile, settings: GeometrySettings | None = None
) -> np.ndarray:
    """The embeddings of the landscape grid's frames under one trained model (cached)."""
    s = settings or GeometrySettings.of(profile)
    ctx = _Context(task, profile, s)
    try:
        return np.load(measure_model(task, arm, seed, profile, ctx)["z_grid_path"])
    finally:
        ctx.close()


PANEL_FIELDS: tuple[str, ...] = (
    "goal_position",
    "cost",
    "low_set",
    "disc_radius",
    "iou",
    "spearman",
)
"""What a drawn landscape panel reads of :func:`.landscape.cost_landscape`'s result."""


@dataclass(frozen=True)
class LandscapeExamples:
    """AnisoWM's Figure 4 on trained models: the position grid, goal cells drawn at random, the
    first training seed, and per arm shown one :func:`~.landscape.cost_landscape` panel per
    goal (its :data:`PANEL_FIELDS`)."""

    positions: landscape.LandscapePositions
    goals: list[int]
    seed: int
    panels: dict[str, list[dict[str, Any]]]


LANDSCAPE_ARMS: tuple[str, ...] = ("lewm", "anisowm", "scale")
"""The arms Figure 4's examples show, in this order (those the study trained)."""


def landscape_examples(
    task: str, arms: Sequence[str], profile: Profile, settings: GeometrySettings, count: int
) -> LandscapeExamples:
    """``count`` goal cells drawn without replacement from the grid (seed ``landscape_seed + 1``,
    apart from the random goals of the landscape measure) and, under the first training seed's
    model of each of :data:`LANDSCAPE_ARMS` in ``arms``, the cost landscape around each
    (AnisoWM shows hand-picked goals; random ones cannot be chosen to flatter an arm).

    The panels are a :func:`~jepa_geometry.artifacts.memo` of the grid's embeddings (``z_grid``,
    a heavy file the evidence tree leaves to the DVC remote: 0.5 to 3 MB per model): a page
    draws them from a few kilobytes."""
    positions = cached_landscape_positions(task, profile, settings)
    rng = np.random.default_rng(settings.landscape_seed + 1)
    goals = [int(g) for g in rng.choice(len(positions.positions), size=count, replace=False)]
    seed = profile.seeds.train[0]
    shown = [m for m in LANDSCAPE_ARMS if m in arms]
    period = task_class(task).landscape_period
    spec = {
        "models": {m: geometry_artifact(task, m, seed, profile, settings).key for m in shown},
        "grid": {"image_size": profile.data.image_size, "n": settings.grid},
        "goals": goals,
        "quantile": landscape.LOW_SET_QUANTILE,
        "period": list(period) if period else None,
        "fields": list(PANEL_FIELDS),
    }

    def compute() -> dict[str, np.ndarray]:
        out = {}
        for m in shown:
            z = load_landscape_embeddings(task, m, seed, profile, settings)
            for g in goals:
                r = landscape.cost_landscape(z, positions.positions, g, period=period)
                out |= {f"{m}|{g}|{f}": np.asarray(r[f]) for f in PANEL_FIELDS}
        return out

    value = memo(f"landscape-examples-{task}", spec, compute)
    panels = {
        m: [{f: _scalar(value[f"{m}|{g}|{f}"]) for f in PANEL_FIELDS} for g in goals] for m in shown
    }
    return LandscapeExamples(positions, goals, seed, panels)


def _scalar(a: np.ndarray) -> Any:
    """A 0-d array back to the Python float it was; other arrays as they are."""
    return float(a) if a.ndim == 0 else a
