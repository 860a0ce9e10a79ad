"""The training loop of a world model, resumable, and its wiring to the datasets and the cache.

One optimizer step minimises an arm's :class:`~jepa_geometry.wm.objective.Objective` on a batch
of clips. Optimisation follows LeWM: AdamW, linear warm-up then cosine to 0 *per optimizer
step* (the per-epoch stepping of some LeWM configs would leave the LR near 0), gradient clipping
at norm 1. CPU profiles use lr 1e-3 instead of 5e-5, which is far too slow for minutes of
training (the book's *Reconstructions* page, section rec-cpu-learning-rate). ΛReg's α is
excluded from weight decay, which would otherwise pull Λ back to the identity; every other
parameter is decayed.

Everything random is seeded from the training seed and saved in every checkpoint
(:mod:`jepa_geometry.wm.checkpoint`), and batches are a pure function of (seed, step), so a run
interrupted at any point and resumed ends with bit-identical weights on CPU.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from jepa_geometry.artifacts import Artifact, get_or_build, load, stable_spec, write_verified
from jepa_geometry.envs import TASKS, q_indices, q_names
from jepa_geometry.envs.clips import ClipSampler
from jepa_geometry.envs.collect import dataset_spec
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.envs.episodes import EpisodeData
from jepa_geometry.jobs import JOB_THREADS, job_threads, progress_bar
from jepa_geometry.profiles import Profile, TrainSettings
from jepa_geometry.wm.arms import (
    DINOWM,
    arm_label,
    arm_name,
    arm_weights,
    objective_file,
    objective_key,
    q_variant,
)
from jepa_geometry.wm.checkpoint import (
    CHECKPOINT_FORMAT,
    LOG_FILE,
    MODEL_FILE,
    check_config,
    load_model_file,
    read_resume,
    run_fingerprint,
    save_model,
)
from jepa_geometry.wm.dinowm import (
    PatchWorldModel,
    build_dinowm,
    encoder_config,
    encoder_identity,
    frame_tokens,
)
from jepa_geometry.wm.model import WorldModel, WorldModelConfig, build_world_model
from jepa_geometry.wm.objective import (
    USER_TERM,
    Batch,
    Objective,
    check_batch,
    derive_seed,
    embedding_diagnostics,
)
from jepa_geometry.wm.user_objective import ObjectiveFileError, load_term

BatchSource = Callable[[int], Iterator[Batch]]  # step s -> the batches of steps s, s+1, ...


# --------------------------------------------------------------------------------------
# The schedule
# --------------------------------------------------------------------------------------


def lr_factor(step: int, warmup: int, total: int) -> float:
    """LR multiplier at optimizer step ``step`` (0-based): linear warm-up, then cosine to 0.

    ``(step + 1) / warmup`` for the first ``warmup`` steps (so step 0 already learns), then
    ``½ (1 + cos(π (step - warmup) / (total - warmup)))``.
    """
    if step < warmup:
        return (step + 1) / warmup
    span = max(total - warmup, 1)
    return 0.5 * (1.0 + math.cos(math.pi * min(step - warmup, span) / span))


@dataclass
class TrainResult:
    """What a training run leaves besides the weights."""

    log: list[dict[str, Any]]
    steps: int
    wall_s: float  # this process's training time (excludes time before a resume)
    resumed_from: int  # 0 for a fresh run
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# The training loop
# --------------------------------------------------------------------------------------


def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX). Without it PyTorch
    emulates bf16: a laptop training step under bf16 autocast runs at 0.07x its fp32 speed on
    one core of an AMD EPYC without AVX-512 (book: Reconstructions, rec-build-jobs). A bf16
    profile still trains in bf16 there, since its numbers are the ones the book reports."""
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def on_device(batches: Iterator[Batch], device: str, prefetch: bool) -> Iterator[Batch]:
    """The batches of ``batches``, in order, on ``device``.

    With ``prefetch`` a background thread samples the next batches (at most two ahead) and
    starts their copies (pinned memory, non-blocking) while the current step computes. On a
    GPU the loop otherwise alternates between sampling on the CPU and computing on the GPU,
    and the GPU waits: a paper-profile step computes in 0.088 s with its batch ready, and the
    loop without the prefetch takes 0.23 s a step (4.31 against 7.86 steps/s; the GPU and the
    date are in ``presets/paper.yaml``). The thread stops when the generator is closed or
    garbage-collected; an exception in it is raised in the consumer."""
    if not prefetch:
        for batch in batches:
            yield {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        return
    ready: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def hand(item: Batch | BaseException | None) -> bool:
        """Puts ``item`` for the consumer unless asked to stop; whether it was put."""
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def fill() -> None:
        try:
            for batch in batches:
                moved = {
                    k: (v.pin_memory() if v.device.type == "cpu" and device != "cpu" else v).to(
                        device, non_blocking=True
                    )
                    for k, v in batch.items()
                }
                if not hand(moved):
                    return
            hand(None)  # the source ended
        except BaseException as e:  # handed to the consumer, which raises it
            hand(e)

    worker = threading.Thread(target=fill, name="batch-prefetch", daemon=True)
    worker.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join(timeout=5)


class _Run:
    """One training run's state: the model and objective, their optimizer and schedule, the
    generators, the log, and the logging window (the terms summed since the last logged row).

    A checkpoint (:meth:`save`) holds all of it, so a run resumed from one (:meth:`resume`)
    goes on with the same sums, random draws and learning rates as one never interrupted.
    """

    def __init__(
        self,
        model: WorldModel,
        objective: Objective,
        settings: TrainSettings,
        seed: int,
        device: str,
    ) -> None:
        """Moves ``model`` and ``objective`` to ``device`` and sets up AdamW and the schedule.

        Two parameter groups: everything decayed, and ΛReg's α without weight decay (decay
        would pull Λ back to the identity) at ``alpha_lr`` times the LR. All parameters are
        clipped together, as in LeWM. The objective's generator and the dropout seed derive
        from ``seed``."""
        self.model, self.objective, self.settings, self.device = model, objective, settings, device
        model.to(device)
        objective.to(device)
        decayed = list(model.parameters()) + [
            p for n, p in objective.named_parameters() if not n.startswith("lambda_reg.")
        ]
        groups = [{"params": decayed, "weight_decay": settings.weight_decay}]
        w = objective.weights
        self.alpha_warmup = int(w.alpha_warmup or 0)
        if objective.lambda_reg is not None:
            groups.append(
                {
                    "params": list(objective.lambda_reg.parameters()),
                    "weight_decay": 0.0,
                    "lr": settings.lr * (w.alpha_lr or 1.0),
                }
            )
        self.params = [p for g in groups for p in g["params"]]  # all clipped together
        self.opt = torch.optim.AdamW(groups, lr=settings.lr)
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda s: lr_factor(s, settings.warmup_steps, settings.steps)
        )
        self.gen = torch.Generator().manual_seed(derive_seed(seed, "objective"))
        torch.manual_seed(derive_seed(seed, "dropout"))
        self.fingerprint = run_fingerprint(model, objective, settings, seed)
        self.log: list[dict[str, Any]] = []
        self.window: dict[str, float] = {}
        self.window_n = 0
        self.pending: list[dict[str, torch.Tensor]] = []  # steps not yet added to the window
        self.start = 0

    def resume(self, checkpoint: Path) -> None:
        """Restores the state saved in ``checkpoint``, if there is one, after checking it
        belongs to the same model, arm, weights, q dimension, settings and seed."""
        state = read_resume(checkpoint)
        if state is None:
            return
        check_config(state["fingerprint"], self.fingerprint, f"checkpoint {checkpoint}")
        self.model.load_state_dict(state["model"])
        self.objective.load_state_dict(state["objective"])
        self.opt.load_state_dict(state["optimizer"])
        self.sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        if state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self.gen.set_state(state["generator"])
        self.log, self.window, self.window_n = state["log"], state["window"], state["window_n"]
        self.start = state["step"]

    def save(self, checkpoint: Path, step: int) -> None:
        """Writes the full state after ``step`` steps to ``checkpoint``, atomically. The
        pending steps must be in the window first (:meth:`flush`)."""
        state = {
            "fingerprint": self.fingerprint,
            "step": step,
            "model": self.model.state_dict(),
            "objective": self.objective.state_dict(),
            "optimizer": self.opt.state_dict(),
            "scheduler": self.sched.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if self.device != "cpu" else None,
            "generator": self.gen.get_state(),
            "log": self.log,
            "window": self.window,
            "window_n": self.window_n,
        }
        buf = io.BytesIO()
        torch.save(state, buf)
        write_verified(checkpoint, buf.getvalue())

    def flush(self) -> None:
        """Adds the pending steps' terms to the logging window, in step order: the same
        float sums as reading each step's values at once, with one synchronisation per log
        or checkpoint instead of one per step (which on a GPU stalls the loop)."""
        for entry in self.pending:
            for k, v in entry.items():
                self.window[k] = self.window.get(k, 0.0) + float(v)
        self.pending = []

    def step(self, step: int, batch: Batch, first: bool) -> float:
        """One optimizer step on ``batch`` (``first``: the first of this process); the LR it
        used. α gets no gradient before ``alpha_warmup`` steps (Adam's moments stay zero, so
        α stays 0 and Λ = I until the global scale of z has settled), and ΛReg's bound is
        applied after the step."""
        objective, settings = self.objective, self.settings
        terms = objective(self.model, batch, self.gen, settings.precision, step, first)
        self.opt.zero_grad(set_to_none=True)
        terms["loss"].backward()
        if step < self.alpha_warmup:
            objective.lambda_reg.alpha.grad = None
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, settings.grad_clip)
        lr = self.opt.param_groups[0]["lr"]
        self.opt.step()
        self.sched.step()
        if objective.lambda_reg is not None:
            objective.lambda_reg.project_()
        self.pending.append({**{k: v.detach() for k, v in terms.items()}, "grad_norm": grad_norm})
        self.window_n += 1
        return lr

    def log_row(self, done: int, lr: float) -> dict[str, Any]:
        """Logs the window ending after ``done`` steps and starts a new one: the terms'
        means over the window, the LR, :func:`embedding_diagnostics` of the last batch and,
        for ΛReg, the target variances v."""
        self.flush()
        row = {"step": done, "lr": lr, **{k: v / self.window_n for k, v in self.window.items()}}
        _check_user_terms(self.objective, row, done - self.window_n, done)
        v = None
        if self.objective.lambda_reg is not None:
            v = self.objective.lambda_reg.variances.detach()
            row["lambda_v"] = v.tolist()
        row.update(embedding_diagnostics(*self.objective.last_embeddings, v))
        self.log.append(row)
        self.window, self.window_n = {}, 0
        return row


