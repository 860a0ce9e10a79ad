import pytest

from jepa_geometry.study.reference import reference_numbers


def test_reference_table_is_tidy_and_cited():
    df = reference_numbers()
    assert {"paper", "source", "setting", "arm", "value"} <= set(df.columns)
    assert df["source"].str.len().min() > 10
    assert set(df["paper"]) == {"SCALE", "AnisoWM", "LeWM"}


def test_spot_values_from_the_papers():
    icem = reference_numbers(table="scale_success_per_solver", task="tworoom", solver="icem")
    assert dict(zip(icem.arm, icem.value, strict=True))["scale"] == 92.87
    ani = reference_numbers(table="aniso_success", task="tworoom")
    assert set(zip(ani.arm, ani.value, strict=True)) == {("lewm", 87.0), ("anisowm", 93.0)}


def test_per_solver_means_are_consistent_with_per_tier_rows():
    # The per-solver table is the mean of the five tiers: a consistency check of the data.
    tiers = reference_numbers(table="scale_success_per_tier", task="tworoom", solver="cem")
    mean = tiers.groupby("arm").value.mean()
    solver = reference_numbers(table="scale_success_per_solver", task="tworoom", solver="cem")
    for arm, value in zip(solver.arm, solver.value, strict=True):
        assert mean[arm] == pytest.approx(value, abs=0.1)


def test_bad_filters_fail_loudly():
    with pytest.raises(ValueError, match="unknown reference column 'tsk'"):
        reference_numbers(tsk="tworoom")
    with pytest.raises(ValueError, match="no reference numbers match"):
        reference_numbers(task="atari")


@pytest.mark.parametrize("task", ["tworoom", "reacher", "pointmaze"])
@pytest.mark.parametrize("solver", ["cem", "icem", "mppi"])
def test_per_tier_rows_average_to_the_per_solver_table(task, solver):
    tiers = reference_numbers(table="scale_success_per_tier", task=task, solver=solver)
    assert sorted(set(tiers.tier)) == ["T1", "T2", "T3", "T4", "T5"]
    mean = tiers.groupby("arm").value.mean()
    solver_means = reference_numbers(table="scale_success_per_solver", task=task, solver=solver)
    for arm, value in zip(solver_means.arm, solver_means.value, strict=True):
        assert mean[arm] == pytest.approx(value, abs=0.05)


@pytest.mark.parametrize("task", ["reacher", "pointmaze"])
def test_overall_means_and_contrasts_are_consistent(task):
    overall = reference_numbers(table="scale_success_overall", task=task).set_index("arm").value
    per_solver = reference_numbers(table="scale_success_per_solver", task=task)
    for arm, mean in per_solver.groupby("arm").value.mean().items():
        assert overall[arm] == pytest.approx(mean, abs=0.01)
    diff = reference_numbers(table="scale_success_overall_difference", task=task, versus="lewm")
    for arm, value in zip(diff.arm, diff.value, strict=True):
        assert overall[arm] - overall["lewm"] == pytest.approx(value, abs=0.011)
    # The T* per-tier SCALE values average to the tuned table's SCALE value.
    tiers = reference_numbers(table="scale_success_mppi_tuned_per_tier", task=task)
    tuned = reference_numbers(table="scale_success_mppi_tuned", task=task, arm="scale")
    assert tiers.value.mean() == pytest.approx(tuned.value.iloc[0], abs=0.05)
    # Training seed 3072 of the replication table is the main grid.
    seeds = reference_numbers(table="scale_success_training_seeds", task=task, train_seed="3072")
    main = per_solver.set_index(["solver", "arm"]).value
    for _, r in seeds.iterrows():
        assert main[(r.solver, r.arm)] == r.value


def test_reacher_and_pointmaze_spot_values():
    icem = reference_numbers(table="scale_success_per_tier", task="reacher", solver="icem")
    assert icem.set_index(["tier", "arm"]).value[("T2", "scale")] == 86.2
    p = reference_numbers(table="scale_success_overall_wilcoxon_p", task="pointmaze", versus="aux")
    assert dict(zip(p.arm, p.value, strict=True)) == {"scale": 0.094}
    lam = reference_numbers(table="aniso_lambda_above_mean", task="reacher")
    assert lam.value.tolist() == [124.0]
    assert set(reference_numbers(task="pointmaze").paper) == {"SCALE"}  # AnisoWM has no PointMaze


def test_table_ids_are_unique():
    from importlib import resources

    import yaml

    text = resources.files("jepa_geometry.study").joinpath("reference_numbers.yaml").read_text()
    ids = [t["id"] for t in yaml.safe_load(text)["tables"]]
    assert len(ids) == len(set(ids))
