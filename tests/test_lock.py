"""The environment lock: every package pinned with a hash, and in agreement with pyproject."""

import json
import re
import sys
import tomllib
from importlib import metadata

from packaging.requirements import Requirement

from jepa_geometry.artifacts import Artifact, get_or_build, lock_digest, sha256_file
from tests.conftest import REPO

LOCK = REPO / "requirements.lock"
ENTRY = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+) \\\n    --hash=sha256:([0-9a-f]{64})$", re.M)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, str]:
    return {_norm(n): v for n, v, _ in ENTRY.findall(LOCK.read_text())}


def test_every_locked_package_has_a_pin_and_a_hash():
    body = [ln for ln in LOCK.read_text().splitlines() if ln and not ln.startswith("#")]
    assert len(ENTRY.findall(LOCK.read_text())) * 2 == len(body)


def test_the_lock_satisfies_every_requirement_of_pyproject():
    """A requirement changed in pyproject.toml but not re-locked fails here: run `make lock`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    pins = locked()
    for text in reqs:
        req = Requirement(text)
        version = pins.get(_norm(req.name))
        assert version is not None, f"{req.name} is not in requirements.lock: run `make lock`"
        assert req.specifier.contains(version, prereleases=True), (
            f"requirements.lock pins {req.name}=={version}, pyproject asks {req}: run `make lock`"
        )


def test_the_installed_environment_is_the_lock():
    if sys.prefix == sys.base_prefix:  # not in the project's venv: nothing to compare
        return
    pins = locked()
    installed = {_norm(d.metadata["Name"]): d.version for d in metadata.distributions()}
    off = {n: (v, installed.get(n)) for n, v in pins.items() if installed.get(n) != v}
    assert not off, f"installed versions differ from requirements.lock: {off}"


def test_every_manifest_records_the_lock(data_root):
    path = get_or_build(
        Artifact("results", "demo", {"n": 1}), lambda t: (t / "x").write_text("x") and None
    )
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["environment_lock"] == lock_digest() == sha256_file(LOCK)
