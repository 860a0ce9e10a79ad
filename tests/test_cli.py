import os

import pytest
import yaml

from jepa_geometry import cli
from jepa_geometry.cli import main
from jepa_geometry.profiles import load_profile


def test_profile_prints_validated_yaml(capsys):
    assert main(["profile", "laptop"]) == 0
    out = yaml.safe_load(capsys.readouterr().out)
    assert out["name"] == "laptop" and out["model"]["embed_dim"] == 64


def test_unknown_profile_lists_choices(capsys):
    with pytest.raises(SystemExit):
        main(["profile", "nosuch"])
    assert "choose from 'smoke', 'laptop', 'paper'" in capsys.readouterr().err


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
    monkeypatch.setattr(cli, "native_bf16", lambda: native)
    cli._note_precision(load_profile("smoke", {"train.precision": precision}))
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


def test_chapter_help_lists_every_chapter_with_its_parameters(capsys):
    from jepa_geometry.book.toc import book_pages

    with pytest.raises(SystemExit) as stop:
        main(["chapter", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for page in book_pages():
        assert page.source.stem in out  # every chapter source, with its pages
    assert "ch07_geometry  (pages: ch07_tworoom_geometry" in out
    assert "landscape_examples=3" in out and "profile='laptop'" in out


def test_every_command_with_a_profile_uses_that_profile_s_cache(monkeypatch, capsys):
    from jepa_geometry.artifacts import DATA_ENV, profile_cache

    monkeypatch.delenv(DATA_ENV, raising=False)
    assert main(["book", "--profile", "smoke", "--only", "nosuch"]) == 2  # stops before work
    assert os.environ[DATA_ENV] == str(profile_cache("smoke"))
    monkeypatch.delenv(DATA_ENV)
