"""The trainer (jepa_geometry.wm.training): the LR schedule, determinism, resume after a killed
process, bad input, the paper model on CPU, the cache and the CLI."""

import dataclasses
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.arms import arm_weights
from jepa_geometry.wm.checkpoint import load_training_state
from jepa_geometry.wm.model import WorldModel, WorldModelConfig, build_world_model
from jepa_geometry.wm.objective import DIAGNOSTICS, Objective, check_batch
from jepa_geometry.wm.training import lr_factor, on_device, train, world_model_artifact
from tests.conftest import REPO

Q_DIM = 2


def synthetic_batches(batch_size: int, history: int, image_size: int, block_dim: int, seed=0):
    """A ClipSampler-format batch source whose batch at step s is a pure function of (seed, s)."""

    def source(start: int):
        step = start
        while True:
            g = torch.Generator().manual_seed(seed * 1_000_003 + step)
            t = history + 1
            yield {
                "pixels": torch.randint(
                    0, 256, (batch_size, t, 3, image_size, image_size), generator=g
                ).to(torch.uint8),
                "actions": torch.randn(batch_size, t, block_dim, generator=g),
                "q": torch.randn(batch_size, t, Q_DIM, generator=g),
                "episode": torch.randint(0, 6, (batch_size,), generator=g),
            }
            step += 1

    return source


def tiny_profile(**train_overrides):
    over = {"data.image_size": 16, "model.encoder_widths": [8, 8], "model.embed_dim": 16}
    over.update({"model.projector_hidden": 32, "model.predictor_width": 16})
    over.update({"model.predictor_dropout": 0.1, "train.batch_size": 8})
    over.update({"train.sigreg_projections": 32, "train.pairs_per_batch": 16})
    over.update({f"train.{k}": v for k, v in train_overrides.items()})
    return load_profile("smoke", over)


def make_run(arm="lewm", seed=0, profile=None, **weights):
    prof = profile or tiny_profile()
    model = build_world_model(prof, action_dim=2, seed=seed)
    w = arm_weights(arm, "tworoom", prof.train.sigreg_weight, weights or None)
    obj = Objective(
        arm,
        w,
        model.embed_dim,
        Q_DIM,
        prof.train.sigreg_projections,
        prof.train.pairs_per_batch,
        seed,
    )
    src = synthetic_batches(
        prof.train.batch_size, prof.data.history, prof.data.image_size, model.action_block_dim
    )
    return prof, model, obj, src


def flat_state(*modules) -> torch.Tensor:
    return torch.cat(
        [t.detach().flatten().float() for m in modules for t in m.state_dict().values()]
    )


# ------------------------------------------------------------------ loss composition


def test_lambda_reg_alpha_gets_gradient_only_from_its_term_and_no_weight_decay():
    prof, model, obj, src = make_run("anisowm")
    batch = next(src(0))
    terms = obj(model, batch, torch.Generator().manual_seed(0))
    (g_pred,) = torch.autograd.grad(terms["pred"], obj.lambda_reg.alpha, allow_unused=True)
    assert g_pred is None
    (g_reg,) = torch.autograd.grad(terms["lambda_reg"], obj.lambda_reg.alpha)
    assert g_reg.abs().sum() > 0
    # Only α is exempt from weight decay: with zero gradients AdamW would shrink it otherwise.
    obj.lambda_reg.alpha.data.fill_(0.3)
    prof = tiny_profile(steps=1, lr=0.1, weight_decay=0.5, warmup_steps=1)
    train(model, obj, src, prof.train, seed=0, progress=False)
    v = obj.lambda_reg.variances.detach()
    assert v.sum().item() == pytest.approx(model.embed_dim, rel=1e-5)
    assert v.max() / v.min() <= 2.0 + 1e-5


# ------------------------------------------------------------------ schedule


def test_lr_schedule_warmup_then_cosine_to_zero():
    warm, total = 10, 110
    assert [lr_factor(s, warm, total) for s in (0, 4, 9)] == [0.1, 0.5, 1.0]
    assert lr_factor(10, warm, total) == 1.0
    assert lr_factor(60, warm, total) == pytest.approx(0.5)  # halfway through the cosine
    assert lr_factor(35, warm, total) == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)))
    assert lr_factor(110, warm, total) == pytest.approx(0.0, abs=1e-12)


