"""What each command does: what it prints, and bad input stopped in one line before any work."""

import pytest
import yaml

from jepa_geometry.cli import commands, main
from jepa_geometry.profiles import load_profile


def test_profile_prints_validated_yaml(capsys):
    assert main(["profile", "laptop"]) == 0
    out = yaml.safe_load(capsys.readouterr().out)
    assert out["name"] == "laptop" and out["model"]["embed_dim"] == 64


def test_book_rejects_unknown_chapter(capsys):
    assert main(["book", "--profile", "smoke", "--only", "ch77_nothing"]) == 2
    assert "unknown page(s) ['ch77_nothing']" in capsys.readouterr().err


def test_study_command_rejects_bad_input_before_any_work(capsys, data_root):
    for argv, message in (
        (["study", "nosuch"], "invalid choice: 'nosuch'"),
        (["study", "tworoom", "--workers", "0"], "expected an integer >= 1, got 0"),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        assert message in capsys.readouterr().err
    assert main(["study", "tworoom", "--set", "train.precision=fp16"]) == 2
    assert "train.precision must be one of bf16, fp32, got 'fp16'" in capsys.readouterr().err
    assert not list(data_root.rglob("manifest.json"))  # nothing was built


def test_grid_dry_run_lists_the_extensions_units_and_builds_nothing(capsys, data_root):
    argv = ["grid", "--profile", "smoke", "--tasks", "tworoom", "--dry-run", "--units"]
    assert main(argv) == 0
    alone = capsys.readouterr().out
    assert main([*argv, "--with", "kappa", "scaling"]) == 0
    both = capsys.readouterr().out
    for unit in ("train pusht anisowm seed 0 kappa=8", "count FLOPs tworoom (3x steps)"):
        assert unit in both and unit not in alone
    assert not list(data_root.rglob("manifest.json"))  # neither stated nor built


@pytest.mark.parametrize(
    ("native", "precision", "noted"),
    [(False, "bf16", True), (True, "bf16", False), (False, "fp32", False)],
)
def test_a_bf16_profile_on_a_cpu_without_native_bf16_is_noted_once(
    native, precision, noted, monkeypatch, capsys
):
    """A CPU without AVX512-BF16 or AMX emulates bf16 (5 to 14 times slower than fp32 for a
    training step): the commands that train say so in one line before they start."""
    monkeypatch.setattr(commands, "native_bf16", lambda: native)
    commands._note_precision(load_profile("smoke", {"train.precision": precision}))
    err = capsys.readouterr().err.splitlines()
    assert err == (
        [
            "jepa-geometry: note: this CPU has no native bfloat16 (AVX512-BF16 or AMX); "
            "the smoke profile trains in bf16, 5 to 14 times slower here than fp32 "
            "(README, Profiles)"
        ]
        if noted
        else []
    )


def test_study_dry_run_states_its_cost_first_and_builds_nothing(capsys, data_root, monkeypatch):
    """Issue 71: ``study`` at laptop said nothing before a build of hours; ``--dry-run``
    prints its one cost line, in core-hours and in wall time with its workers, and stops."""
    monkeypatch.setattr(commands, "build_study", lambda *a, **k: pytest.fail("it built"))
    assert main(["study", "tworoom", "--profile", "smoke", "--workers", "2", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("tworoom study (profile=smoke): "), out
    assert "core-hours of work" in out[0] and "of wall time on 2 cores" in out[0]


def test_grid_dry_run_names_the_decision_models_and_can_leave_them_out(capsys, data_root):
    """Issue 71: the grid's hours included the book's decision models without a word; the dry
    run names them, ``--without-decisions`` leaves them out of a reader's grid, and a grid
    with a ΛReg arm, which needs them, is refused in one line."""
    from jepa_geometry import cluster
    from jepa_geometry.study.spec import load_study

    arms = "lewm,scale,lewm+examples/objectives/variance_match.py"
    base = ["grid", "--tasks", "tworoom", "--profile", "smoke", "--dry-run", "--arms", arms]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "core-hours of work" in out and "of wall time on" in out
    assert "the book's decisions" in out and "decision models" in out
    assert main([*base, "--without-decisions"]) == 0
    out = capsys.readouterr().out
    assert "the book's decisions" not in out
    spec = load_study("tworoom").with_arms(arms.split(","))
    profile = load_profile("smoke")
    every = cluster.dry_run([spec], profile)
    without = cluster.dry_run([spec], profile, decisions=False)
    assert len(every) - len(without) == len(every.attrs["decisions"]) > 0
    assert main(["grid", "--tasks", "tworoom", "--dry-run", "--without-decisions"]) == 2
    assert "ΛReg arm" in capsys.readouterr().err
