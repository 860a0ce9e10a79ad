"""Every fact the library knows of a task lives on its Task (envs.base.TASK_FACTS)."""

from __future__ import annotations

import numpy as np
import pytest

from jepa_geometry.envs import TASKS, task_class
from jepa_geometry.envs.base import TASK_FACTS, Task
from jepa_geometry.profiles import PROFILES


@pytest.mark.parametrize("name", TASKS)
def test_every_task_states_every_fact_in_its_own_units(name: str) -> None:
    cls = task_class(name)
    assert all(hasattr(cls, fact) for fact in TASK_FACTS)
    assert cls.name == name
    assert cls.scale_weight > 0 and cls.aux_weight > 0 and cls.mppi_t_star > 0
    assert cls.hard_threshold > 0 and cls.hard_rule and cls.landscape_spans
    assert set(cls.episodes) <= set(PROFILES) and set(cls.collect_frames_per_s) == set(PROFILES)
    assert cls.ceiling_rollout_ms > 0
    assert cls.landscape_period is None or len(cls.landscape_period) == 2


def _a_task(**facts: object) -> type[Task]:
    """A concrete task class with every abstract method and the given class attributes."""

    def method(*args: object) -> None:
        return None

    body = {m: method for m in Task.__abstractmethods__}
    return type("Toy", (Task,), {**body, **facts})


def test_a_task_that_lacks_a_fact_fails_where_it_is_defined() -> None:
    cls = task_class("tworoom")
    facts = {f: getattr(cls, f) for f in TASK_FACTS}
    assert issubclass(_a_task(**facts), Task)  # every fact stated: defined
    for missing in ("scale_weight", "mppi_t_star", "hard_threshold", "episodes"):
        rest = {f: v for f, v in facts.items() if f != missing}
        with pytest.raises(TypeError, match=rf"task Toy does not state {missing} \(every Task"):
            _a_task(**rest)


def test_an_abstract_task_need_not_state_facts_yet() -> None:
    """An intermediate base class (abstract methods left) is not checked; its subclasses are."""

    class Half(Task):
        name = "half"

    assert Half.__abstractmethods__


def test_the_default_landscape_state_is_the_position_at_rest() -> None:
    cls = task_class("reacher")  # Reacher keeps the defaults: qpos = (x, y), qvel = 0
    state = cls.landscape_state(None, 0.5, -1.0, np.ones(4))
    np.testing.assert_array_equal(state, [0.5, -1.0, 0.0, 0.0])
    np.testing.assert_array_equal(cls.landscape_coords(None, state), [0.5, -1.0])
