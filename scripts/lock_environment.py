"""Resolve the whole environment of pyproject.toml into ``requirements.lock``, with hashes.

    .venv/bin/python scripts/lock_environment.py            # or: make lock
    .venv/bin/python scripts/lock_environment.py --upgrade  # or: make lock UPGRADE=1
    .venv/bin/python scripts/lock_environment.py --left-out # the packages it leaves out

pyproject.toml keeps the direct requirements; this asks pip itself to resolve them (``pip
install --dry-run --report``: no install, the same resolver and indexes ``make`` uses) and
writes every package of the result as ``name==version --hash=sha256:...``. Every package the
current lock pins keeps its version (the lock is passed to the resolver as constraints), so a
new requirement adds packages and changes no number of the book; ``--upgrade`` re-resolves
from pyproject.toml alone. ``make`` then
installs with ``--require-hashes``, so a fresh machine gets exactly these files, and every
artifact's manifest records the lock's sha256 (``artifacts.provenance``). The lock is for the
machine kind the book is built on (CPython 3.11, Linux x86_64). Why not pip-tools: pip's own
report gives the resolution and the hashes, so no further tool is needed for this.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
EXTRAS = "book,test"
LEFT_OUT: dict[str, str] = {
    "rfc3987-syntax": "jsonschema imports it, when present, for its optional `iri` format "
    "check, and it compiles 39 Lark grammars on import: 5.9 s in every process that imports "
    "nbformat (each chapter's kernel, papermill, each test worker) on the 2-core machine; "
    "jsonschema skips the check without it, and no notebook or Jupyter schema uses `iri`",
    "lark": "needed only by rfc3987-syntax",
}
"""Packages the resolution pulls in (JupyterLab's jupyter-events asks for
``jsonschema[format-nongpl]``) that the lock leaves out, and why; ``make`` installs the lock
with ``--no-deps`` (it is the whole resolution) and removes these from an older venv."""


def pyproject_digest(root: Path = ROOT) -> str:
    """sha256 of pyproject.toml, written into the lock's header (what it was resolved from)."""
    return hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()


def pinned_versions(lock: Path = LOCK) -> list[str]:
    """The ``name==version`` lines of a lock, without their hashes (pip's constraints format)."""
    if not lock.is_file():
        return []
    return [line.split()[0] for line in lock.read_text().splitlines() if "==" in line.split(" ")[0]]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--left-out"]:  # for the Makefile: what an older venv may still hold
        print(" ".join(LEFT_OUT))
        return 0
    if args not in ([], ["--upgrade"]):
        raise SystemExit(f"unknown arguments {args}; valid: none, --upgrade or --left-out")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("\n".join([] if args else pinned_versions()) + "\n")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "--constraint",
            str(constraints),
            f"{ROOT}[{EXTRAS}]",
        ]
        subprocess.run(cmd, check=True)
        install = json.loads(report.read_text())["install"]
    lines = []
    for item in sorted(install, key=lambda i: i["metadata"]["name"].lower()):
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if name == "jepa-geometry" or name.lower() in LEFT_OUT:
            continue
        digest = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256")
        if not digest:
            raise SystemExit(f"pip reported no sha256 for {name}=={version}; cannot lock it")
        lines.append(f"{name}=={version} \\\n    --hash=sha256:{digest}")
    header = [
        "# The whole environment, resolved from pyproject.toml by scripts/lock_environment.py",
        f"# (refresh: make lock). pyproject.toml sha256: {pyproject_digest()}",
        f"# Extras: {EXTRAS}. Platform: CPython 3.11, Linux x86_64.",
        f"# Left out on purpose (scripts/lock_environment.py, LEFT_OUT): {', '.join(LEFT_OUT)}.",
    ]
    LOCK.write_text("\n".join(header + lines) + "\n")
    print(f"{LOCK.name}: {len(lines)} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
