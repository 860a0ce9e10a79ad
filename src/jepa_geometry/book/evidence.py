"""The evidence tree: the laptop book's small files, committed to git beside the code.

A built book's pages read artifacts from the cache (``data/``). Every executed page records
which ones (``kind/name/key``, in its notebook's metadata, :data:`READS_KEY`) and which values
it glued into its prose. :func:`export_evidence` copies, for every artifact any page read, its
manifest and every payload file except the heavy ones (:func:`~jepa_geometry.artifacts.is_heavy`:
a dataset's frames, a model's weights, which stay in the DVC remote) into
``evidence/laptop/<kind>/<name>/<key>/``, and each page's glued values into
``evidence/laptop/pages/<page>.json``. The cache reads that tree as a read-only root behind
``data/`` (:func:`~jepa_geometry.artifacts.read_only_roots`), so a fresh clone renders the
laptop book from it without training, collecting or planning anything, and
:func:`glued_comparison` tells whether a render reproduced every committed value.

This follows DVC's own split: small outputs (metrics, plots) kept in git, large data in the
remote. A file is copied only after its bytes match the manifest's sha256, each artifact
folder appears atomically, and the export deletes only artifact folders of the evidence tree
(which only it writes) that no page reads any more.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jepa_geometry.artifacts import (
    DATA_ENV,
    EVIDENCE_DIR,
    KINDS,
    MANIFEST,
    READ_ONLY_ENV,
    TMP_FILE_SUFFIX,
    TMP_PREFIX,
    Artifact,
    ArtifactError,
    atomic_path,
    data_root,
    environ,
    fresh_dir,
    is_heavy,
    read_manifest,
    read_only_roots,
    replace_dir,
    sha256_file,
)
from jepa_geometry.book.evidence_compare import Comparison, combine, compare_files, compare_values
from jepa_geometry.book.run import GLUE_PREFIX, READS_KEY
from jepa_geometry.book.toc import EXECUTED_DIR, book_pages
from jepa_geometry.envs.dataset import dataset_artifact, load_dataset
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import Profile, load_profile
from jepa_geometry.study.build import cell_jobs
from jepa_geometry.study.spec import load_study
from jepa_geometry.wm.training import train_world_model, world_model_artifact

PAGES_DIR = "pages"  # evidence/<profile>/pages/<page>.json: the page's glued values
STYLER_ID = re.compile(r"\bT_[0-9a-f]{5}(?=[_\" ])")  # a pandas Styler's random table id


BUDGET_MB = {"total": 60.0, "file": 2.0}
"""The evidence tree's size budget per profile: git keeps every version of every file, so the
tree must stay small (the smoke export is 11 MB; a laptop page reads per-episode outcomes and
measurements, never frames or weights)."""
FIGURE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".gif")


def over_budget(
    tree: Path, total_mb: float = BUDGET_MB["total"], file_mb: float = BUDGET_MB["file"]
) -> list[str]:
    """One line per breach of the budget in the evidence tree ``tree``: the whole tree above
    ``total_mb``, a file above ``file_mb``, or a figure (pages draw their figures; the tree
    holds what they are drawn from). Empty: within budget. MB here is 10^6 bytes."""
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    out = [
        f"{p.relative_to(tree)}: {p.stat().st_size / 1e6:.2f} MB > {file_mb:g} MB per file"
        for p in files
        if p.stat().st_size > file_mb * 1e6
    ]
    out += [
        f"{p.relative_to(tree)}: a figure (pages render their figures)"
        for p in files
        if p.suffix.lower() in FIGURE_SUFFIXES
    ]
    total = sum(p.stat().st_size for p in files)
    if total > total_mb * 1e6:
        out.append(f"{tree}: {total / 1e6:.1f} MB in {len(files)} files > {total_mb:g} MB")
    return out


class EvidenceError(RuntimeError):
    """The book's notebooks or cache cannot give a complete evidence tree."""


def _notebook(executed: Path, page: str) -> dict[str, Any]:
    path = executed / EXECUTED_DIR / f"{page}.ipynb"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as e:
        raise EvidenceError(f"page {page} has no executed notebook {path}: run `make book`") from e


def page_profile(nb: dict[str, Any]) -> str | None:
    """The profile a page was executed with (papermill's record of its parameters)."""
    return nb.get("metadata", {}).get("papermill", {}).get("parameters", {}).get("profile")


def page_reads(nb: dict[str, Any]) -> list[str]:
    """The artifacts (``kind/name/key``) the page read when it ran."""
    reads = nb.get("metadata", {}).get(READS_KEY)
    if reads is None:
        raise EvidenceError("the notebook records no reads (executed before the read log)")
    return list(reads)


