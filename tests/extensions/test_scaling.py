"""The scaling study (study.scaling): its file, points, rule, cost and trend reading."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from jepa_geometry.analysis.measurements import Geometry
from jepa_geometry.extensions import scaling, scaling_tables
from jepa_geometry.extensions.scaling import Point, ScalingError
from jepa_geometry.profiles import load_profile

RAW = {
    "tasks": {p: ["tworoom", "pusht"] for p in ("smoke", "laptop", "paper")},
    "arms": ["lewm", "scale"],
    "seeds": {"smoke": [0], "laptop": [0, 1], "paper": [0, 1]},
    "steps": {"smoke": [1, 2, 3], "laptop": [1, 3, 10], "paper": [1, 3, 10]},
    "resolution": {"tasks": ["pusht"], "image": 1.5},
    "budget_hours": {"smoke": 1.0, "laptop": 5.0, "paper": 100.0},
    "workers": 2,
    "model_seconds": {"tworoom": 100.0, "pusht": 200.0},
}


def spec(**changes) -> scaling.ScalingSpec:
    return scaling.scaling_from_dict({**RAW, **changes})


def test_the_study_file_loads_and_every_task_has_a_study():
    s = scaling.load_scaling()
    laptop = load_profile("laptop")
    assert s.arms[0] == "lewm" and set(s.resolution_tasks) <= set(s.tasks_at(laptop))
    assert s.tasks_at(laptop) == ("tworoom", "pusht", "cube")  # the three tasks
    assert [p.steps for p in s.points(laptop)][:3] == [1.0, 3.0, 10.0]
    assert max(s.steps["laptop"]) / min(s.steps["laptop"]) >= 10  # the 10x span
    for task in s.tasks_at(laptop):
        assert scaling.main_protocol(task)
    smoke = load_profile("smoke")  # fewer tasks, still a resolution point (Push-T's)
    assert set(s.tasks_at(smoke)) < set(s.tasks_at(laptop))
    assert s.point_tasks(s.points(smoke)[-1], smoke) == ("pusht",)


def test_points_multiply_steps_and_warmup_and_pixels_uncapped():
    smoke = load_profile("smoke")
    assert smoke.ladder.max_factor == 2.0  # a ladder would cap 3x at 2x; a point does not
    p = scaling.point_profile(spec(), "tworoom", Point(3.0), smoke)
    assert p.train.steps == 3 * smoke.train.steps
    assert p.train.warmup_steps == 3 * smoke.train.warmup_steps
    hi = scaling.point_profile(spec(), "pusht", Point(1.0, 1.5), smoke)
    assert hi.data.image_size == round(1.5 * smoke.data.image_size)
    assert hi.train.steps == smoke.train.steps
    assert scaling.point_profile(spec(), "tworoom", Point(1.0), smoke).seeds.train == (0,)


def test_the_priority_order_is_the_rules():
    s, smoke = spec(), load_profile("smoke")
    order = [(p.name, t, a) for p, t, a in scaling.priority(s, smoke)]
    two, res, three = "2x steps", "1x steps, 1.5x pixels", "3x steps"
    assert order == [
        (two, "tworoom", "lewm"), (two, "pusht", "lewm"),
        (two, "tworoom", "scale"), (two, "pusht", "scale"),
        (res, "pusht", "lewm"), (res, "pusht", "scale"),
        (three, "tworoom", "lewm"), (three, "pusht", "lewm"),
        (three, "tworoom", "scale"), (three, "pusht", "scale"),
    ]  # fmt: skip


def test_the_training_cost_is_seeds_times_steps_times_seconds_times_pixels_squared():
    s, laptop = spec(), load_profile("laptop")
    per_step = 0.1
    cost = scaling.unit_cost(s, "pusht", "scale", Point(1.0, 1.5), laptop, per_step)
    steps = scaling.study_profile(s, "pusht", laptop).train.steps
    assert cost["train"] == pytest.approx(2 * steps * per_step * 1.5**2)
    assert cost["collect"] == 0.0 and cost["gate"] == 0.0  # both go on the lewm unit
    lead = scaling.unit_cost(s, "pusht", "lewm", Point(1.0, 1.5), laptop, per_step)
    assert lead["collect"] > 0
    assert scaling.unit_cost(s, "pusht", "lewm", Point(3.0), laptop, per_step)["collect"] == 0


def test_the_stated_figure_gives_the_seconds_per_step_where_nothing_is_cached(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))
    laptop = load_profile("laptop")
    sec, source = scaling.seconds_per_step(spec(), "pusht", laptop)
    steps = scaling.study_profile(spec(), "pusht", laptop).train.steps
    assert sec == pytest.approx(200.0 / steps) and source.startswith("stated")
    smoke = load_profile("smoke")
    sec, source = scaling.seconds_per_step(spec(), "pusht", smoke)
    assert sec == pytest.approx(1 / smoke.cluster.train_steps_per_s)


def test_the_rule_keeps_units_in_order_while_they_fit_and_names_the_cuts():
    laptop = load_profile("laptop")
    per_step = {"tworoom": 0.08, "pusht": 0.17}
    s = spec()
    costs = {
        (p.name, t, a): sum(scaling.unit_cost(s, t, a, p, laptop, per_step[t]).values()) / 2
        for p, t, a in scaling.priority(s, laptop)
    }
    # a budget that holds exactly the units before the top point's scale arm on Push-T
    keep = list(costs)[:-1]
    hours = (sum(costs[k] for k in keep) + 1.0) / 3600
    units = scaling.choose_units(
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
    text = scaling.cost_statement(units, s, "laptop")
    assert "10x steps Push-T scale (over the budget)" in text
    assert f"{sum(costs[k] for k in keep) / 3600:.2f} h" in text


def test_an_arm_without_its_lewm_unit_is_cut_too():
    laptop = load_profile("laptop")
    per_step = {"tworoom": 0.08, "pusht": 0.17}
    s = spec()
    first = next(iter(scaling.priority(s, laptop)))
    small = sum(scaling.unit_cost(s, first[1], first[2], first[0], laptop, 0.08).values()) / 2
    units = scaling.choose_units(
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
    units = scaling.choose_units(s, laptop, rates)
    assert units.loc[units["status"] == "run", "seconds"].sum() <= 3600 * s.budget_hours["laptop"]


def test_the_first_build_keeps_its_choice_and_later_reads_use_it(data_root, monkeypatch):
    laptop, s = load_profile("laptop"), spec()
    stated = {"tworoom": 0.08, "pusht": 0.17}  # the stated figures, before any model is cached
    monkeypatch.setattr(scaling, "seconds_per_step", lambda _s, t, _b: (stated[t], "stated"))
    before = scaling.stated_units(s, laptop)  # a dry run: the rule now, nothing written
    assert list(data_root.rglob("manifest.json")) == []
    kept = scaling.stated_units(s, laptop, state=True)  # the first build states it
    pd.testing.assert_frame_equal(kept, before)
    # models cached later train 5x slower: run again, the rule would cut units it built
    monkeypatch.setattr(scaling, "seconds_per_step", lambda _s, t, _b: (5 * stated[t], "measured"))
    now = scaling.choose_units(s, laptop)
    assert (now["status"] == "cut").sum() > (kept["status"] == "cut").sum()
    for state in (False, True):  # a page and a resumed build read the kept table
        pd.testing.assert_frame_equal(scaling.stated_units(s, laptop, state=state), kept)
    # another study file states anew
    other = dataclasses.replace(s, budget_hours={**s.budget_hours, "laptop": 1.0})
    pd.testing.assert_frame_equal(
        scaling.stated_units(other, laptop), scaling.choose_units(other, laptop)
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tasks": {**RAW["tasks"], "laptop": ["tworoom", "maze"]}}, "scaling tasks for laptop"),
        ({"tasks": {"smoke": ["tworoom"]}}, "missing \\['laptop', 'paper'\\]"),
        ({"arms": ["scale", "lewm"]}, "must start with the baseline 'lewm'"),
        ({"arms": ["lewm", "nope"]}, "scaling arms"),
        ({"steps": {**RAW["steps"], "laptop": [1, 3]}}, "at least three increasing factors"),
        ({"steps": {**RAW["steps"], "laptop": [2, 3, 10]}}, "starting at 1"),
        ({"steps": {**RAW["steps"], "laptop": [1, 10, 3]}}, "increasing"),
        ({"steps": {"smoke": [1, 2, 3]}}, "missing \\['laptop', 'paper'\\]"),
        ({"seeds": {**RAW["seeds"], "laptop": [0, 0]}}, "distinct integers"),
        ({"budget_hours": {**RAW["budget_hours"], "laptop": 0}}, "must be > 0"),
        ({"resolution": {"tasks": ["cube"], "image": 1.5}}, "not among its tasks"),
        ({"resolution": {"tasks": ["pusht"], "image": 1.0}}, "a number > 1"),
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"model_seconds": {"tworoom": -1.0}}, "model_seconds"),
        ({"extra": 1}, "unknown fields \\['extra'\\]"),
    ],
)
def test_bad_input_stops_in_one_line(changes, message):
    with pytest.raises(ScalingError, match=message) as e:
        spec(**changes)
    assert "\n" not in str(e.value)


def test_the_weighted_line_is_numpys_weighted_fit():
    rng = np.random.default_rng(1)
    x, y, w = rng.normal(size=6), rng.normal(size=6), rng.uniform(0.5, 2.0, size=6)
    a, b = scaling.wls_line(x, y, w)
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))  # polyfit weights are 1 / sigma
    assert (a, b) == pytest.approx((intercept, slope))
    with pytest.raises(ScalingError, match="two distinct compute points"):
        scaling.wls_line(np.ones(3), y[:3], w[:3])


def test_a_known_slope_and_its_crossing_are_recovered():
    flops = np.array([1e12, 3e12, 1e13])
    effect = 0.01 + 0.05 * np.log10(flops / 1e12)
    half = 0.01
    t = scaling.trend(flops, effect, effect - half, effect + half, target=0.2)
    assert t["slope"] == pytest.approx(0.05)
    assert t["slope_low"] < 0.05 < t["slope_high"]
    cross = 1e12 * 10 ** ((0.2 - 0.01) / 0.05)  # log10 F* = 12 + 3.8
    assert t["cross"] == pytest.approx(cross, rel=1e-9)
    assert t["estimable"] and t["cross_low"] < cross < t["cross_high"] < math.inf
    assert scaling.reading(t, 1, 0.03, 1.0) == "grows"
    assert scaling.reading(t, -1, 0.03, 1.0) == "shrinks"
    assert "FLOPs [" in scaling.crossing_words(t) and not t["reached"]
    # the same line read for a claim of the opposite direction moves away: never
    away = scaling.trend(flops, effect, effect - half, effect + half, target=-0.03, direction=-1)
    assert math.isnan(away["cross"]) and not away["estimable"]
    # a target the line has passed already is reached, at the largest budget
    passed = scaling.trend(flops, effect, effect - half, effect + half, target=0.03)
    assert passed["reached"] and passed["cross"] == pytest.approx(1e13)
    assert scaling.crossing_words(passed) == "reached within the studied budgets"
    with pytest.raises(ScalingError, match="direction must be"):
        scaling.trend(flops, effect, effect - half, effect + half, 0.2, direction=0)


def test_a_flat_or_noisy_effect_has_no_crossing():
    flops = [1e12, 3e12, 1e13]
    flat = scaling.trend(flops, [0.0, 0.0, 0.0], [-0.001] * 3, [0.001] * 3, target=0.03)
    assert not flat["estimable"] and scaling.crossing_words(flat) == "not estimable"
    assert scaling.reading(flat, 1, 0.03, 1.0) == "stays"
    noisy = scaling.trend(flops, [0.0, 0.05, -0.02], [-0.2, -0.15, -0.22], [0.2, 0.25, 0.18], 0.03)
    assert scaling.reading(noisy, 1, 0.03, 1.0) == "unclear" and not noisy["estimable"]
    again = scaling.trend(flops, [0.0, 0.05, -0.02], [-0.2, -0.15, -0.22], [0.2, 0.25, 0.18], 0.03)
    assert again == noisy  # seeded: the same inputs give the same reading


def test_the_trend_table_fits_step_points_only():
    import pandas as pd

    rows = []
    for image, flops, eff in (
        (1.0, 1e12, 0.0),
        (1.0, 1e13, 0.05),
        (1.0, 1e14, 0.1),
        (1.5, 2e12, 0.5),
    ):
        rows.append({"task": "pusht", "paper": "SCALE", "claim": "c", "image": image,
                     "flops": flops, "effect": eff, "low": eff - 0.01, "high": eff + 0.01,
                     "direction": 1, "threshold": 0.0, "min_effect": 0.03})  # fmt: skip
    unbounded = {**rows[0], "claim": "d", "low": -np.inf, "high": np.inf}
    rows += [unbounded, {**unbounded, "flops": 1e13}]
    # both arms at 0 of n: a degenerate interval, inconclusive, not a very precise point
    degenerate = {**rows[0], "claim": "e", "effect": 0.0, "low": 0.0, "high": 0.0}
    rows += [degenerate, {**rows[1], "claim": "e"}, {**rows[2], "claim": "e"}]
    table = scaling.trend_table(pd.DataFrame(rows)).set_index("claim")
    assert table.loc["d", "reading"] == "unclear" and table.loc["d", "points"] == 0
    assert table.loc["d", "crossing"] == "not estimable"
    assert table.loc["e", "points"] == 2  # the degenerate point is left out
    assert table.loc["e", "slope per decade"] == pytest.approx(0.05)
    table = table.loc[["c"]]
    assert table["points"].iloc[0] == 3
    assert table["slope per decade"].iloc[0] == pytest.approx(0.05)
    assert table["reading"].iloc[0] == "grows"


def test_the_page_draws_the_most_measured_claims_and_tabulates_every_point():
    import pandas as pd

    rows = [
        {"task": t, "paper": "SCALE", "claim": c, "point": p, "image": im, "flops": f,
         "effect": 0.1, "low": 0.0, "high": 0.2, "paper_effect": 0.05 if c == "a" else np.nan}
        for c, tasks in (("a", ["pusht"]), ("b", ["pusht", "cube"]))
        for t in tasks
        for p, im, f in (("1x steps", 1.0, 1e12), ("3x steps", 1.0, 3e12), ("hi", 1.5, 2e12))
    ]  # fmt: skip
    effects = pd.DataFrame(rows)
    assert scaling_tables.headline_claims(effects, 1) == ["b"]
    assert scaling_tables.headline_claims(effects) == ["b", "a"]
    with pytest.raises(ValueError, match="n must be >= 1"):
        scaling_tables.headline_claims(effects, 0)
    shown = scaling_tables.effects_display(effects)
    assert list(shown.columns[3:]) == ["1x steps", "3x steps", "hi", "paper's effect"]
    assert len(shown) == 3 and set(shown["task"]) == {"Push-T", "Cube"}
    assert (shown["1x steps"] == "+0.100 [+0.000, +0.200]").all()


def test_the_page_builds_nothing_at_laptop_and_says_what_to_run(tmp_path, monkeypatch):
    from jepa_geometry.artifacts import NotCached

    monkeypatch.setenv("JEPA_GEOMETRY_DATA", str(tmp_path))
    with pytest.raises(NotCached, match="`jepa-geometry scaling --profile laptop`") as e:
        scaling.scaling_results(scaling.load_scaling(), load_profile("laptop"))
    assert "\n" not in str(e.value)
    assert not (tmp_path / "checkpoints").exists() and not (tmp_path / "datasets").exists()


def test_success_by_point_is_the_tier_mean_beside_the_task_s_ceiling():
    smoke = load_profile("smoke")
    protocol = scaling.main_protocol("tworoom")
    rng = np.random.default_rng(4)

    def frame(arm, seeds, pairs):
        return pd.DataFrame(
            [
                (arm, s, "cem", b, e, bool(rng.random() < 0.5), protocol)
                for s in seeds
                for b in ("T1", "T2")
                for e in pairs
            ],
            columns=["arm", "train_seed", "solver", "budget", "episode", "success", "protocol"],
        )

    eps = pd.concat([frame("lewm", (0, 1), range(6)), frame("scale", (0, 1), range(6))])
    geo = Geometry(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame())
    result = scaling.PointResult(
        Point(2.0), "tworoom", smoke, ("lewm", "scale"), True, "", eps, geo, pd.DataFrame(), 10
    )
    top = frame("ceiling", (-1,), (1, 3, 4))
    out = scaling.success_by_point([result], {"tworoom": top}).set_index("arm")
    for arm in ("lewm", "scale"):
        direct = eps[eps.arm == arm].success.mean()  # equal tiers per (seed, pair)
        assert out.loc[arm, "rate"] == pytest.approx(direct)
        assert out.loc[arm, "low"] <= direct <= out.loc[arm, "high"]
        assert (out.loc[arm, "seeds"], out.loc[arm, "pairs"]) == (2, 6)
    assert out.loc["ceiling", "rate"] == pytest.approx(top.success.mean())
    assert (out.loc["ceiling", "pairs"], out.loc["ceiling", "point"]) == (3, "any")
    shown = scaling_tables.success_display(out.reset_index())
    assert list(shown.columns) == [
        "task", "point", "steps", "lewm (%)", "scale (%)", "ceiling, 3 pairs (%)"
    ]  # fmt: skip
    assert shown.loc[0, "steps"] == smoke.train.steps
