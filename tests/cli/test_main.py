"""main (jepa_geometry.cli): a command runs with its profile's own cache."""

import os

from jepa_geometry.cli import main


def test_every_command_with_a_profile_uses_that_profile_s_cache(monkeypatch, capsys):
    from jepa_geometry.artifacts import DATA_ENV, profile_cache

    monkeypatch.delenv(DATA_ENV, raising=False)
    assert main(["book", "--profile", "smoke", "--only", "nosuch"]) == 2  # stops before work
    assert os.environ[DATA_ENV] == str(profile_cache("smoke"))
    monkeypatch.delenv(DATA_ENV)
