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
    assert "unknown chapter(s) ['ch77_nothing']" in capsys.readouterr().err