def test_scheduler_is_stepped_per_optimizer_step():
    prof, model, obj, src = make_run()
    settings = tiny_profile(steps=12, warmup_steps=4, log_every=1, lr=0.01).train
    log = train(model, obj, src, settings, seed=0, progress=False).log
    lrs = [row["lr"] for row in log]
    expected = [0.01 * lr_factor(s, 4, 12) for s in range(12)]
    assert lrs == pytest.approx(expected)


# ------------------------------------------------------------------ determinism and resume


def test_same_seed_same_weights_different_seed_different():
    def run(seed):
        prof, model, obj, src = make_run("scale+aux+anisowm", seed=seed)
        train(model, obj, src, tiny_profile(steps=6).train, seed=seed, progress=False)
        return flat_state(model, obj)

    a, b, c = run(0), run(0), run(1)
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)


RUNNER = """
import os, signal, sys, torch
sys.path.insert(0, {repo!r})
from tests.wm.test_training import make_run, tiny_profile
from jepa_geometry.wm.training import train
kill_at = int(sys.argv[2])
torch.set_num_threads(int(sys.argv[3]))  # same intra-op threads as the parent: same float sums
prof, model, obj, src = make_run("scale+aux+anisowm")
def hook(step):
    if step == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
train(model, obj, src, tiny_profile(steps=12, checkpoint_every=4, log_every=3).train, seed=0,
      checkpoint=sys.argv[1], progress=False, on_checkpoint=hook)
"""


def _resume_and_compare(ckpt: Path):
    prof, model, obj, src = make_run("scale+aux+anisowm")
    settings = tiny_profile(steps=12, checkpoint_every=4, log_every=3).train
    res = train(model, obj, src, settings, seed=0, checkpoint=ckpt, progress=False)
    prof, ref_model, ref_obj, src = make_run("scale+aux+anisowm")
    ref = train(ref_model, ref_obj, src, settings, seed=0, progress=False)
    assert res.resumed_from > 0
    assert torch.equal(flat_state(model, obj), flat_state(ref_model, ref_obj))
    assert res.log == ref.log  # windows straddling the kill are restored too