def train(
    model: WorldModel,
    objective: Objective,
    batches: BatchSource,
    settings: TrainSettings,
    seed: int,
    checkpoint: Path | None = None,
    progress: bool = True,
    on_checkpoint: Callable[[int], None] | None = None,
    device: str = "cpu",
) -> TrainResult:
    """Train ``model`` (in place) for ``settings.steps`` optimizer steps.

    ``batches(s)`` yields the batches of steps s, s+1, ... (a pure function of the step, so a
    resumed run sees the same data). With ``checkpoint`` set, the full training state is
    written there atomically every ``checkpoint_every`` steps and at the end, and an existing
    checkpoint is resumed from -- after checking it belongs to the same model, arm, weights,
    q dimension, settings and seed. ``on_checkpoint(step)`` is called after each write.
    ΛReg's declared variants (``objective.weights``): α's learning rate is ``alpha_lr`` times
    the model's, α gets no gradient for the first ``alpha_warmup`` steps (so Adam's moments
    stay zero and α stays 0), and ``bound="project"`` projects α after every step.
    Loss terms are averaged over ``log_every`` steps and logged with the LR, the gradient norm,
    :func:`embedding_diagnostics` of the logging step's batch and, for ΛReg, the target
    variances v.
    """
    run = _Run(model, objective, settings, seed, device)
    if checkpoint is not None:
        run.resume(Path(checkpoint))
    model.train()
    objective.train()
    it = on_device(batches(run.start), device, prefetch=device != "cpu")
    t0 = time.perf_counter()
    bar = _progress(settings.steps, run.start, objective.arm, progress)
    try:
        for step in range(run.start, settings.steps):
            batch = next(it)
            if step == run.start:
                check_batch(batch, model, objective.q_dim)
            lr = run.step(step, batch, first=step == run.start)
            done = step + 1
            if done % settings.log_every == 0 or done == settings.steps:
                row = run.log_row(done, lr)
                bar.set_postfix(loss=f"{row['loss']:.4f}", pred=f"{row['pred']:.4f}")
            bar.update(1)
            if checkpoint is not None and (
                done % settings.checkpoint_every == 0 or done == settings.steps
            ):
                run.flush()
                _check_finite(model, objective, done)  # never a checkpoint to resume NaN from
                run.save(Path(checkpoint), done)
                if on_checkpoint is not None:
                    on_checkpoint(done)
    finally:
        it.close()
        bar.close()
    model.eval()
    return TrainResult(run.log, settings.steps, time.perf_counter() - t0, run.start)


