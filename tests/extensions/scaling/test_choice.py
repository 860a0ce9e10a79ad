"""The scaling study's cost and the choice of its units (extensions.scaling.choice): the
priority order, the cost of a unit, the cuts, and the choice the first build keeps."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from jepa_geometry.extensions import scaling
from jepa_geometry.extensions.scaling import choice
from jepa_geometry.extensions.scaling.spec import Point
from jepa_geometry.profiles import load_profile
from tests.extensions.scaling.test_spec import spec


def test_the_priority_order_is_the_rules():
    s, smoke = spec(), load_profile("smoke")
    order = [(p.name, t, a) for p, t, a in choice.priority(s, smoke)]
    two, res, three = "2x steps", "1x steps, 1.5x pixels", "3x steps"
    assert order == [
        (two, "tworoom", "lewm"),
        (two, "pusht", "lewm"),
        (two, "tworoom", "scale"),
        (two, "pusht", "scale"),
        (res, "pusht", "lewm"),
        (res, "pusht", "scale"),
        (three, "tworoom", "lewm"),
        (three, "pusht", "lewm"),
        (three, "tworoom", "scale"),
        (three, "pusht", "scale"),
    ]


def test_the_training_cost_is_seeds_times_steps_times_seconds_times_pixels_squared():
    s, laptop = spec(), load_profile("laptop")
    per_step = 0.1
    cost = choice.unit_cost(s, "pusht", "scale", Point(1.0, 1.5), laptop, per_step)
    steps = scaling.study_profile(s, "pusht", laptop).train.steps
    assert cost["train"] == pytest.approx(2 * steps * per_step * 1.5**2)
    assert cost["collect"] == 0.0 and cost["gate"] == 0.0  # both go on the lewm unit
    lead = choice.unit_cost(s, "pusht", "lewm", Point(1.0, 1.5), laptop, per_step)
    assert lead["collect"] > 0
    assert choice.unit_cost(s, "pusht", "lewm", Point(3.0), laptop, per_step)["collect"] == 0


def test_the_stated_figure_gives_the_seconds_per_step_where_nothing_is_cached(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))
    laptop = load_profile("laptop")
    sec, source = choice.seconds_per_step(spec(), "pusht", laptop)
    steps = scaling.study_profile(spec(), "pusht", laptop).train.steps
    assert sec == pytest.approx(200.0 / steps) and source.startswith("stated")
    smoke = load_profile("smoke")
    sec, source = choice.seconds_per_step(spec(), "pusht", smoke)
    assert sec == pytest.approx(1 / smoke.cluster.train_steps_per_s)


def test_the_rule_keeps_units_in_order_while_they_fit_and_names_the_cuts():
    laptop = load_profile("laptop")
    per_step = {"tworoom": 0.08, "pusht": 0.17}
    s = spec()
    costs = {
        (p.name, t, a): sum(choice.unit_cost(s, t, a, p, laptop, per_step[t]).values()) / 2
        for p, t, a in choice.priority(s, laptop)
    }
    # a budget that holds exactly the units before the top point's scale arm on Push-T
    keep = list(costs)[:-1]
    hours = (sum(costs[k] for k in keep) + 1.0) / 3600
    units = choice.choose_units(
        dataclasses.replace(s, budget_hours={**s.budget_hours, "laptop": hours}), laptop, per_step
    )
    assert (units["status"] == "reused").sum() == len(s.tasks_at(laptop)) * len(s.arms)
    run = units[units["status"] == "run"]
    assert [(r.point, r.task, r.arm) for r in run.itertuples()] == keep
    assert run["seconds"].sum() == pytest.approx(sum(costs[k] for k in keep))
    cut = units[units["status"] == "cut"]
    assert [(r.point, r.task, r.arm, r.why) for r in cut.itertuples()] == [
        ("10x steps", "pusht", "scale", "over the budget")
    ]
    text = choice.cost_statement(units, s, "laptop")
    assert "10x steps Push-T scale (over the budget)" in text
    assert f"{sum(costs[k] for k in keep) / 3600:.2f} h" in text


def test_an_arm_without_its_lewm_unit_is_cut_too():
    laptop = load_profile("laptop")
    per_step = {"tworoom": 0.08, "pusht": 0.17}
    s = spec()
    first = next(iter(choice.priority(s, laptop)))
    small = sum(choice.unit_cost(s, first[1], first[2], first[0], laptop, 0.08).values()) / 2
    units = choice.choose_units(
        dataclasses.replace(s, budget_hours={**s.budget_hours, "laptop": small / 3600 / 2}),
        laptop,
        per_step,
    )
    scale_2x = units[(units["arm"] == "scale") & (units["point"] == "3x steps")]
    assert set(scale_2x["why"]) == {"its LeWM unit was cut"}
    assert (units["status"] == "run").sum() == 0


def test_the_laptop_rule_fits_its_budget():
    laptop = load_profile("laptop")
    s = scaling.load_scaling()
    rates = {
        t: s.model_seconds[t] / scaling.study_profile(s, t, laptop).train.steps
        for t in s.tasks_at(laptop)
    }
    units = choice.choose_units(s, laptop, rates)
    assert units.loc[units["status"] == "run", "seconds"].sum() <= 3600 * s.budget_hours["laptop"]


def test_the_first_build_keeps_its_choice_and_later_reads_use_it(data_root, monkeypatch):
    laptop, s = load_profile("laptop"), spec()
    stated = {"tworoom": 0.08, "pusht": 0.17}  # the stated figures, before any model is cached
    monkeypatch.setattr(choice, "seconds_per_step", lambda _s, t, _b: (stated[t], "stated"))
    before = choice.stated_units(s, laptop)  # a dry run: the rule now, nothing written
    assert list(data_root.rglob("manifest.json")) == []
    kept = choice.stated_units(s, laptop, state=True)  # the first build states it
    pd.testing.assert_frame_equal(kept, before)
    # models cached later train 5x slower: run again, the rule would cut units it built
    monkeypatch.setattr(choice, "seconds_per_step", lambda _s, t, _b: (5 * stated[t], "measured"))
    now = choice.choose_units(s, laptop)
    assert (now["status"] == "cut").sum() > (kept["status"] == "cut").sum()
    for state in (False, True):  # a page and a resumed build read the kept table
        pd.testing.assert_frame_equal(choice.stated_units(s, laptop, state=state), kept)
    # another study file states anew
    other = dataclasses.replace(s, budget_hours={**s.budget_hours, "laptop": 1.0})
    pd.testing.assert_frame_equal(
        choice.stated_units(other, laptop), choice.choose_units(other, laptop)
    )