def test_killed_run_resumes_to_identical_weights(tmp_path):
    """SIGKILL right after the step-8 checkpoint (dropout, SIGReg directions, pairs all random)."""
    ckpt = tmp_path / "ckpt.pt"
    script = tmp_path / "run.py"
    script.write_text(RUNNER.format(repo=str(REPO)))
    proc = subprocess.run(
        [sys.executable, str(script), str(ckpt), "8", str(torch.get_num_threads())],
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL
    assert load_training_state(ckpt)["step"] == 8
    _resume_and_compare(ckpt)


def test_run_killed_at_an_arbitrary_moment_resumes_to_identical_weights(tmp_path):
    """Killed from outside, mid-step or mid-write: the checkpoint is old or new, never torn."""
    ckpt = tmp_path / "ckpt.pt"
    script = tmp_path / "run.py"
    script.write_text(RUNNER.format(repo=str(REPO)))
    proc = subprocess.Popen(
        [sys.executable, str(script), str(ckpt), "-1", str(torch.get_num_threads())], cwd=REPO
    )
    deadline = time.time() + 120
    while not ckpt.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    if load_training_state(ckpt)["step"] == 12:
        pytest.skip("the run finished before it could be killed")
    _resume_and_compare(ckpt)


# ------------------------------------------------------------------ bad input


def test_an_unknown_arm_weight_or_task_a_bad_kappa_or_seed_fails_before_training():
    prof = load_profile("smoke")
    with pytest.raises(ValueError, match=r"unknown arm component.*valid: lewm, scale"):
        world_model_artifact("tworoom", "scal", 0, prof)
    with pytest.raises(ValueError, match=r"unknown weight 'lamda'; valid: sigreg, scale"):
        world_model_artifact("tworoom", "scale", 0, prof, {"lamda": 0.1})
    with pytest.raises(ValueError, match=r"has no 'kappa' term"):
        world_model_artifact("tworoom", "scale", 0, prof, {"kappa": 2})
    with pytest.raises(ValueError, match=r"kappa must be >= 1"):
        world_model_artifact("tworoom", "anisowm", 0, prof, {"kappa": 0.5})
    with pytest.raises(ValueError, match=r"unknown task 'tworooms'; valid: tworoom"):
        world_model_artifact("tworooms", "lewm", 0, prof)
    with pytest.raises(ValueError, match="seed"):
        world_model_artifact("tworoom", "lewm", -1, prof)


def test_wrong_batch_shapes_fail_before_any_update():
    prof, model, obj, src = make_run("scale")
    before = flat_state(model)
    good = next(src(0))
    bad_q = dict(good, q=torch.zeros(*good["q"].shape[:2], 3))
    with pytest.raises(
        ValueError, match=r"q must be \(B, T, q_dim\) = \(8, 4, 2\), got \(8, 4, 3\)"
    ):
        train(model, obj, lambda s: iter([bad_q]), prof.train, seed=0, progress=False)
    assert torch.equal(flat_state(model), before)
    with pytest.raises(ValueError, match="actions must be"):
        check_batch(dict(good, actions=good["actions"][..., :4]), model, Q_DIM)
    with pytest.raises(ValueError, match="history \\+ 1 frames"):
        check_batch(dict(good, pixels=good["pixels"][:, :3]), model, Q_DIM)
    with pytest.raises(ValueError, match="lacks"):
        check_batch({"pixels": good["pixels"]}, model, Q_DIM)


def test_checkpoint_of_another_configuration_is_refused(tmp_path):
    ckpt = tmp_path / "c.pt"
    prof, model, obj, src = make_run("lewm")
    train(model, obj, src, tiny_profile(steps=2).train, 0, checkpoint=ckpt, progress=False)
    other = tiny_profile(steps=2)
    other_model = WorldModel(dataclasses.replace(model.cfg, embed_dim=24))
    w = arm_weights("lewm", "tworoom")
    other_obj = Objective("lewm", w, 24, Q_DIM, 32, 16)
    before = flat_state(other_model)
    with pytest.raises(
        ValueError, match=r"different configuration.*model.embed_dim: checkpoint 16 vs requested 24"
    ):
        train(other_model, other_obj, src, other.train, 0, checkpoint=ckpt, progress=False)
    assert torch.equal(flat_state(other_model), before)
    prof, model2, obj2, src = make_run("scale")  # same model, other arm
    with pytest.raises(ValueError, match=r"method: checkpoint 'lewm' vs requested 'scale'"):
        train(model2, obj2, src, other.train, 0, checkpoint=ckpt, progress=False)
    ckpt.write_bytes(b"not a checkpoint")
    with pytest.warns(UserWarning, match=r"no verification header.*restarts from step 0"):
        res = train(model2, obj2, src, other.train, 0, checkpoint=ckpt, progress=False)
    assert res.resumed_from == 0
    aside = list(tmp_path.glob("c.pt.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == b"not a checkpoint"  # kept, not deleted


def test_a_corrupted_resume_checkpoint_is_never_trusted(tmp_path):
    """8 flipped bytes in a resume file (an encoder weight, in the probe that found this):
    the file is set aside with a warning and training restarts, ending bit-identical to an
    uninterrupted run, instead of resuming from the damaged weights."""
    settings = tiny_profile(steps=4).train
    _, ref_model, ref_obj, src = make_run("lewm")
    train(ref_model, ref_obj, src, settings, 0, progress=False)

    ckpt = tmp_path / "r.pt"
    _, model, obj, src = make_run("lewm")
    partial = dataclasses.replace(settings, steps=2, checkpoint_every=1)
    train(model, obj, src, partial, 0, checkpoint=ckpt, progress=False)
    blob = bytearray(ckpt.read_bytes())
    mid = len(blob) // 2
    blob[mid : mid + 8] = bytes(b ^ 0xFF for b in blob[mid : mid + 8])
    ckpt.write_bytes(bytes(blob))

    _, model, obj, src = make_run("lewm")
    with pytest.warns(UserWarning, match="does not match its sha256.*restarts from step 0"):
        res = train(model, obj, src, settings, 0, checkpoint=ckpt, progress=False)
    assert res.resumed_from == 0
    assert torch.equal(flat_state(model), flat_state(ref_model))
    assert len(list(tmp_path.glob("r.pt.corrupt-*"))) == 1


# ------------------------------------------------------------------ the paper model on CPU


@pytest.mark.slow
def test_paper_model_takes_one_training_step_on_cpu(capsys):
    prof = load_profile("paper", {"train.steps": 1, "train.batch_size": 2})
    model = build_world_model(prof, action_dim=2)
    n = model.num_parameters()
    with capsys.disabled():
        print(f"\npaper model (ViT-tiny/14 @224, D=192, predictor depth 6): {n:,} parameters")
    assert n == 18_034_478
    assert isinstance(model.cfg, WorldModelConfig) and model.cfg.encoder == "vit"
    w = arm_weights("scale+aux+anisowm", "tworoom")
    obj = Objective("scale+aux+anisowm", w, 192, Q_DIM, 1024, prof.train.pairs_per_batch)
    src = synthetic_batches(2, 3, 224, model.action_block_dim)
    before = flat_state(model)
    res = train(model, obj, src, prof.train, seed=0, progress=False)
    row = res.log[-1]
    assert all(math.isfinite(row[k]) for k in ("loss", "pred", "lambda_reg", "scale", "aux"))
    assert not torch.equal(flat_state(model), before)


# ------------------------------------------------------------------ artifact keys and CLI


def test_artifact_key_depends_on_task_arm_weights_seed_and_profile():
    prof = load_profile("smoke")
    base = world_model_artifact("tworoom", "scale+anisowm", 0, prof)
    assert base.key == world_model_artifact("tworoom", "anisowm+scale", 0, prof).key
    assert base.name == "tworoom-scale+anisowm"
    assert base.spec["weights"] == {"sigreg": 0.09, "scale": 0.1, "kappa": 2.0}
    others = [
        world_model_artifact("tworoom", "scale", 0, prof),
        world_model_artifact("tworoom", "scale+anisowm", 1, prof),
        world_model_artifact("tworoom", "scale+anisowm", 0, prof, {"kappa": 4}),
        world_model_artifact(
            "tworoom", "scale+anisowm", 0, load_profile("smoke", {"train.lr": 0.01})
        ),
        world_model_artifact("pusht", "scale+anisowm", 0, prof),
    ]
    assert len({base.key, *(o.key for o in others)}) == 1 + len(others)


def test_cli_train_rejects_an_unknown_arm_naming_the_valid_ones(capsys):
    from jepa_geometry.cli import main

    rc = main(["train", "--task", "tworoom", "--arm", "nosuch", "--profile", "smoke"])
    assert rc == 2
    assert "unknown arm component(s) ['nosuch']" in capsys.readouterr().err
    assert os.environ["JEPA_GEOMETRY_DATA"]  # never the real cache


# ------------------------------------------------------------------ end to end on real data


def test_a_trained_model_is_cached_and_loaded_without_retraining():
    """Collect (smoke) -> train -> cache -> load; a second call is a cache hit, not a retrain."""
    from jepa_geometry.analysis.probes import latent_probe_r2
    from jepa_geometry.envs.dataset import load_dataset
    from jepa_geometry.wm.checkpoint import MODEL_FILE
    from jepa_geometry.wm.training import load_world_model, train_world_model, training_log

    prof = load_profile("smoke", {"train.steps": 6, "train.log_every": 2})
    art = train_world_model("tworoom", "scale", 0, prof, progress=False)
    man = art.manifest()
    assert man["summary"]["method"] == "scale" and man["summary"]["final"]["step"] == 6
    assert not any(p.name.endswith(".resume.pt") for p in art.path.parent.glob(".*"))
    mtime = (art.path / MODEL_FILE).stat().st_mtime_ns
    model = load_world_model("tworoom", "scale", 0, prof)
    assert (art.path / MODEL_FILE).stat().st_mtime_ns == mtime  # cache hit
    assert not model.training and model.num_parameters() == man["summary"]["parameters"]
    assert [row["step"] for row in training_log("tworoom", "scale", 0, prof)] == [2, 4, 6]
    r2 = latent_probe_r2(model, load_dataset("tworoom", prof), max_frames=300)
    assert math.isfinite(r2) and r2 <= 1.0


# ------------------------------------------------------------------ tables over arms


def test_arm_weights_table_has_the_papers_defaults():

    from jepa_geometry.book.tables.models import arm_weights_table

    t = arm_weights_table(["lewm", "scale", "aux", "anisowm", "scale+anisowm"], "reacher", 0.05)
    assert list(t.columns) == ["SIGReg", "SCALE", "Aux", "κ"]  # weights and arms as shown
    assert (t["SIGReg"] == 0.05).all()
    # SCALE's λ 0.15 and Aux's w 0.4 on Reacher, κ = 2 (the papers' defaults)
    assert t.loc["SCALE", "SCALE"] == t.loc["SCALE + AnisoWM", "SCALE"] == 0.15
    assert t.loc["Aux", "Aux"] == 0.4 and t.loc["AnisoWM", "κ"] == 2.0
    assert t.loc["SCALE + AnisoWM", "κ"] == 2.0
    assert np.isnan(t.loc["LeWM", ["SCALE", "Aux", "κ"]].astype(float)).all()
    assert np.isnan(float(t.loc["SCALE + AnisoWM", "Aux"]))


def _synthetic_logs():

    a = pd.DataFrame({"step": [1, 2], "pred": [1.0, 0.5], "sigreg": [3.0, 2.0], "arm": "a"})
    b = pd.DataFrame(
        {
            "step": [1, 2],
            "pred": [2.0, 1.0],
            "lambda_reg": [4.0, float("nan")],
            "lambda_v": [[1.0, 1.0, 1.0, 1.0], [2.0, 0.5, 0.5, 1.0]],
            "arm": "b",
        }
    )
    return pd.concat([a, b], ignore_index=True)


def test_loss_terms_long_keeps_each_logged_value_once():
    from jepa_geometry.book.tables.models import loss_terms_long

    logs = _synthetic_logs()
    long = loss_terms_long(logs)
    expected = {
        (row["step"], row["arm"], term): row[term]
        for _, row in logs.iterrows()
        for term in ("pred", "sigreg", "lambda_reg")
        if row[term] == row[term]  # not NaN
    }
    got = {(r.step, r.arm, r.term): r.value for r in long.itertuples()}
    assert got == expected and len(long) == 7
    assert list(dict.fromkeys(long["term"])) == ["pred", "sigreg", "lambda_reg"]


def test_lambda_target_summary_equals_a_hand_count():
    from jepa_geometry.book.tables.models import lambda_target_summary

    s = lambda_target_summary(_synthetic_logs())
    assert list(s["arm"]) == ["b", "b"] and list(s["step"]) == [1, 2]
    assert list(s["largest v"]) == [1.0, 2.0] and list(s["smallest v"]) == [1.0, 0.5]
    assert list(s["share of v > 1"]) == [0.0, 0.25]  # v = 1 is not above the isotropic share
    empty = lambda_target_summary(_synthetic_logs().drop(columns="lambda_v"))
    assert empty.empty and list(empty.columns) == list(s.columns)


def test_train_one_seed_reports_the_logs_each_arm_s_model_wrote():
    """Logs and summaries against the artifacts each arm's model wrote."""
    from jepa_geometry.book.tables.models import training_summary_table
    from jepa_geometry.wm.training import train_one_seed, training_log

    prof = load_profile("smoke", {"train.steps": 6, "train.log_every": 2})
    arms = ["lewm", "scale"]
    logs, summary = train_one_seed("tworoom", arms, 0, prof)
    assert list(summary.index) == arms and list(logs["arm"].unique()) == arms
    for m in arms:
        log = training_log("tworoom", m, 0, prof)
        assert list(logs.loc[logs.arm == m, "step"]) == [row["step"] for row in log] == [2, 4, 6]
        assert summary.loc[m, "pred"] == log[-1]["pred"]
    assert logs["scale"].isna().sum() == 3 and logs["scale"].notna().sum() == 3
    shown = training_summary_table(summary)  # the page's headers, the same numbers
    assert list(shown.columns) == ["train time (s)", "steps/s", "final L_pred"]
    assert list(shown.index) == ["LeWM", "SCALE"] and (shown.to_numpy() == summary.to_numpy()).all()


# ------------------------------------------------------------------ precision and diagnostics


def test_training_log_rows_carry_the_diagnostics():
    prof, model, obj, src = make_run("anisowm")
    res = train(model, obj, src, tiny_profile(steps=4, log_every=2).train, seed=0, progress=False)
    for row in res.log:
        assert set(DIAGNOSTICS) <= set(row)
        assert 1.0 <= row["cond_lambda"] <= obj.weights.kappa + 1e-9
        assert 2 / model.embed_dim <= row["top2_share"] <= row["top8_share"] <= 1.0


def test_alpha_warmup_freezes_lambda_and_alpha_lr_scales_its_first_step():
    def alpha_after(steps: int, **weights) -> torch.Tensor:
        prof, model, obj, src = make_run("anisowm", **weights)
        train(model, obj, src, tiny_profile(steps=steps).train, seed=0, progress=False)
        return obj.lambda_reg.alpha.detach().clone()

    assert torch.equal(alpha_after(3, alpha_warmup=3), torch.zeros(16))  # still Λ = I
    assert not torch.equal(alpha_after(4, alpha_warmup=3), torch.zeros(16))
    # Adam's first step moves each coordinate by lr_0 · sign(g) (|g| >> eps), lr_0 = lr/warmup:
    # ten times the learning rate, ten times the step, whatever the gradient.
    one, ten = alpha_after(1), alpha_after(1, alpha_lr=10)
    lr0 = tiny_profile().train.lr / tiny_profile().train.warmup_steps
    moved = one.abs() > 0.5 * lr0
    assert moved.sum() >= 12
    assert torch.allclose(one[moved].abs(), torch.full_like(one[moved], lr0), rtol=1e-3)
    assert torch.allclose(ten[moved].abs(), torch.full_like(one[moved], 10 * lr0), rtol=1e-3)


def test_projected_alpha_never_leaves_the_box():
    prof, model, obj, src = make_run("anisowm", bound="project", alpha_lr=300)
    res = train(model, obj, src, tiny_profile(steps=6, log_every=1).train, seed=0, progress=False)
    half = 0.5 * math.log(obj.weights.kappa)
    assert obj.lambda_reg.alpha.abs().max().item() <= half + 1e-6
    assert abs(obj.lambda_reg.alpha.mean().item()) < 1e-6
    assert res.log[-1]["cond_lambda"] > 1.0


def _numbered_batches(n: int, fail_at: int | None = None):
    for i in range(n):
        if i == fail_at:
            raise RuntimeError(f"batch {i} could not be sampled")
        yield {"x": torch.full((2, 3), float(i)), "i": torch.tensor(i)}


def test_prefetched_batches_are_the_sources_in_order():
    plain = list(on_device(_numbered_batches(7), "cpu", prefetch=False))
    ahead = list(on_device(_numbered_batches(7), "cpu", prefetch=True))
    assert [int(b["i"]) for b in ahead] == list(range(7))
    for a, b in zip(plain, ahead, strict=True):
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_prefetch_error_reaches_the_loop_and_closing_stops_the_thread():
    it = on_device(_numbered_batches(10, fail_at=3), "cpu", prefetch=True)
    assert [int(next(it)["i"]) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(RuntimeError, match="batch 3 could not be sampled"):
        next(it)
    endless = on_device(_numbered_batches(10**9), "cpu", prefetch=True)
    next(endless)
    endless.close()  # the loop's `finally`: the thread must not run on
    time.sleep(0.3)
    assert not any(t.name == "batch-prefetch" and t.is_alive() for t in threading.enumerate())