def glued_values(nb: dict[str, Any]) -> dict[str, str]:
    """``{name: text}`` of every value the page glued (myst-nb's ``glue``): a table's HTML
    (every cell of it, the random id pandas gives a styled table replaced by ``T_``), else
    the plain text; a glued figure counts by its text only."""
    out = {}
    for cell in nb.get("cells", []):
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            data = o.get("data", {})
            for mime in ("text/html", "text/plain"):
                if name is not None and GLUE_PREFIX + mime in data:
                    out[name] = STYLER_ID.sub("T_", "".join(data[GLUE_PREFIX + mime]))
                    break
    return out


def _notebooks(
    root: Path, executed: Path, only: Iterable[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each page of ``root``'s toc (or of ``only``, page names checked against it): its
    notebook executed into ``<executed>/book/chapters/``."""
    names = [page.name for page in book_pages(root)]
    if only is not None:
        wanted = list(dict.fromkeys(only))
        unknown = [n for n in wanted if n not in names]
        if unknown or not wanted:
            raise EvidenceError(
                f"unknown page(s) {unknown or '(none given)'}; valid: {', '.join(names)}"
            )
        names = [n for n in names if n in wanted]
    return {name: _notebook(executed, name) for name in names}


def _reads(notebooks: dict[str, dict[str, Any]]) -> set[str]:
    """Every artifact (``kind/name/key``) any of the pages read."""
    return {ref for nb in notebooks.values() for ref in page_reads(nb)}


def _source_of(ref: str) -> Path:
    """The folder holding artifact ``kind/name/key``: the writable cache, else a read-only one."""
    for root in (data_root(), *read_only_roots()):
        if (root / ref / MANIFEST).is_file():
            return root / ref
    raise EvidenceError(f"artifact {ref} is read by the book but is in no cache")


def _copy_small(src: Path, dest: Path, kind: str) -> None:
    """Copy ``src``'s manifest and small payload files into a new folder that replaces ``dest``
    atomically; each copied byte checked against the manifest."""
    man = read_manifest(src / MANIFEST)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = fresh_dir(dest.parent, f"{TMP_PREFIX}{dest.name}-")
    try:
        for fname, rec in sorted(man.get("files", {}).items()):
            if is_heavy(kind, fname):
                continue
            (tmp / fname).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / fname, tmp / fname)
            if sha256_file(tmp / fname) != rec["sha256"]:
                raise ArtifactError(f"{src / fname} does not match its sha256 in its manifest")
        shutil.copyfile(src / MANIFEST, tmp / MANIFEST)
        replace_dir(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _same(src: Path, dest: Path, kind: str) -> bool:
    """Whether the tree's folder ``dest`` holds ``src``'s manifest and every small file it
    lists, each with the manifest's sha256.

    The manifest alone is not enough: a payload changed in the tree since it was exported (an
    edit, a bad merge, a damaged disk) would be kept, then committed for every reader.
    """
    if (
        not (dest / MANIFEST).is_file()
        or (dest / MANIFEST).read_bytes() != (src / MANIFEST).read_bytes()
    ):
        return False
    files = read_manifest(dest / MANIFEST)["files"]
    return all(
        is_heavy(kind, name)
        or ((dest / name).is_file() and sha256_file(dest / name) == rec["sha256"])
        for name, rec in files.items()
    )


def _remove_leftovers(dest: Path) -> None:
    """Delete what a killed export left in the tree ``dest``: its temporary artifact folders
    (``<kind>/<name>/.tmp-*``) and half-written page files (``pages/.<page>.json.tmp*``).
    Only an export writes the tree, and git ignores both (``.gitignore``), so they are never
    committed even before the next export removes them."""
    for kind in KINDS:
        for old in (dest / kind).glob(f"*/{TMP_PREFIX}*"):
            shutil.rmtree(old, ignore_errors=True)
    for old in (dest / PAGES_DIR).glob(f".*{TMP_FILE_SUFFIX}*"):
        old.unlink(missing_ok=True)


@dataclass
class Export:
    """What :func:`export_evidence` did: artifacts kept, copied (new or changed), removed."""

    root: Path
    artifacts: int
    copied: int
    removed: int
    pages: int

    def __str__(self) -> str:
        return (
            f"evidence {self.root}: {self.artifacts} artifacts from {self.pages} pages "
            f"({self.copied} copied, {self.removed} no longer read and removed)"
        )


def export_evidence(
    root: Path,
    profile: str = "laptop",
    dest: Path | None = None,
    executed: Path | None = None,
    only: Iterable[str] | None = None,
) -> Export:
    """Copy what the executed book read into ``dest`` (default ``<root>/evidence/<profile>``).

    Every page of ``root``'s table of contents must have been executed with ``profile`` into
    ``<executed>/book/chapters/`` (default: ``root``'s); an artifact folder already in the
    tree with the same manifest and intact files is left as it is (an export of unchanged
    results changes no byte; a damaged one is copied again), and what a killed export left is
    removed. With ``only`` (page names) just those pages are exported, added to what the tree
    holds and removing nothing: a build that spans several machines (one task study per
    session, or per cluster job) commits each part as it lands, and the whole book's export
    at the end removes what no page reads.
    """
    dest = dest or root / EVIDENCE_DIR / profile
    executed = executed or root
    notebooks = _notebooks(root, executed, only)
    for name, nb in notebooks.items():
        if page_profile(nb) != profile:
            raise EvidenceError(
                f"page {name} was executed with profile {page_profile(nb)!r}, not {profile!r}: "
                f"run `make book PROFILE={profile}` first"
            )
    refs = _reads(notebooks)
    glued = {name: glued_values(nb) for name, nb in notebooks.items()}
    sources = {ref: _source_of(ref) for ref in sorted(refs)}  # all found before any write
    _remove_leftovers(dest)
    copied = 0
    for ref, src in sources.items():
        target = dest / ref
        if src.resolve() != target.resolve() and not _same(src, target, ref.split("/")[0]):
            _copy_small(src, target, ref.split("/")[0])
            copied += 1
    removed = 0
    for kind in KINDS if only is None else ():
        for man in sorted((dest / kind).glob(f"*/*/{MANIFEST}")):
            folder = man.parent
            if str(folder.relative_to(dest)) not in refs:
                shutil.rmtree(folder)
                removed += 1
                if not any(folder.parent.iterdir()):
                    folder.parent.rmdir()
    (dest / PAGES_DIR).mkdir(parents=True, exist_ok=True)
    for name, values in glued.items():
        text = json.dumps(values, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        path = dest / PAGES_DIR / f"{name}.json"
        if not path.is_file() or path.read_text() != text:
            with atomic_path(path) as tmp:
                tmp.write_text(text)
    for old in (dest / PAGES_DIR).glob("*.json") if only is None else ():
        if old.stem not in glued:
            old.unlink()
    return Export(dest, len(refs), copied, removed, len(notebooks))


def incomplete_in_data(root: Path, executed: Path | None = None) -> list[str]:
    """The artifacts (``kind/name/key``) the executed book read that the writable cache does
    not hold with every file its manifest lists (heavy ones included): served by the evidence
    tree or a read-only cache instead. Versioning ``data/`` while this is not empty would point
    ``data.dvc`` at less than the book needs."""
    out = []
    for ref in sorted(_reads(_notebooks(root, executed or root))):
        folder = data_root() / ref
        try:
            files = read_manifest(folder / MANIFEST)["files"]
        except (OSError, ArtifactError):
            out.append(ref)
            continue
        if not all((folder / f).is_file() for f in files):
            out.append(ref)
    return out


def glued_comparison(
    root: Path,
    profile: str = "laptop",
    only: Iterable[str] | None = None,
    executed: Path | None = None,
) -> Comparison:
    """Every glued value of the executed pages (every page, or those of ``only``; in
    ``<executed>/book/chapters/``, default ``root``'s) against the committed one in
    ``evidence/<profile>/pages/``: identical, equal (the numbers in each text within
    :data:`~jepa_geometry.book.evidence_compare.FLOAT_TOLERANCE`, integers and the words
    around them exactly) or different, a value missing on either side included. A render on
    another CPU than the export's may differ in a float's last digits and is still equal."""
    committed = root / EVIDENCE_DIR / profile / PAGES_DIR
    parts = []
    for name, nb in _notebooks(root, executed or root, only).items():
        path = committed / f"{name}.json"
        if path.is_file():
            parts.append(compare_values(json.loads(path.read_text()), glued_values(nb), name))
        else:
            parts.append(Comparison(False, [f"{name}: no committed values ({path})"]))
    return combine(parts)


def evidence_pages(root: Path, profile: str = "laptop") -> list[str]:
    """The pages of ``root``'s toc whose glued values ``evidence/<profile>/pages/`` holds:
    those render from the committed evidence with nothing built."""
    committed = root / EVIDENCE_DIR / profile / PAGES_DIR
    return [p.name for p in book_pages(root) if (committed / f"{p.name}.json").is_file()]


@dataclass
class SampleFile:
    """One payload file of the rebuilt sample against the committed one."""

    artifact: str
    file: str
    comparison: Comparison


def _against_committed(where: str, sha: str, copies: list[Path], rebuilt: Path) -> Comparison:
    """The rebuilt file against the committed one, value by value: the first of ``copies``
    whose bytes have the committed ``sha`` (the evidence tree holds the small files; a heavy
    one is in ``data/`` once ``dvc pull`` fetched it). A file with no copy anywhere (a heavy
    one before ``dvc pull``) is *uncompared*: its values cannot be read, and the files built
    from it (a model's log and planning cell) are compared instead. A copy whose bytes are
    not the committed ones leaves nothing to compare with, and the file differs."""
    for copy in copies:
        if copy.is_file() and sha256_file(copy) == sha:
            return compare_files(copy, rebuilt, where)
    if not any(copy.is_file() for copy in copies):
        return Comparison(False, uncompared=[where])
    return Comparison(
        False,
        [f"{where}: sha256 differs, and no committed copy to compare values with (dvc pull)"],
    )


def sample_artifacts(task: str, profile_name: str) -> tuple[Profile, PlanningCell, list[Artifact]]:
    """What :func:`sample_check` rebuilds for ``task``: the study's profile (its rung of its
    ladder), the sample's planning cell, and the artifacts compared (dataset, model, cell)."""
    spec = load_study(task)
    profile = spec.profile(load_profile(profile_name))
    first = profile.seeds.train[0]
    cells = [j for j in cell_jobs(spec, profile, None) if (j.arm, j.train_seed) == ("lewm", first)]
    job = [j for j in cells if j.solver in ("cem", "icem")][-1]
    arts: list[Artifact] = [
        dataset_artifact(task, profile),
        world_model_artifact(task, job.arm, job.train_seed, profile),
        *job.artifacts(),
    ]
    return profile, job, arts


def sample_check(
    root: Path,
    task: str,
    profile_name: str = "laptop",
    workdir: Path | None = None,
    progress: bool = True,
) -> list[SampleFile]:
    """Rebuild one dataset, one model and one planning cell of ``task`` from nothing, in an
    empty cache, and compare every payload file (the heavy ones too) with the committed
    evidence: the check anyone can run that the evidence is what the code computes. A file
    with the committed sha256 is identical; another is compared value by value with the
    committed copy (:func:`~jepa_geometry.book.evidence_compare.compare_files`), equal when
    it differs only in floats within the tolerance (another CPU's rounding).

    The sample is the task study's LeWM model of its first training seed, and the cheapest
    of that model's CEM / iCEM cells (fewest rollouts per plan), all at the study's rung of its
    ladder (Push-T's study trains and plans at 96 px: the base profile names artifacts no page
    reads).
    """
    evidence = root / EVIDENCE_DIR / profile_name
    profile, job, arts = sample_artifacts(task, profile_name)
    committed = {}
    for art in arts:
        ref = f"{art.kind}/{art.name}/{art.key}"
        if not (evidence / ref / MANIFEST).is_file():
            raise EvidenceError(f"the evidence {evidence} holds no {ref}: export it first")
        committed[ref] = read_manifest(evidence / ref / MANIFEST)["files"]
    folders = list(dict.fromkeys((evidence, data_root(), *read_only_roots())))
    with (
        tempfile.TemporaryDirectory(dir=workdir) as tmp,
        environ({DATA_ENV: tmp, READ_ONLY_ENV: ""}),
    ):
        load_dataset(task, profile, progress=progress)
        train_world_model(task, job.arm, job.train_seed, profile, progress=progress, heavy=True)
        job.evaluate(progress=progress)
        out = []
        for art in arts:
            ref = f"{art.kind}/{art.name}/{art.key}"
            rebuilt = art.manifest()["files"]
            for name in sorted(set(rebuilt) | set(committed[ref])):
                where, sha = f"{ref}/{name}", committed[ref].get(name, {}).get("sha256")
                if name not in rebuilt:
                    found = Comparison(False, [f"{where}: committed, missing from the rebuild"])
                elif sha is None:
                    found = Comparison(False, [f"{where}: rebuilt, not in the committed manifest"])
                elif rebuilt[name]["sha256"] == sha:
                    found = Comparison()
                else:
                    copies = [folder / ref / name for folder in folders]
                    found = _against_committed(where, sha, copies, art.file(name))
                out.append(SampleFile(ref, name, found))
    return out


__all__ = [
    "incomplete_in_data",
    "SampleFile",
    "sample_artifacts",
    "sample_check",
    "EvidenceError",
    "Export",
    "export_evidence",
    "glued_comparison",
    "glued_values",
    "evidence_pages",
    "page_reads",
]
