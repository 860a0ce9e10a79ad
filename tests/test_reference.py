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
