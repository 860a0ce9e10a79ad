"""The manipulation tasks' ladders (study.levers), half-q arms and moving-pair protocol."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jepa_geometry.book import tables
from jepa_geometry.envs import make_task, q_names
from jepa_geometry.envs.collect import episode_counts
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.planning.protocol import (
    draw_episode_set,
    episode_set_spec,
    hard_threshold,
    make_protocol,
)
from jepa_geometry.profiles import ProfileError, load_profile, with_overrides
from jepa_geometry.study.decisions import gate
from jepa_geometry.study.levers import Lever, ladder_rung
from jepa_geometry.study.spec import SpecError, load_study, task_ladder
from jepa_geometry.wm.arms import arm_name, arm_weights, parse_arm, q_variant
from jepa_geometry.wm.training import world_model_artifact


def test_rungs_are_cumulative_multipliers_of_the_profile():
    laptop = load_profile("laptop")
    rungs = [lv.overrides("pusht", laptop) for lv in task_ladder("pusht")]
    assert rungs[0] == {} and rungs[1] == {"data.image_size": 96}
    assert rungs[2] == {"data.image_size": 96, "train.steps": 3 * laptop.train.steps}
    assert rungs[3]["data.task_episodes"]["pusht"] == [500, 100]
    for before, after in zip(rungs, rungs[1:], strict=False):  # each rung keeps the last's
        assert all(after[k] == v for k, v in before.items() if k != "data.task_episodes")
    cube = ladder_rung(task_ladder("cube"), "cube", "moving pairs, 5x episodes").apply(
        "cube", laptop
    )
    assert episode_counts("cube", cube) == (250, 50)
    assert episode_counts("pusht", cube) == episode_counts("pusht", laptop)  # one task only
    # a user's override is scaled, not replaced
    mine = with_overrides(laptop, {"train.steps": 500})
    assert (
        ladder_rung(task_ladder("pusht"), "pusht", "96 px, 3x steps")
        .apply("pusht", mine)
        .train.steps
        == 1500
    )


def test_the_smoke_profile_caps_every_factor_and_keeps_every_rung_distinct():
    smoke, laptop = load_profile("smoke"), load_profile("laptop")
    assert smoke.ladder.max_factor == 2.0 and laptop.ladder.max_factor == float("inf")
    for task in ("pusht", "cube"):
        ladder = task_ladder(task)
        cfgs = [lv.apply(task, smoke) for lv in ladder]
        for lv, cfg in zip(ladder, cfgs, strict=True):
            assert cfg.data.image_size == round(min(lv.image, 2) * smoke.data.image_size)
            assert cfg.train.steps == round(min(lv.steps, 2) * smoke.train.steps)
            assert episode_counts(task, cfg) == tuple(
                round(min(lv.episodes, 2) * c) for c in episode_counts(task, smoke)
            )
        rungs = {
            (c.data.image_size, c.train.steps, episode_counts(task, c), lv.protocol)
            for lv, c in zip(ladder, cfgs, strict=True)
        }
        assert len(rungs) == len(ladder)  # each rung still a configuration of its own
    cube = ladder_rung(task_ladder("cube"), "cube", "moving pairs, 5x episodes").apply(
        "cube", smoke
    )
    assert episode_counts("cube", cube) == (2, 2)  # 2 x smoke's (1, 1), not 5 x


def test_bad_levers_and_overrides_stop_with_one_line():
    with pytest.raises(ValueError, match="multipliers must be >= 1"):
        Lever("fewer", steps=0.5)
    with pytest.raises(ValueError, match="unknown protocol 'nosuch'"):
        Lever("x", protocol="nosuch")
    with pytest.raises(ValueError, match=r"no lever 'nosuch'; its ladder: as profiled; 96 px"):
        ladder_rung(task_ladder("pusht"), "pusht", "nosuch")
    with pytest.raises(
        ValueError, match=r"task 'tworoom' has no ladder \(its study file names none\)"
    ):
        ladder_rung(task_ladder("tworoom"), "tworoom", "as profiled")
    with pytest.raises(
        ProfileError, match=r"train\.steps must be greater than or equal to 1, got 0"
    ):
        with_overrides(load_profile("smoke"), {"train.steps": 0})


def test_gate_threshold_comes_from_power_on_the_manipulation_tasks_only():
    laptop = load_profile("laptop")
    assert gate.gate_low("tworoom", laptop) == gate.GATE_LOW
    low = gate.gate_low("pusht", laptop)
    assert low == pytest.approx(0.1122, abs=1e-3)
    assert low == gate.gate_low("cube", laptop)
    assert np.isnan(gate.gate_low("cube", load_profile("smoke")))  # 1 seed x 4 pairs


def test_a_study_file_names_its_rung_per_profile():
    spec = dataclasses.replace(load_study("reacher"), task="pusht", ladder=task_ladder("pusht"))
    laptop = load_profile("laptop")
    assert spec.profile(laptop) is laptop  # no settings: as profiled
    ran = dataclasses.replace(spec, settings={"laptop": "96 px"})
    assert ran.profile(laptop).data.image_size == 96
    smoke = load_profile("smoke")
    assert ran.profile(smoke) is smoke  # the rung is named for the laptop profile only
    with pytest.raises(SpecError, match="no lever 'nosuch'"):
        dataclasses.replace(spec, settings={"laptop": "nosuch"})
    with pytest.raises(SpecError, match="settings for unknown profile 'big'"):
        dataclasses.replace(spec, settings={"big": "96 px"})
    cube = dataclasses.replace(load_study("reacher"), task="cube", ladder=task_ladder("cube"))
    with pytest.raises(SpecError, match="plans under goal25_budget50_moving, but the main"):
        dataclasses.replace(cube, settings={"laptop": "moving pairs"})


def test_half_q_arms_record_their_q_in_the_training_key():
    assert q_variant("scale-halfq") == "half" and parse_arm("scale-halfq") == ("scale",)
    assert arm_name("anisowm+scale-halfq") == "scale+anisowm-halfq"
    assert arm_weights("scale-halfq", "pusht") == arm_weights("scale", "pusht")
    with pytest.raises(ValueError, match="needs a term that reads q"):
        parse_arm("anisowm-halfq")
    with pytest.raises(ValueError, match="task 'tworoom' has no half-q variant"):
        arm_weights("scale-halfq", "tworoom")
    smoke = load_profile("smoke")
    half = world_model_artifact("pusht", "scale-halfq", 0, smoke)
    full = world_model_artifact("pusht", "scale", 0, smoke)
    assert half.spec["q"] == ["block_x", "block_y", "cos_theta", "sin_theta"]
    assert "q" not in full.spec and half.key != full.key  # full-q keys are unchanged
    assert set(half.spec["q"]) < set(q_names("pusht"))


def test_moving_pairs_all_move_and_other_protocols_keep_their_keys():
    smoke = load_profile("smoke")
    data = load_dataset("tworoom", smoke, progress=False)
    task = make_task("tworoom", smoke.data.image_size)
    plain = make_protocol(smoke, "goal25_budget50")
    moving = dataclasses.replace(plain, name="goal25_budget50_moving", moving=True)
    assert make_protocol(smoke, "goal25_budget50_moving") == moving
    eps = draw_episode_set(task, data, moving, smoke.eval.episodes, 0)
    assert (eps.pairs.start_distance > hard_threshold("tworoom")).all()
    assert eps.pairs.hard.all()
    assert "moving" not in episode_set_spec("tworoom", smoke, plain, 4, 0)["protocol"]
    assert episode_set_spec("tworoom", smoke, moving, 4, 0)["protocol"]["moving"] is True


def _fake_gate(outcomes):
    """A protocol_gate that returns the next scripted outcome and records its arguments."""
    calls = []

    def gate_(task, cfg, protocol, pairs, progress=False):
        outcome = outcomes[len(calls)]
        calls.append((cfg.data.image_size, cfg.train.steps, protocol, pairs))
        return {
            "task": task,
            "protocol": protocol,
            "pairs": pairs,
            "lewm (%)": "",
            "discriminates": outcome == "keep",
            "outcome": outcome,
            "reason": outcome,
        }

    return gate_, calls


class _Art:
    def manifest(self):
        return {"summary": {"train_wall_s": 60.0}, "collect_seconds": 30.0, "workers": 2}


def _no_artifacts(monkeypatch):
    monkeypatch.setattr(gate, "world_model_artifact", lambda *a, **k: _Art())
    monkeypatch.setattr(gate, "dataset_artifact", lambda *a, **k: _Art())


@pytest.mark.parametrize(
    ("outcomes", "chosen", "n_rows"),
    [
        (["fails", "keep", "keep", "keep"], "96 px", 2),
        (["fails", "floor", "fails", "fails"], None, 4),
        (["fails", "saturates", "keep", "keep"], None, 2),  # more compute cannot help
    ],
)
def test_the_ladder_stops_at_the_first_pass_or_at_saturation(monkeypatch, outcomes, chosen, n_rows):
    fake, calls = _fake_gate(outcomes)
    monkeypatch.setattr(gate, "protocol_gate", fake)
    _no_artifacts(monkeypatch)
    lever, rows = gate.lever_choice("pusht", load_profile("laptop"))
    assert (lever.name if lever else None) == chosen and len(rows) == n_rows
    assert all(c[3] == "validation" for c in calls)  # never the evaluation pairs
    assert calls[:2] == [
        (64, 1300, "goal25_budget50", "validation"),
        (96, 1300, "goal25_budget50", "validation"),
    ]
    assert list(rows["lever"]) == [lv.name for lv in task_ladder("pusht")[:n_rows]]
    assert (rows["train (min)"] == 1.0).all() and (rows["collect (min)"] == 0.5).all()
    assert (rows["collect workers"] == 2).all()


def test_study_choice_dispatches_on_the_ladder(monkeypatch):
    fake, _ = _fake_gate(["fails", "fails", "fails", "keep"])
    monkeypatch.setattr(gate, "protocol_gate", fake)
    _no_artifacts(monkeypatch)
    protocol, rung, rows = gate.study_choice("cube", load_profile("laptop"))
    assert rung.name == "moving pairs, 5x episodes, 3x steps"
    assert protocol == "goal25_budget50_moving" and len(rows) == 4
    monkeypatch.setattr(gate, "protocol_choice", lambda t, p, progress=False: ("x", rows))
    assert gate.study_choice("tworoom", load_profile("laptop"))[:2] == ("x", None)


def test_a_study_that_does_not_plan_gives_an_empty_grid_and_no_variant_planning():
    from jepa_geometry.study import cells
    from jepa_geometry.study.decisions import lambdareg

    spec = load_study("cube")
    assert spec.plans is False and spec.main_protocol == "goal25_budget50_moving"
    smoke = load_profile("smoke")
    g = cells.plan_study(spec, smoke, progress=False)  # nothing is planned or trained
    assert g.episodes.empty and set(cells.EPISODE_COLUMNS) <= set(g.episodes.columns)
    assert np.isnan(g.temperature)
    assert lambdareg.study_variant_planning(spec, smoke, "published").empty
    assert "does not plan" in tables.geometry.variant_planning_sentence(
        lambdareg.study_variant_planning(spec, smoke, "published")
    )
    with pytest.raises(SpecError, match="plans must be true or false"):
        from jepa_geometry.study.spec import _plans

        _plans("cube", "no")


def test_best_rung_is_the_largest_paired_gap_and_the_cheaper_on_a_tie():
    import pandas as pd

    rows = pd.DataFrame({"lever": list("abcd"), "gap": [0.035, 0.055, 0.030, 0.055]})
    assert gate.best_rung(rows) == 1
    with pytest.raises(ValueError, match="ran no rung"):
        gate.best_rung(rows.iloc[:0])


def test_paper_gap_counts_what_the_paper_profile_spends():
    from jepa_geometry.book import tables

    laptop, paper = load_profile("laptop"), load_profile("paper")
    gap = tables.planning.paper_gap(laptop, paper, "cube", 5).set_index("quantity")
    assert gap.loc["image size (px)", "ratio"] == pytest.approx(224 / 64)
    clips = gap.loc["training clips seen (steps x batch)"]
    assert clips["this profile"] == laptop.train.steps * laptop.train.batch_size
    assert clips["ratio"] == pytest.approx(clips["paper profile"] / clips["this profile"])
    assert gap.loc["world-model parameters", "ratio"] > 10  # ViT-tiny against the small CNN


def test_the_gate_page_takes_only_a_task_with_a_ladder():
    from jepa_geometry.book.parameters import check_parameter

    check_parameter("ch06_gate", "task", "cube")
    with pytest.raises(ValueError, match="a task with a study file and a ladder: cube, pusht"):
        check_parameter("ch06_gate", "task", "tworoom")
