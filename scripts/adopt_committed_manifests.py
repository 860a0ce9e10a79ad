"""Keep the committed provenance of an artifact a build collected again bit for bit.

    JEPA_GEOMETRY_DATA=<cache> python scripts/adopt_committed_manifests.py [--kind datasets]

The evidence tree (``evidence/<profile>``) holds an artifact's manifest without its heavy files
(a dataset's frames). A build that needs the frames collects them again into the cache, with a
manifest of its own: a new creation time, wall time and collect time, which ``evidence export``
would copy over the committed manifest, so the page would report the re-collection as the
original build. For each artifact of ``--kind`` in the cache whose key the evidence holds, this
compares every file the committed manifest lists with the cache's copy (size and sha256):

* all equal: the collection reproduced the committed artifact bit for bit, so the committed
  manifest replaces the cache's (written atomically) and the build goes on with the original
  provenance;
* any different: nothing is changed, and the line names the file: the build would train on
  other bytes than the committed artifact's (another CPU vendor's float rounding, for
  example), which the builder must decide on before training.

It exits 1 when any artifact differs, 0 otherwise; it writes nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from jepa_geometry.artifacts import DATA_ENV, MANIFEST, sha256_file


def compare(committed: Path, cached: Path) -> list[str]:
    """The files of ``committed``'s manifest that ``cached`` lacks or holds with other bytes."""
    files = json.loads((committed / MANIFEST).read_text())["files"]
    bad = []
    for name, rec in files.items():
        f = cached / name
        if not f.is_file() or f.stat().st_size != rec["size"] or sha256_file(f) != rec["sha256"]:
            bad.append(name)
    return bad


def adopt(committed: Path, cached: Path) -> None:
    """Write the committed manifest into ``cached`` atomically (a temporary file renamed)."""
    text = (committed / MANIFEST).read_text()
    fd, tmp = tempfile.mkstemp(dir=cached, prefix=".tmp-manifest-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, cached / MANIFEST)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", default="datasets", help="artifact kind (a cache folder)")
    parser.add_argument("--evidence", default="evidence/laptop", help="the evidence tree")
    args = parser.parse_args()
    cache = Path(os.environ.get(DATA_ENV, "data")) / args.kind
    tree = Path(args.evidence) / args.kind
    if not tree.is_dir():
        print(f"adopt: no evidence folder {tree}", file=sys.stderr)
        return 2
    status = 0
    for committed in sorted(p for p in tree.glob("*/*") if (p / MANIFEST).is_file()):
        cached = cache / committed.relative_to(tree)
        if not (cached / MANIFEST).is_file():
            continue
        bad = compare(committed, cached)
        name = committed.relative_to(tree)
        if bad:
            status = 1
            print(f"{name}: differs from the committed artifact in {', '.join(bad)}; kept as built")
        else:
            adopt(committed, cached)
            print(f"{name}: identical to the committed artifact; its committed manifest adopted")
    return status


if __name__ == "__main__":
    sys.exit(main())
