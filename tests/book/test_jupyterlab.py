"""A chapter opens in JupyterLab as a notebook and runs there, as book/reproduce.md's steps say.

The test starts the environment's own JupyterLab server (``make lab``'s command) on a free
localhost port, asks it for a chapter the way the JupyterLab file browser's "Open With >
Jupytext Notebook" does (the contents API with ``type=notebook``), runs the notebook it
returns at the smoke profile in the kernel JupyterLab offers, and stops the server it started.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from jepa_geometry.artifacts import DATA_ENV
from tests.conftest import REPO

JUPYTER = Path(sys.executable).with_name("jupyter")
CHAPTER = "ch02_isotropy_regret.md"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read()


@pytest.fixture
def lab(tmp_path: Path):
    """A JupyterLab server on the chapters, as ``make lab`` starts it; stopped afterwards."""
    port, token = _free_port(), secrets.token_hex(16)
    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(
        [
            str(JUPYTER),
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={REPO / 'chapters'}",
            *(["--allow-root"] if os.geteuid() == 0 else []),  # CI's containers run as root
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, DATA_ENV: str(tmp_path / "cache")},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                _get(f"{base}/api/status", token)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((tmp_path / "lab.log").read_text()[-2000:]) from None
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


@pytest.mark.slow
def test_a_chapter_opens_in_jupyterlab_as_a_notebook_and_runs(lab, tmp_path: Path, monkeypatch):
    base, token = lab
    status, page = _get(f"{base}/lab", token)
    assert status == 200 and b"JupyterLab" in page
    _, body = _get(f"{base}/api/contents/{CHAPTER}?type=notebook&content=1", token)
    model = json.loads(body)
    assert model["type"] == "notebook", model["type"]
    nb = nbformat.from_dict(model["content"])
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert 'profile = "laptop"' in params.source  # the chapter's own default
    params.source = params.source.replace('profile = "laptop"', 'profile = "smoke"')  # reproduce.md
    # the kernel inherits the server's environment, as in JupyterLab
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "cache"))
    NotebookClient(
        nb,
        kernel_name=nb.metadata["kernelspec"]["name"],
        timeout=600,
        resources={"metadata": {"path": str(REPO / "chapters")}},
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    glued = {
        o.metadata["scrapbook"]["name"]: next(
            v for k, v in o.data.items() if k.endswith("text/plain")
        )
        for o in outputs
        if "scrapbook" in o.get("metadata", {})
    }
    assert glued["ch02_profile"] == "'smoke'" and int(glued["reading_minutes"]) >= 1