def _check_user_terms(objective: Objective, row: dict[str, Any], first: int, done: int) -> None:
    """Stop when an objective file's term (or a diagnostic of it) was not finite in the
    logged window of steps ``first`` to ``done - 1``: its mean over the window is then not
    finite either, so one check per logged row finds it without a synchronisation per step."""
    if objective.user_term is None:
        return
    bad = [k for k, v in row.items() if k.split(".")[0] == USER_TERM and not math.isfinite(v)]
    if bad:
        raise ObjectiveFileError(
            f"objective file {objective.user_term.path}: {', '.join(bad)} not finite "
            f"between steps {first} and {done - 1}"
        )


def _check_finite(model: torch.nn.Module, objective: Objective, done: int) -> None:
    """Stop, before a checkpoint is written, when a weight is no longer finite after ``done``
    steps: the logged window catches a non-finite term only every ``log_every`` steps, and a
    checkpoint written between the two would hold the NaN weights that a rerun resumes from.
    The last checkpoint written, all of whose weights were finite, stays."""
    weights = [*model.named_parameters(), *objective.named_parameters()]  # ΛReg's α, Aux's head
    bad = next((n for n, w in weights if not torch.isfinite(w).all()), None)
    if bad is None:
        return
    user = objective.user_term
    where = f"objective file {user.path}: " if user else ""
    raise (ObjectiveFileError if user else ValueError)(
        f"{where}training diverged: weight {bad} is not finite after step {done}; the last "
        f"checkpoint with finite weights is kept, and a rerun resumes from it"
    )


