"""Cost landscapes around a goal (jepa_geometry.analysis.landscape) on Two-Room's grid."""

from __future__ import annotations

import numpy as np
import pytest

from jepa_geometry.analysis import landscape as ls
from jepa_geometry.book.plots import plot_landscapes
from jepa_geometry.envs import make_task, task_class
from jepa_geometry.envs.pusht import LANDSCAPE_ANGLE, LANDSCAPE_PARK

N = 32
# Two-Room geometry of swm's TwoRoomEnv defaults (224-px frame): border 14, agent radius 7,
# vertical wall at x = 112 of thickness 10 (half 5), one door centred at y = 49, half-extent 14,
# collision margin 1.75.
WALL_X, WALL_BAND, DOOR_Y, DOOR_HALF = 112.0, 5 + 7, 49.0, 14 + 1.75


@pytest.fixture(scope="module")
def task():
    return make_task("tworoom", image_size=32)


@pytest.fixture(scope="module")
def grid(task):
    return ls.landscape_positions(task, N, progress=False)


def test_grid_spans_interior_and_drops_wall_cells(task, grid) -> None:
    np.testing.assert_allclose(grid.xs[[0, -1]], [14 + 7, 224 - 14 - 7])
    xx, yy = np.meshgrid(grid.xs, grid.ys)  # [row (y), column (x)]
    in_wall = (np.abs(xx - WALL_X) <= WALL_BAND) & (np.abs(yy - DOOR_Y) > DOOR_HALF)
    np.testing.assert_array_equal(grid.mask, ~in_wall)
    assert in_wall.sum() > 0 and (grid.mask[:, 14] & (np.abs(grid.ys - DOOR_Y) <= DOOR_HALF)).any()
    assert not ls._holds(task, np.array([112.0, 150.0]))  # inside the wall
    assert ls._holds(task, np.array([112.0, 49.0]))  # in the door
    assert ls._holds(task, np.array([60.0, 112.0]))  # the env's default start
    assert len(grid.positions) == len(grid.frames) == grid.mask.sum()
    # each frame shows the agent where the grid says: red-dot centroid in 224-px units
    for m in (0, 300, len(grid.positions) - 1):
        f = grid.frames[m].astype(float)
        w = np.clip(f[..., 0] - f[..., 1], 0, None)
        ys, xs = np.mgrid[: w.shape[0], : w.shape[1]]
        centroid = np.array([(w * xs).sum(), (w * ys).sum()]) / w.sum()
        # a 32-px pixel j averages 224-px pixels 7j .. 7j + 6 (mean index 7j + 3)
        np.testing.assert_allclose(centroid * 7 + 3, grid.positions[m], atol=2.0)


def test_isotropic_embedding_gives_the_disc(grid) -> None:
    rng = np.random.default_rng(0)
    z = grid.positions @ np.array([[0.0, 2.0], [-2.0, 0.0]]) + 7.0  # rotation x scale + shift
    for g in rng.choice(len(grid.positions), 10, replace=False):
        r = ls.cost_landscape(z, grid.positions, int(g))
        assert r["iou"] == 1.0
        assert r["spearman"] == pytest.approx(1.0, abs=1e-5)  # cells tied up to rounding
        np.testing.assert_array_equal(r["low_set"], r["disc"])
    df = ls.landscape_distribution(z, grid.positions, n_goals=20, seed=3)
    assert len(df) == 20 and df.goal_index.is_unique and (df.iou == 1.0).all()
    again = ls.landscape_distribution(z, grid.positions, n_goals=20, seed=3)
    assert df.equals(again)


def test_anisotropic_embedding_matches_ellipse_disc_overlap_on_the_grid(grid) -> None:
    a, q = 3.0, 0.1
    z = grid.positions * np.array([a, 1.0])
    for g in (100, 457, 800):
        r = ls.cost_landscape(z, grid.positions, g, quantile=q)
        # direct: cells of the (x, y) grid inside the ellipse / disc around the goal cell
        xx, yy = np.meshgrid(grid.xs, grid.ys)
        gx, gy = grid.positions[g]
        ell = (a * (xx - gx)) ** 2 + (yy - gy) ** 2
        dist = np.hypot(xx - gx, yy - gy)
        # thresholds: the q-quantiles over the valid cells, with slack for rounding
        in_ell = grid.mask & (ell <= np.percentile(ell[grid.mask], 100 * q) * (1 + 1e-7))
        in_disc = grid.mask & (dist <= np.percentile(dist[grid.mask], 100 * q) * (1 + 1e-7))
        iou = (in_ell & in_disc).sum() / (in_ell | in_disc).sum()
        assert r["iou"] == pytest.approx(iou) and r["iou"] < 0.9


