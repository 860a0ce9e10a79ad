import pytest
import yaml

from jepa_geometry.cli import main


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