def _progress(total: int, initial: int, desc: str, enabled: bool):
    return progress_bar(total=total, initial=initial, desc=f"train {desc}", progress=enabled)


# --------------------------------------------------------------------------------------
# Wiring to the datasets and the artifact cache
# --------------------------------------------------------------------------------------


def _check_run(task: str, arm: str, seed: int, profile: Profile, weights: dict | None):
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid: {', '.join(TASKS)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(profile, Profile):
        raise ValueError(f"profile must be a Profile (load_profile(...)), got {profile!r}")
    return arm_weights(arm, task, profile.train.sigreg_weight, weights)


def world_model_artifact(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> Artifact:
    """``data/checkpoints/<task>-<arm>/<key>``: keyed by everything the weights depend on.

    An arm with an objective file is named by the file's stem (:func:`~.arms.arm_label`) and
    its key holds the file's sha256, read now: an edited file is a new model."""

    w = _check_run(task, arm, seed, profile, weights)
    clips = {k: getattr(profile.data, k) for k in ("image_size", "history", "frameskip")}
    full_q = list(q_names(task))
    spec = stable_spec(
        {
            "task": task,
            "arm": arm_label(arm),
            "weights": w.as_dict(),
            "seed": seed,
            "dataset": dataset_spec(task, profile),
            "clips": clips,
            "model": profile.section("model"),
            "train": profile.section("train"),
            "format": CHECKPOINT_FORMAT,
            "torch_threads": JOB_THREADS,
            "q": [full_q[i] for i in q_indices(task, q_variant(arm))],
            "device": profile.cluster.device,
            "objective": objective_key(arm),  # the file's name and sha256 (None: no file)
        },
        added={"q": full_q, "device": "cpu", "objective": None},
    )
    if arm_name(arm) == DINOWM:  # its own model: the predictor's size and the frozen encoder
        spec["dinowm"] = {
            **profile.section("dinowm"),
            "dinov2_weights": None,
            "encoder": dataclasses.asdict(encoder_config(profile)),
            **encoder_identity(profile),
        }
    return Artifact("checkpoints", f"{task}-{arm_label(arm)}", spec)


def check_objective_digest(arm: str, read: str, expected: str) -> None:
    """Stop when the objective file of ``arm`` read now (sha256 ``read``) is not the one a key
    was computed from (``expected``): the file changed between the two readings, and training
    would store one objective's model under the other's key."""
    if read != expected:
        raise ObjectiveFileError(
            f"objective file {objective_file(arm)} changed while in use: sha256 {read[:12]} "
            f"now, {expected[:12]} when its model's key was computed; run the command again"
        )


def clip_batches(
    dataset: EpisodeData,
    profile: Profile,
    seed: int,
    q: str = "full",
    tokens: tuple[np.ndarray, torch.Tensor] | None = None,
) -> BatchSource:
    """Training batches of ``data.ClipSampler`` clips; step s's batch depends only on (seed, s).

    The clip starts of step s are drawn uniformly (with replacement, like ClipSampler) by a
    generator seeded with (seed, s), so a resumed run needs no fast-forward. With ``tokens`` =
    (position of each dataset row in the table or -1, table of frozen tokens), each batch also
    carries its frames' tokens as ``z`` (DINO-WM, :func:`frozen_token_table`).
    """

    sampler = ClipSampler(
        dataset,
        split="train",
        history=profile.data.history,
        frameskip=profile.data.frameskip,
        batch_size=profile.train.batch_size,
        q_variant=q,
    )
    base = derive_seed(seed, "batches")

    def source(start: int) -> Iterator[Batch]:
        step = start
        while True:
            rng = np.random.default_rng([base, step])
            starts = rng.choice(sampler.starts, size=profile.train.batch_size)
            batch = sampler.sample(starts)
            if tokens is not None:
                frames = starts[:, None] + sampler.k * np.arange(sampler.T)
                batch["z"] = tokens[1][tokens[0][frames]]
            yield batch
            step += 1

    return source


def frozen_token_table(
    model: PatchWorldModel, dataset: EpisodeData, progress: bool = True
) -> tuple[np.ndarray, torch.Tensor]:
    """DINO-WM's frozen tokens of every frame of the training episodes, encoded once
    (:func:`~jepa_geometry.wm.dinowm.frame_tokens`): (row -> table position or -1, table)."""
    eps = dataset.episodes("train")
    rows = np.concatenate(
        [np.arange(dataset.starts[e], dataset.starts[e] + dataset.lengths[e]) for e in eps]
    )
    where = np.full(len(dataset.episode), -1, dtype=np.int64)
    where[rows] = np.arange(len(rows))
    return where, frame_tokens(model, dataset.pixels, rows, progress=progress)


def train_world_model(
    task: str,
    arm: str,
    seed: int,
    profile: Profile,
    weights: dict | None = None,
    progress: bool = True,
    heavy: bool = False,
) -> Artifact:
    """Train (or find in the cache) the world model of (task, arm, weights, seed, profile).

    With ``heavy`` the caller will load ``model.pt``, so a cached artifact without it (the
    evidence tree keeps the manifest and the log only) is trained again, bit-identical;
    without it the manifest and ``log.json`` suffice.

    Interrupted runs resume from ``.<key>.resume.pt`` next to the artifact. The artifact holds
    ``model.pt`` (config, weights, metadata) and ``log.json`` (the loss terms every
    ``log_every`` steps); its manifest carries a summary (final terms, wall time, steps/s).
    Training runs with a fixed thread count (:func:`jepa_geometry.jobs.job_threads`), so the
    weights do not depend on the machine's core count; parallelism is across models
    (:func:`jepa_geometry.study.build.build_study`).
    """
    art = world_model_artifact(task, arm, seed, profile, weights)
    w = arm_weights(arm, task, profile.train.sigreg_weight, weights)
    resume = art.write_path.parent / f".{art.key}.resume.pt"
    if objective_file(arm) is not None and not art.exists():
        load_term(objective_file(arm))  # a bad file stops here, before the dataset is read

    def build(tmp: Path) -> dict[str, Any]:

        ds = load_dataset(task, profile)
        make = build_dinowm if arm_name(arm) == DINOWM else build_world_model
        model = make(profile, ds.action.shape[1], derive_seed(seed, "init"))
        q_cols = q_indices(task, q_variant(arm))
        objective = Objective(
            arm,
            w,
            model.embed_dim,
            len(q_cols),
            profile.train.sigreg_projections,
            profile.train.pairs_per_batch,
            seed,
        )
        if objective.user_term is not None:  # the file read is the one the key names
            check_objective_digest(arm, objective.user_term.sha256, art.spec["objective"]["sha256"])
        with job_threads():  # the same bits on any machine (jepa_geometry.jobs)
            t0 = time.perf_counter()
            table = frozen_token_table(model, ds, progress) if arm_name(arm) == DINOWM else None
            tokens_wall = time.perf_counter() - t0
            result = train(
                model,
                objective,
                clip_batches(ds, profile, seed, q_variant(arm), table),
                profile.train,
                seed,
                checkpoint=resume,
                progress=progress,
                device=profile.cluster.device,
            )
        model.to("cpu")  # the model file is read anywhere (load_model_file maps to the CPU)
        # "method" names the arm: model.pt and the manifest's summary hold the key as written
        meta = {"task": task, "method": arm_name(arm), "weights": w.as_dict(), "seed": seed}
        meta.update(q_dim=len(q_cols), action_dim=int(ds.action.shape[1]))
        meta["q"] = [q_names(task)[i] for i in q_cols]
        save_model(tmp / MODEL_FILE, model, meta)
        (tmp / LOG_FILE).write_text(json.dumps(result.log))
        fresh = result.steps - result.resumed_from
        return {
            "summary": {
                **meta,
                "parameters": model.num_parameters(),
                "final": {k: v for k, v in result.log[-1].items() if k != "lambda_v"},
                "train_wall_s": round(result.wall_s, 2),
                "tokens_wall_s": round(tokens_wall, 2),  # DINO-WM's one encoding pass
                "steps_per_s": round(fresh / max(result.wall_s, 1e-9), 2),
                "resumed_from": result.resumed_from,
                "torch_threads": JOB_THREADS,
            }
        }

    how = f"jepa-geometry train --task {task} --arm {arm} --seed {seed} --profile {profile.name}"
    how += "".join(f" --weight {k}={v}" for k, v in (weights or {}).items())
    get_or_build(art, build, heavy=heavy, how=how)
    resume.unlink(missing_ok=True)
    return art


def load_world_model(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> WorldModel:
    """The trained world model in eval mode (trained first if not in the cache)."""
    art = train_world_model(task, arm, seed, profile, weights, heavy=True)  # weights verified
    path = art.path / MODEL_FILE
    action_dim = torch.load(path, map_location="cpu", weights_only=False)["meta"]["action_dim"]
    return load_model_file(path, WorldModelConfig.from_profile(profile, action_dim))


def training_log(task: str, arm: str, seed: int, profile: Profile, weights=None) -> list[dict]:
    """The logged loss terms of a trained model (trains it if missing)."""
    art = train_world_model(task, arm, seed, profile, weights)
    return json.loads((load(art) / LOG_FILE).read_text())


def train_one_seed(
    task: str, arms: Sequence[str], seed: int, profile: Profile, progress: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train (or find in the cache) one model per arm with training seed ``seed``; return
    ``(logs, summary)``.

    ``logs`` stacks every arm's ``log.json`` (one row per logged step, an ``arm`` column
    added; terms an arm lacks are NaN). ``summary`` has one row per arm (indexed by arm) with
    the columns of :func:`~jepa_geometry.study.cells.train_arms`: ``train_seconds`` (wall time),
    ``steps_per_s`` (fresh steps / wall time) and ``pred`` (the final prediction loss), read
    from the artifact's manifest, so a cached model reports the run that built it.
    """
    logs, summaries = [], {}
    for m in arms:
        art = train_world_model(task, m, seed, profile, progress=progress)
        s = art.manifest()["summary"]
        summaries[m] = {
            "train_seconds": s["train_wall_s"],
            "steps_per_s": s["steps_per_s"],
            "pred": s["final"]["pred"],
        }
        log = pd.read_json(art.path / LOG_FILE)
        log["arm"] = m
        logs.append(log)
    return pd.concat(logs, ignore_index=True), pd.DataFrame(summaries).T


# --------------------------------------------------------------------------------------
# Reading the training logs
# --------------------------------------------------------------------------------------


def last_logged(diagnostics: pd.DataFrame, last: int = 3) -> pd.DataFrame:
    """The rows of each model's (arm, train_seed, diagnostic) ``last`` logged steps, from the
    long table of :func:`~jepa_geometry.study.diagnostics.diagnostics_long`: what "at the end of
    training" means for every diagnostic the book reports."""
    order = diagnostics.groupby(["arm", "train_seed", "diagnostic"])["step"]
    return diagnostics[order.rank(method="first", ascending=False) <= last]


def model_untrained(
    task: str, arm: str, seed: int, profile: Profile, weights: dict | None = None
) -> bool:
    """Whether :func:`train_world_model` with these arguments still has to train: the
    ``pending`` test of a pool of training jobs (trained models load without a pool)."""
    return not world_model_artifact(task, arm, seed, profile, weights).exists()
