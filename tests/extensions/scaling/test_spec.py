"""The scaling study as written (extensions.scaling.spec): its file, its points and their
profiles."""

from __future__ import annotations

import pytest

from jepa_geometry.extensions import scaling
from jepa_geometry.extensions.scaling.spec import Point, ScalingError
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
