"""The five tasks: q definitions, state restoration, success tests, bad input.

Each task's environment is built once per module (Cube takes seconds); checks compare
against independent computations from the raw state (closed forms), not the code's output.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

from jepa_geometry.envs import TASKS, make_task, q_indices, q_names, shared_task, task_title

Q_DIMS = {"tworoom": 2, "pusht": 6, "reacher": 4, "cube": 9, "pointmaze": 2}
ACTION_DIMS = {"tworoom": 2, "pusht": 2, "reacher": 2, "cube": 5, "pointmaze": 2}
SIZE = 32


@pytest.fixture(scope="module")
def tasks():
    built = {name: make_task(name, SIZE, seed=0) for name in TASKS}
    yield built
    for t in built.values():
        t.close()


def _run(task, seed: int, steps: int) -> list[np.ndarray]:
    task.reset(seed)
    rng = np.random.default_rng(seed)
    states = [task.get_state()]
    for _ in range(steps):
        task.step(task.behaviour_action(rng))
        states.append(task.get_state())
    return states


def test_unknown_task_lists_the_five():
    with pytest.raises(ValueError, match=r"'nosuch'.*tworoom, pusht, reacher, cube, pointmaze"):
        make_task("nosuch", SIZE)
    with pytest.raises(ValueError, match="valid: full, half"):
        q_indices("pusht", "quarter")
    with pytest.raises(ValueError, match="no half-q variant"):
        q_indices("tworoom", "half")


@pytest.mark.parametrize("name", TASKS)
def test_interface_shapes_and_render(tasks, name):
    t = tasks[name]
    assert (t.q_dim, t.action_dim) == (Q_DIMS[name], ACTION_DIMS[name])
    assert q_names(name) == t.q_names and len(t.q_names) == Q_DIMS[name]
    t.reset(1)
    t.step(np.zeros(t.action_dim, dtype=np.float32))
    img = t.render()
    assert img.shape == (SIZE, SIZE, 3) and img.dtype == np.uint8 and img.std() > 1.0
    assert t.q(t.get_state()).shape == (Q_DIMS[name],)
    with pytest.raises(ValueError, match="action must have shape"):
        t.step(np.zeros(t.action_dim + 1))
    with pytest.raises(ValueError, match="state must have shape"):
        t.set_state(np.zeros(3))


@pytest.mark.parametrize("name", TASKS)
def test_restoring_a_state_reproduces_q_frame_and_future(tasks, name):
    """set_state(s) reproduces the recorded q and frame; the same actions from a restored
    state give the same future whatever the task did before; and, except for Push-T, the
    same future as the original run (Push-T to within a unit of its 512-unit frame)."""
    t = tasks[name]
    recorded = _run(t, seed=3, steps=12)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(t.action_low, t.action_high).astype(np.float32) for _ in range(6)]
    t.reset(3)
    t.set_state(recorded[0])
    original = []
    for a in actions:
        t.step(a)
        original.append(t.q(t.get_state()))

    def replay(other_seed: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        _run(t, seed=other_seed, steps=5)  # somewhere else entirely
        t.set_state(recorded[6])
        q, frame = t.q(t.get_state()), t.render()
        t.set_state(recorded[0])
        out = []
        for a in actions:
            t.step(a)
            out.append(t.q(t.get_state()))
        return q, frame, out

    q1, f1, fut1 = replay(7)
    q2, f2, fut2 = replay(8)
    np.testing.assert_allclose(q1, t.q(recorded[6]), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(f1, f2)
    np.testing.assert_array_equal(np.array(fut1), np.array(fut2))
    # Push-T: pymunk warm-starts contacts from the previous step, which no state holds.
    atol = 1.0 if name == "pusht" else 1e-4
    np.testing.assert_allclose(np.array(fut1), np.array(original), rtol=0, atol=atol)


@pytest.mark.parametrize("name", TASKS)
def test_a_reset_simulator_runs_as_a_new_one(tasks, name):
    """What lets a process reuse one simulator for every planning cell (envs.shared_task):
    after reset(seed), set_state and, where the environment draws a target, set_goal_state,
    a simulator that has run before renders and steps bit for bit as a newly built one."""
    used = tasks[name]
    recorded = _run(used, seed=3, steps=12)
    rng = np.random.default_rng(1)
    actions = [rng.uniform(used.action_low, used.action_high).astype(np.float32) for _ in range(8)]

    def episode(t) -> tuple[np.ndarray, np.ndarray]:
        t.reset(1000)
        t.set_state(recorded[4])
        if hasattr(t, "set_goal_state"):
            t.set_goal_state(recorded[12])
        frames, states = [t.render()], []
        for a in actions:
            t.step(a)
            states.append(t.get_state())
            frames.append(t.render())
        return np.array(frames), np.array(states)

    new = make_task(name, SIZE, seed=0)
    try:
        frames_new, states_new = episode(new)
    finally:
        new.close()
    _run(used, seed=8, steps=5)  # somewhere else entirely
    frames_used, states_used = episode(used)
    np.testing.assert_array_equal(states_used, states_new)
    np.testing.assert_array_equal(frames_used, frames_new)


@pytest.mark.parametrize("closed", ["cube", "pointmaze"])
def test_closing_one_renderer_leaves_another_s_frames_alone(tasks, closed):
    """Several simulators render in one process (a page draws every task): closing one, or
    letting it be collected, while another's GL context is current must not free the
    other's framebuffer (its later frames were uninitialised memory)."""
    kept = tasks["reacher"]
    kept.reset(1)
    before = kept.render()
    other = make_task(closed, SIZE, seed=0)
    other.reset(1)
    other.render()
    kept.render()  # the kept renderer's context is now the current one
    other.close()
    np.testing.assert_array_equal(kept.render(), before)
    other = make_task(closed, SIZE, seed=0)
    other.reset(1)
    other.render()
    kept.render()
    del other  # collected without close()
    gc.collect()
    np.testing.assert_array_equal(kept.render(), before)


