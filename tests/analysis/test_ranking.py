"""Rank agreement of imagined and real costs (jepa_geometry.analysis.ranking), smoke data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from scipy.stats import kendalltau

from jepa_geometry.analysis import ranking as rk
from jepa_geometry.envs import make_task
from jepa_geometry.envs.dataset import load_dataset
from jepa_geometry.planning import protocol as ev
from jepa_geometry.profiles import load_profile

N_STARTS, K = 3, 8


@pytest.fixture(scope="module")
def setup():
    smoke = load_profile("smoke")
    data = load_dataset("tworoom", smoke)
    task = make_task("tworoom", image_size=data.pixels.shape[1])
    episodes = ev.draw_episode_set(task, data, ev.make_protocol(smoke), N_STARTS, seed=1000)
    outcomes = rk.simulate_candidates(task, data, episodes, N_STARTS, K, progress=False)
    return task, data, episodes, outcomes


class AgentXY(torch.nn.Module):
    """Encoder stand-in: the agent's pixel position, the centroid of the red dot's redness
    (R − G of the white-background frame), in pixels. A perfect predictor stand-in: rollout
    returns the encoded true terminal frame of the candidate, looked up by its action blocks."""

    def __init__(self, outcomes: rk.Outcomes, frameskip_a: int) -> None:
        super().__init__()
        self.action_block_dim = frameskip_a
        self.table: dict[bytes, torch.Tensor] = {}
        z_start = self.encode(torch.as_tensor(outcomes.start_frames).permute(0, 3, 1, 2))
        for i in range(outcomes.n_starts):
            frames = torch.as_tensor(outcomes.terminal_frames[i]).permute(0, 3, 1, 2)
            for blk, z in zip(outcomes.blocks[i], self.encode(frames), strict=True):
                self.table[self._key(z_start[i], torch.as_tensor(blk))] = z

    @staticmethod
    def _key(z0: torch.Tensor, blk: torch.Tensor) -> bytes:
        return z0.numpy().tobytes() + blk.float().numpy().tobytes()

    def encode(self, pixels: torch.Tensor) -> torch.Tensor:
        x = pixels.float()
        w = (x[:, 0] - x[:, 1]).clamp(min=0)  # (N, H, W)
        h, wd = w.shape[-2:]
        ys, xs = torch.meshgrid(torch.arange(h).float(), torch.arange(wd).float(), indexing="ij")
        m = w.sum((-2, -1))
        return torch.stack([(w * xs).sum((-2, -1)) / m, (w * ys).sum((-2, -1)) / m], dim=-1)

    def rollout(self, z_context: torch.Tensor, action_blocks: torch.Tensor) -> torch.Tensor:
        out = [
            self.table[self._key(z0, blk)]
            for z0, blk in zip(z_context[:, 0], action_blocks, strict=True)
        ]
        z = torch.stack(out)
        return z[:, None].expand(-1, action_blocks.shape[1], -1)


def test_agreement_is_half_one_plus_kendall_without_ties() -> None:
    rng = np.random.default_rng(0)
    for n in (5, 17, 64):
        j, c = rng.normal(size=n), rng.normal(size=n) + 0.5 * rng.normal(size=n)
        tau = kendalltau(j, c).statistic
        assert rk.ordering_agreement(j, c) == pytest.approx((1 + tau) / 2, abs=1e-12)
    # ties in either are dropped: pairs (0,1) tie in J, (1,2) tie in c -> only (0,2) counts
    assert rk.ordering_agreement(np.array([1.0, 1.0, 2.0]), np.array([5.0, 0.0, 0.0])) == 0.0
    assert rk.ordering_agreement(np.array([1.0, 1.0, 2.0]), np.array([0.0, 5.0, 5.0])) == 1.0


def test_pair_scale_equals_mean_over_all_pairs() -> None:
    z = np.random.default_rng(1).normal(size=(9, 4))
    brute = np.mean([((z[i] - z[j]) ** 2).sum() for i in range(9) for j in range(9) if i != j])
    assert rk.mean_pair_sq_distance(z) == pytest.approx(brute, rel=1e-12)


def test_simulation_is_deterministic_and_replays_through_the_task_api(setup) -> None:
    task, data, episodes, out = setup
    again = rk.simulate_candidates(task, data, episodes, N_STARTS, K, progress=False)
    for f in ("blocks", "c_phys", "terminal_frames", "terminal_states", "start_frames"):
        np.testing.assert_array_equal(getattr(out, f), getattr(again, f))
    other = rk.simulate_candidates(task, data, episodes, N_STARTS, K, seed=8, progress=False)
    assert not np.array_equal(out.c_phys, other.c_phys)
    assert out.blocks.shape == (N_STARTS, K, 5, 5 * task.action_dim)
    np.testing.assert_array_equal(out.blocks[0], out.blocks[1])  # gaussian: shared across starts

    # Independent replay of one candidate in a fresh simulator, from the blocks the model sees
    fresh = make_task("tworoom", image_size=data.pixels.shape[1])
    i, k = 2, 5
    raw = data.unzscore_action(out.blocks[i, k]).reshape(-1, task.action_dim)  # time-major
    assert raw.shape == (25, 2) and np.all(np.abs(raw) <= 1 + 1e-5)  # clipped to bounds
    fresh.set_state(episodes.start_states[i])
    for a in raw:
        fresh.step(a)
    final = fresh.get_state()
    np.testing.assert_allclose(final, out.terminal_states[i, k], atol=1e-4)
    want = np.linalg.norm(final[:2] - episodes.goal_states[i][:2])
    assert out.c_phys[i, k] == pytest.approx(want, abs=1e-3)
    np.testing.assert_array_equal(fresh.render(), out.terminal_frames[i, k])


def test_dataset_candidates_are_recorded_training_windows(setup) -> None:
    task, data, episodes, _ = setup
    out = rk.simulate_candidates(task, data, episodes, 2, 4, source="dataset", progress=False)
    train = set(np.asarray(data.train_episodes).tolist())
    act = np.asarray(data.action)
    for seq in out.raw_actions.reshape(-1, 25, 2):
        # find the window in the recorded actions
        hits = [r for r in range(len(act) - 24) if np.array_equal(act[r : r + 25], seq)]
        assert hits, "candidate is not a recorded window"
        r = hits[0]
        assert len(set(data.episode[r : r + 25])) == 1 and int(data.episode[r]) in train


def test_unknown_source_and_bad_sizes_raise(setup) -> None:
    task, data, episodes, _ = setup
    with pytest.raises(ValueError, match="'uniform'.*gaussian, dataset"):
        rk.simulate_candidates(task, data, episodes, 1, 4, source="uniform")
    with pytest.raises(ValueError, match="n_starts=99"):
        rk.simulate_candidates(task, data, episodes, 99, 4)


def test_a_perfect_predictor_keeps_the_encoder_s_order_with_zero_rollout_error(setup) -> None:
    task, _, _, out = setup
    model = AgentXY(out, out.blocks.shape[-1])
    df = rk.ranking_metrics(model, out)
    assert len(df) == N_STARTS and df.attrs["dropped"] == []
    np.testing.assert_allclose(df.tau_pred, 1.0)
    np.testing.assert_allclose(df.rollout_error, 0.0, atol=1e-12)
    np.testing.assert_allclose(df.agree_pred, df.agree_enc)
    np.testing.assert_allclose(df.tau_total, df.tau_geom)
    # an xy encoder's cost is the squared pixel distance: same order as the physical cost,
    # up to the rendering's rounding at the smoke image size
    assert (df.tau_geom > 0.95).all() and (df.agree_enc > 0.97).all()
    # scale: all-pairs mean squared distance of the terminal embeddings
    z = model.encode(
        torch.as_tensor(out.terminal_frames.reshape(-1, 32, 32, 3)).permute(0, 3, 1, 2)
    )
    d = torch.cdist(z.double(), z.double()) ** 2
    assert df.scale.iloc[0] == pytest.approx(float(d.sum() / (len(z) * (len(z) - 1))), rel=1e-5)

    # a start with constant physical costs is dropped, with a warning
    c = out.c_phys.copy()
    c[1] = 3.0
    with pytest.warns(UserWarning, match="dropped 1 of 3"):
        df2 = rk.ranking_metrics(model, dataclasses.replace(out, c_phys=c))
    assert df2.attrs["dropped"] == [1] and list(df2.start) == [0, 2]