def test_iou_of_ellipse_and_disc_matches_the_continuum() -> None:
    # fine square grid, goal at the centre; disc of area q * 4 vs the ellipse a x^2 + y^2 / a
    # <= R^2 of the same area (semi-axes R / sqrt(a), R sqrt(a))
    a, q, n = 4.0, 0.1, 301
    t = np.linspace(-1, 1, n)
    pos = np.stack(np.meshgrid(t, t), -1).reshape(-1, 2)
    z = pos * np.array([np.sqrt(a), 1 / np.sqrt(a)])
    r = ls.cost_landscape(z, pos, goal_index=len(pos) // 2, quantile=q)
    radius = np.sqrt(4 * q / np.pi)
    theta = np.linspace(0, 2 * np.pi, 200_001)
    r_ell = radius / np.sqrt(a * np.cos(theta) ** 2 + np.sin(theta) ** 2 / a)
    inter = 0.5 * np.trapezoid(np.minimum(radius, r_ell) ** 2, theta)
    iou = inter / (2 * np.pi * radius**2 - inter)
    assert r["iou"] == pytest.approx(iou, abs=0.01)
    assert r["disc_radius"] == pytest.approx(radius, abs=0.01)


def test_plot_draws_one_panel_per_goal(grid) -> None:
    import matplotlib.pyplot as plt

    panels = [ls.cost_landscape(grid.positions, grid.positions, g) for g in (0, 50)]
    fig = plot_landscapes(grid, panels)
    assert len(fig.axes) == 2 and "IoU 1.00" in fig.axes[0].get_title()
    plt.close(fig)


def test_periodic_axis_wraps_the_distance() -> None:
    """Reacher's shoulder: -pi + 0.1 and pi - 0.1 are 0.2 rad apart, not 2 pi - 0.2."""
    x = np.array([[-np.pi + 0.1, 0.0], [np.pi - 0.1, 0.0], [0.0, 0.0], [0.0, 0.3]])
    z = np.arange(8.0).reshape(4, 2)
    r = ls.cost_landscape(z, x, 0, period=task_class("reacher").landscape_period)
    np.testing.assert_allclose(r["distance"], [0.0, 0.2, np.pi - 0.1, np.hypot(np.pi - 0.1, 0.3)])
    flat = ls.cost_landscape(z, x, 0)
    assert flat["distance"][1] == pytest.approx(2 * np.pi - 0.2)
    assert task_class("tworoom").landscape_period is None


@pytest.mark.parametrize("name", ["reacher", "pointmaze"])
def test_new_task_grids_keep_only_states_the_simulator_holds(name) -> None:
    env = make_task(name, image_size=32)
    try:
        g = ls.landscape_positions(env, 8, progress=False)
        assert len(g.positions) == len(g.frames) == g.mask.sum() > 0
        for m in (0, len(g.positions) - 1):  # a kept cell holds; the frame is that state's
            state = np.array([*g.positions[m], 0.0, 0.0])
            assert ls._holds(env, state)
            env.set_state(state)
            np.testing.assert_array_equal(env.render(), g.frames[m])
    finally:
        env.close()
    if name == "reacher":  # every shoulder angle, the elbow within its range: all held
        assert g.mask.all() and g.xs[0] == pytest.approx(-np.pi) and g.xs[-1] < np.pi
    else:  # the maze's walls drop cells
        assert 0 < g.mask.sum() < g.mask.size


@pytest.mark.parametrize("name", ["pusht", "cube"])
def test_manipulation_grids_move_the_object_and_nothing_else(name) -> None:
    """Push-T's block and Cube's cube sit at the grid's coordinates (read back from the
    simulator after the hold test's step); the rest of the scene is the same in every cell."""
    env = make_task(name, image_size=32)
    try:
        g = ls.landscape_positions(env, 4, progress=False)
        env.reset(seed=0)
        template = env.get_state()
        assert g.mask.all()  # nothing in the window collides at these sizes
        states = [env.landscape_state(x, y, template) for y in g.ys for x in g.xs]
        for m in (0, 5, len(states) - 1):
            env.set_state(states[m])
            np.testing.assert_allclose(env.landscape_coords(env.get_state()), g.positions[m])
            np.testing.assert_array_equal(env.render(), g.frames[m])
        rest = np.delete(np.asarray(states), [2, 3] if name == "pusht" else [], axis=1)
        if name == "pusht":
            np.testing.assert_array_equal(rest, rest[:1].repeat(len(rest), 0))
            assert states[0][4] == pytest.approx(np.pi / 4)
        else:  # only the cube's two qpos entries differ between cells
            diff = np.flatnonzero((np.asarray(states) != states[0]).any(0))
            adr = 1 + env.model.jnt_qposadr[env.model.joint("object_joint_0").id]
            assert set(diff) == {adr, adr + 1}
        assert len({f.tobytes() for f in g.frames}) == len(g.frames)  # the object is visible
    finally:
        env.close()
    assert task_class(name).landscape_spans and task_class(name).landscape_period is None


def test_a_block_on_the_pusher_is_not_held() -> None:
    env = make_task("pusht", image_size=32)
    try:
        on_pusher = np.array([*LANDSCAPE_PARK, *LANDSCAPE_PARK, LANDSCAPE_ANGLE, 0.0, 0.0])
        assert not ls._holds(env, on_pusher)
        assert ls._holds(env, np.array([*LANDSCAPE_PARK, 256.0, 256.0, LANDSCAPE_ANGLE, 0, 0]))
    finally:
        env.close()