def test_shared_task_is_one_simulator_per_process() -> None:
    a = shared_task("tworoom", SIZE, seed=5)
    assert shared_task("tworoom", SIZE, seed=5) is a
    assert shared_task("tworoom", SIZE, seed=6) is not a
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        shared_task("nope", SIZE)


@pytest.mark.parametrize("name", TASKS)
def test_behaviour_is_deterministic_per_seed(tasks, name):
    a = _run(tasks[name], seed=11, steps=15)
    b = _run(tasks[name], seed=11, steps=15)
    c = _run(tasks[name], seed=12, steps=15)
    np.testing.assert_array_equal(np.array(a), np.array(b))
    assert not np.array_equal(np.array(a), np.array(c))


def test_q_equals_its_closed_form_per_task(tasks):
    """q from the raw state, recomputed independently of the task code."""
    s = np.array([100.0, 200.0, 300.0, 250.0, 2.0, 5.0, -3.0])
    np.testing.assert_allclose(
        tasks["pusht"].q(s), [100, 200, 300, 250, np.cos(2.0), np.sin(2.0)], rtol=1e-6
    )
    s = np.array([7.5, -1.0, 0.3, 0.2])
    np.testing.assert_allclose(
        tasks["reacher"].q(s), [np.cos(7.5), np.sin(7.5), np.cos(-1.0), np.sin(-1.0)], atol=1e-6
    )
    np.testing.assert_allclose(tasks["tworoom"].q(np.array([40.0, 60.0])), [40, 60])
    np.testing.assert_allclose(tasks["pointmaze"].q(np.array([1.5, 2.5, 9.0, 9.0])), [1.5, 2.5])
    assert q_indices("pusht", "half") == (2, 3, 4, 5)
    assert q_indices("reacher", "half") == (0, 1)
    assert q_indices("cube", "half") == (0, 1, 2, 3, 4)


def test_cube_q_matches_the_simulator(tasks):
    """Cube q against OGBench's own observation of the live scene."""
    t = tasks["cube"]
    _run(t, seed=2, steps=10)
    import mujoco

    mujoco.mj_forward(t.model, t.data)  # kinematics of the current qpos
    info = t.env.compute_ob_info()
    q = t.q(t.get_state())
    yaw = info["proprio/effector_yaw"][0]
    np.testing.assert_allclose(q[:3], info["proprio/effector_pos"], atol=1e-6)
    np.testing.assert_allclose(q[3:5], [np.cos(2 * yaw), np.sin(2 * yaw)], atol=1e-5)
    np.testing.assert_allclose(q[6:], info["privileged/block_0_pos"], atol=1e-6)
    assert 0.0 <= q[5] <= 1.0
    # pi-symmetry of the gripper: yaw and yaw + pi give the same q entries
    np.testing.assert_allclose(
        [np.cos(2 * (yaw + np.pi)), np.sin(2 * (yaw + np.pi))], q[3:5], atol=1e-5
    )


def test_success_is_decided_by_the_papers_thresholds(tasks):
    """The papers' thresholds, checked just inside and just outside."""
    tr = tasks["tworoom"]
    assert tr.is_success(np.array([50.0, 50.0]), np.array([50.0, 65.9]))
    assert not tr.is_success(np.array([50.0, 50.0]), np.array([50.0, 66.1]))
    pt = tasks["pusht"]
    g = np.array([256.0, 256.0, 300.0, 300.0, 0.1, 0.0, 0.0])
    near = g + np.array([10.0, 0, 10.0, 0, 0, 0, 0])  # position error 14.1
    assert pt.is_success(near, g)
    assert not pt.is_success(g + np.array([15.0, 0, 15.0, 0, 0, 0, 0]), g)  # 21.2
    assert not pt.is_success(g + np.array([0, 0, 0, 0, np.pi / 9 + 0.01, 0, 0]), g)
    wrapped = g.copy()
    wrapped[4] = 0.1 + 2 * np.pi - 0.05  # angle error wraps to 0.05
    assert pt.is_success(wrapped, g)
    re = tasks["reacher"]
    assert re.is_success(np.array([0.0, 1.0, 5, 5]), np.array([0.049, 0.951, 0, 0]))
    assert not re.is_success(np.array([0.0, 1.0, 0, 0]), np.array([0.051, 1.0, 0, 0]))
    pm = tasks["pointmaze"]
    assert pm.is_success(np.array([0.0, 0, 0, 0]), np.array([0.6, 0.79, 0, 0]))
    assert not pm.is_success(np.array([0.0, 0, 0, 0]), np.array([0.6, 0.81, 0, 0]))
    cu = tasks["cube"]
    s = cu.get_state()
    g = s.copy()
    adr = 1 + cu.model.jnt_qposadr[cu.model.joint("object_joint_0").id]
    g[adr] += 0.039
    assert cu.is_success(s, g) and abs(cu.goal_distance(s, g) - 0.039) < 1e-9
    g[adr] += 0.002
    assert not cu.is_success(s, g)


def test_behaviour_policies_reach_their_goals(tasks):
    """The experts are experts: Two-Room reaches targets within 200 steps, Push-T's scripted
    expert brings the block to its goal pose; each sets its success flag."""
    for name, steps in (("tworoom", 200), ("pusht", 300)):
        t = tasks[name]
        t.reset(0)
        rng = np.random.default_rng(0)
        reached = False
        for _ in range(steps):
            t.step(t.behaviour_action(rng))
            reached |= t.behaviour_success()
        assert reached, name


def test_render_without_opengl_says_set_mujoco_gl():
    """A MuJoCo task in a process with no usable GL backend fails with a clear message."""
    code = "from jepa_geometry.envs import make_task\nt = make_task('reacher', 16)\nt.render()\n"
    env = {**os.environ, "MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    if out.returncode == 0:
        pytest.skip("OSMesa is installed here, so there is no failing backend to test")
    assert "MUJOCO_GL=egl" in out.stderr, out.stderr[-2000:]


def test_task_table_lists_each_tasks_definitions():
    """Against the q definitions in the module docstring, written out by hand."""
    from jepa_geometry.book.tables.models import task_table

    table = task_table().rename(index={task_title(t): t for t in TASKS})  # shown by title
    assert list(table.index) == list(TASKS)
    assert table.loc["pusht", "half q"] == "block_x, block_y, cos_theta, sin_theta"
    assert table.loc["reacher", "half q"] == "cos_q0, sin_q0"
    assert table.loc["cube", "half q"] == "eff_x, eff_y, eff_z, cos_2psi, sin_2psi"
    assert table.loc["tworoom", "half q"] == table.loc["pointmaze", "half q"] == "-"
    assert table.loc["tworoom", "q"] == "agent_x, agent_y"
    for name in TASKS:
        assert len(table.loc[name, "q"].split(", ")) == Q_DIMS[name]
        assert table.loc[name, "action dim"] == ACTION_DIMS[name]
    assert table.loc["reacher", "environment"] == "swm/ReacherDMControl-v0"
    assert list(task_table(["cube"]).index) == ["Cube"]


SWM_PROBE = """
import sys
from jepa_geometry.envs import make_task
from jepa_geometry.planning.solver import Planner  # swm's solvers and PlanConfig
task = make_task("tworoom", 32)
task.reset(0)
task.render()
task.close()
light = "lancedb" not in sys.modules and "stable_worldmodel.data" not in sys.modules
import stable_worldmodel
from stable_worldmodel import World
print(light, "lancedb" in sys.modules, World is stable_worldmodel.World, World.__module__)
"""


def test_swm_loads_without_its_dataset_formats_and_completes_when_asked() -> None:
    """envs.base.import_swm: building a task and planning import no lancedb (nor swm's data
    package), and the first other name read from swm runs its whole ``__init__``."""
    out = subprocess.run(
        [sys.executable, "-c", SWM_PROBE], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split() == ["True", "True", "True", "stable_worldmodel.world.world"]


GL_THEN_COMPILER = """
from jepa_geometry.envs import make_task
task = make_task("cube", 32)
task.reset(0)
task.render()  # MuJoCo's software OpenGL: Mesa and its LLVM are loaded now
task.close()
import torch._dynamo  # Triton's LLVM (torch.optim and torchvision import it)
print("alive")
"""


def test_torch_compiler_imports_after_an_opengl_frame() -> None:
    """import_swm loads Triton before any environment: loaded after Mesa's LLVM, it crashes
    the process (a segfault, as a page that rendered Cube and then trained a model did)."""
    out = subprocess.run(
        [sys.executable, "-c", GL_THEN_COMPILER], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and out.stdout.strip() == "alive", out.stderr[-500:]


def test_a_process_that_rendered_mujoco_tasks_exits_without_gl_errors():
    """The renderers' GL contexts are freed before MuJoCo terminates EGL at exit (else every
    job and kernel that planned ends with two ``Exception ignored`` tracebacks on stderr)."""
    code = (
        "from jepa_geometry.envs import shared_task\n"
        "for name in ('cube', 'reacher'):\n"
        "    t = shared_task(name, 32); t.reset(0); t.render()\n"
    )
    env = {**os.environ, "MUJOCO_GL": "egl"}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Exception ignored" not in res.stderr, res.stderr[-2000:]
