"""The artifact cache: where datasets, checkpoints and results live, and how they are written.

Every artifact is a directory ``data/<kind>/<name>/<key>/`` holding its payload files and a
``manifest.json``. The key is a short hash of everything the artifact depends on (task,
arm, objective weights, seed and the profile sections that change the result), so two
chapters asking for the same thing share one copy, and a change of any input gives a new
key instead of a stale hit.

Writes are atomic (build into a temporary sibling directory, then ``os.replace``) and guarded
by a file lock, so two processes building the same artifact never corrupt it: the second
waits and then reuses the first's result. The manifest records the sha256 of every payload
file; a missing or truncated file is detected on load and the artifact is rebuilt (by
:func:`get_or_build`) or reported (by :func:`load`), never silently used.

Reading never writes: an artifact that is present and passes its check is returned without
taking a lock or creating anything, so a read-only cache (a DVC checkout, a shared folder, the
evidence tree of a clone) serves every artifact it holds. Locks are taken only to build.

A dataset's or a checkpoint's heavy payload (:func:`is_heavy`: HDF5 frames, weights) may be
absent while its manifest and small files are present, as in the committed evidence tree: such
an artifact counts as present for everything but the heavy file, which is verified where it is
opened (``get_or_build(..., heavy=True)``) and built there, or reported in one line naming the
artifact and the command that builds it when building is off (:func:`cache_only`).

The cache deletes only what it wrote. A rebuild refuses, with one line naming the files, when
the artifact's folder holds a file its manifest does not list (a user's notes or analysis), or
when the folder has files but no manifest (a deleted manifest is reported, not rebuilt over).
Temporary build folders (``.tmp-<key>-*``), the temporary files of atomic writes
(``.<name>.tmp*``) and lock files (``data/.locks/``) are excluded from
DVC by ``.dvcignore``, and a killed build's leftovers are removed by the next build of the
same artifact, under its lock.

``data/`` is versioned by DVC (``data.dvc`` at the repository root).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import secrets
import shutil
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from filelock import FileLock

from jepa_geometry.profiles import DEFAULT_PROFILE

KINDS: tuple[str, ...] = ("datasets", "checkpoints", "results", "figures")
DATA_ENV = "JEPA_GEOMETRY_DATA"
READ_ONLY_ENV = "JEPA_GEOMETRY_READ_ONLY"  # caches to reuse but never write (os.pathsep list)
CACHE_ONLY_ENV = "JEPA_GEOMETRY_CACHE_ONLY"  # "1": a missing artifact raises NotCached
READ_LOG_ENV = "JEPA_GEOMETRY_READ_LOG"  # a file: every artifact read is appended to it
EVIDENCE_DIR = "evidence"  # <repo>/evidence/<profile>/: the committed small files
EVIDENCE_PROFILE = "laptop"  # data/ holds the laptop profile's artifacts (Makefile)
MANIFEST = "manifest.json"
TMP_PREFIX = ".tmp-"  # temporary build folders: .tmp-<key>-<random>, ignored by DVC
TMP_FILE_SUFFIX = ".tmp"  # temporary files of atomic writes: .<name>.tmp<random>, ignored too


class ArtifactError(RuntimeError):
    """An artifact is missing, truncated or does not match its manifest."""


class NotCached(ArtifactError):
    """Inside :func:`cache_only`, an artifact that would have to be built."""


HEAVY_KINDS: tuple[str, ...] = ("datasets", "checkpoints")
HEAVY_RESULTS: tuple[str, ...] = ("z_grid.npy",)
"""Result files no page reads: a geometry measurement's embeddings of the landscape grid
(0.5 to 3 MB per model), which pages draw from through a memo of their costs."""


def is_heavy(kind: str, filename: str) -> bool:
    """Whether a payload file is *heavy*: a dataset's or checkpoint's file other than JSON (the
    HDF5 frames, the weights), or a result file of :data:`HEAVY_RESULTS`. Heavy files live in
    the DVC remote only; the evidence tree in git holds every manifest and every other file,
    which is all a rendered page reads."""
    if kind == "results":
        return filename in HEAVY_RESULTS
    return kind in HEAVY_KINDS and not filename.endswith(".json")


@contextlib.contextmanager
def cache_only() -> Iterator[None]:
    """Inside the block, :func:`get_or_build` never builds: an artifact that is absent (or
    fails its check) raises :class:`NotCached` naming it.

    For pages that only read other studies' results (the cross-task chapter): a study that was
    never built is reported as missing instead of being trained for hours. The switch is an
    environment variable, so worker processes started inside the block inherit it.
    """
    with environ({CACHE_ONLY_ENV: "1"}):
        yield


def repo_root(start: Path | None = None) -> Path | None:
    """The nearest directory at or above ``start`` (default: cwd) holding ``data.dvc``."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "data.dvc").is_file():
            return d
    return None


def data_root() -> Path:
    """Root of the cache: ``$JEPA_GEOMETRY_DATA`` if set, else ``<repo>/data``, else ``./data``.

    Chapters run with ``chapters/`` as working directory, so the repository is found by
    walking up to ``data.dvc`` rather than by assuming the cwd.
    """
    env = os.environ.get(DATA_ENV)
    if env:
        path = Path(env).resolve()
        if path.exists() and not path.is_dir():
            raise ArtifactError(
                f"${DATA_ENV} is {path}, which is not a directory; point it at "
                "a folder for the cache (it is created if absent)"
            )
        return path
    return profile_cache(DEFAULT_PROFILE)


def profile_cache(profile: str) -> Path:
    """Where a profile's artifacts go when ``$JEPA_GEOMETRY_DATA`` is unset: ``<repo>/data``
    for the book's profile (the default one), ``<repo>/.cache/data-<profile>`` for the
    others, so a smoke or paper run never mixes its artifacts into the book's versioned data."""
    root = repo_root() or Path.cwd().resolve()
    return root / "data" if profile == DEFAULT_PROFILE else root / ".cache" / f"data-{profile}"


def use_profile_cache(profile: str) -> None:
    """Point this process (and the kernels and jobs it starts) at :func:`profile_cache` unless
    ``$JEPA_GEOMETRY_DATA`` names a cache already."""
    if not os.environ.get(DATA_ENV):
        os.environ[DATA_ENV] = str(profile_cache(profile))


def pin_cache_paths() -> None:
    """Make ``$JEPA_GEOMETRY_DATA`` and ``$JEPA_GEOMETRY_READ_ONLY`` absolute, against this
    process's working directory, before it starts any other process.

    A relative cache (``JEPA_GEOMETRY_DATA=relcache``) is otherwise resolved by each process
    against its own working directory: the command's against the user's, a page kernel's
    against ``chapters/``, so one book would build everything twice in two caches, without a
    word, and a page would not see what the command built for it.
    """
    env = os.environ.get(DATA_ENV)
    if env:
        os.environ[DATA_ENV] = str(Path(env).resolve())
    raw = os.environ.get(READ_ONLY_ENV)
    if raw:
        paths = (str(Path(p).resolve()) for p in raw.split(os.pathsep) if p)
        os.environ[READ_ONLY_ENV] = os.pathsep.join(paths)


def read_only_roots() -> list[Path]:
    """Caches whose artifacts are reused but never written: ``$JEPA_GEOMETRY_READ_ONLY``, then
    the repository's evidence tree wherever the repository's ``data/`` is read.

    A chapter run with non-default parameters writes to its own run folder and reads the
    book's cache through this, so an experiment reuses the book's models without ever
    touching the book's DVC-tracked data (``jepa-geometry chapter``). The evidence tree
    (:func:`evidence_root`) backs ``data/``: on a fresh clone, whose ``data/`` is empty, it
    serves every small file the laptop book reads.
    """
    raw = os.environ.get(READ_ONLY_ENV, "")
    roots = [Path(p).resolve() for p in raw.split(os.pathsep) if p]
    evidence = evidence_root()
    if evidence is not None and evidence.is_dir():
        book_data = evidence.parents[1] / "data"
        if data_root() == book_data or book_data in roots:
            roots.append(evidence)
    return roots


def figure_folder(profile: str) -> Path:
    """Where the figures a page draws at ``profile`` are saved: ``<cache>/figures/<profile>/``
    (``book.plots.savefig``)."""
    return data_root() / "figures" / profile


def evidence_root() -> Path | None:
    """``<repo>/evidence/laptop``: the manifests and small payloads of every artifact the
    laptop book reads, committed to git (``jepa-geometry evidence``); None outside a repo."""
    root = repo_root()
    return root / EVIDENCE_DIR / EVIDENCE_PROFILE if root else None


def note_read(kind: str, name: str, key: str) -> None:
    """Append ``kind/name/key`` to ``$JEPA_GEOMETRY_READ_LOG`` when it is set: the book records
    which artifacts each page read, so the evidence holds exactly those."""
    log = os.environ.get(READ_LOG_ENV)
    if log:
        with open(log, "a") as f:  # one short append per read: atomic on a local file
            f.write(f"{kind}/{name}/{key}\n")


def key_of(spec: dict[str, Any]) -> str:
    """12-hex-digit sha256 of the canonical JSON of ``spec`` (sorted keys)."""
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=_jsonable)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


KEY_SPELLINGS: dict[str, str] = {"arm": "method"}
"""Fields renamed after keys were first written, and the spelling the keys keep."""


def stable_spec(spec: dict[str, Any], added: dict[str, Any] | None = None) -> dict[str, Any]:
    """``spec`` in the form that keeps every key written before it valid.

    A renamed field keeps its first spelling (:data:`KEY_SPELLINGS`: ``arm`` is spelled
    ``method``), and a field added later (``added``: field -> the value every earlier key
    implied) is left out while it has that value, so a run that does not use the new field
    keeps the key it always had.
    """
    added = added or {}
    return {
        KEY_SPELLINGS.get(k, k): v for k, v in spec.items() if not (k in added and v == added[k])
    }


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, tuple | set):
        return list(obj)
    if hasattr(obj, "item"):  # numpy / torch scalars
        return obj.item()
    raise TypeError(f"cannot put {type(obj).__name__} into an artifact key: {obj!r}")


def read_manifest(path: Path) -> dict[str, Any]:
    """A manifest read and checked for its shape: a JSON object whose ``files`` maps each
    payload file's name to its ``size`` (bytes) and ``sha256``. Any other content raises
    :class:`ArtifactError` naming the file (the artifact counts as damaged: its files are
    kept); an absent file raises ``FileNotFoundError``."""
    try:
        man = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ArtifactError(f"corrupt manifest {path}: {e}") from e
    files = man.get("files") if isinstance(man, dict) else None
    if not isinstance(files, dict):
        raise ArtifactError(f"corrupt manifest {path}: not an object with a 'files' object")
    for name, rec in files.items():
        if not (
            isinstance(rec, dict)
            and type(rec.get("size")) is int
            and isinstance(rec.get("sha256"), str)
        ):
            raise ArtifactError(
                f"corrupt manifest {path}: file {name!r} lacks an integer size or a sha256"
            )
    return man


def _entries(folder: Path) -> list[str]:
    """Every file and every symbolic link (to a file or a folder, never followed) under
    ``folder``, relative to it: what a rebuild of the folder would delete."""
    out = []
    for here, dirs, files in os.walk(folder):
        base = Path(here)
        links = [d for d in dirs if (base / d).is_symlink()]  # os.walk lists them as folders
        out += [str((base / f).relative_to(folder)) for f in (*files, *links)]
    return out


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class Artifact:
    """A cache entry: ``data/<kind>/<name>/<key>/``."""

    kind: str
    name: str
    spec: dict[str, Any]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown artifact kind {self.kind!r}; valid: {', '.join(KINDS)}")
        if not self.name or "/" in self.name or self.name.startswith("."):
            raise ValueError(f"bad artifact name {self.name!r}: a plain, non-hidden file name")

    @property
    def key(self) -> str:
        return key_of(self.spec)

    @property
    def write_path(self) -> Path:
        """Where this artifact is (or would be) built: under the writable cache."""
        return data_root() / self.kind / self.name / self.key

    @property
    def path(self) -> Path:
        """Where this artifact is read from: the writable cache if it holds it, else the
        first read-only cache that does (:func:`read_only_roots`), else :attr:`write_path`."""
        if (self.write_path / MANIFEST).is_file():
            return self.write_path
        for root in read_only_roots():
            candidate = root / self.kind / self.name / self.key
            if (candidate / MANIFEST).is_file():
                return candidate
        return self.write_path

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def file(self, filename: str) -> Path:
        return self.path / filename

    def manifest(self) -> dict[str, Any]:
        """The manifest (every read of an artifact goes through here: :func:`note_read`)."""
        try:
            man = read_manifest(self.manifest_path)
        except FileNotFoundError as e:
            raise ArtifactError(
                f"artifact {self.kind}/{self.name}/{self.key} has no manifest"
            ) from e
        note_read(self.kind, self.name, self.key)
        return man

    def verify(self, heavy: bool = False) -> dict[str, Any]:
        """Check every payload file against the manifest's size and sha256; return the manifest.

        A heavy file (:func:`is_heavy`) that is absent passes unless ``heavy`` is set (the
        caller is about to open it); one that is present is always checked.
        """
        man = self.manifest()
        for fname, rec in man.get("files", {}).items():
            f = self.path / fname
            if not f.is_file():
                if not heavy and is_heavy(self.kind, fname):
                    continue
                raise ArtifactError(f"{f} is missing (listed in {self.manifest_path})")
            if f.stat().st_size != rec["size"]:
                raise ArtifactError(
                    f"{f} is truncated or changed: {f.stat().st_size} bytes, "
                    f"manifest says {rec['size']}"
                )
            if sha256_file(f) != rec["sha256"]:
                raise ArtifactError(f"{f} does not match its sha256 in {self.manifest_path}")
        return man

    def heavy_missing(self) -> list[str]:
        """The heavy files the manifest lists that are not here (sorted)."""
        files = self.manifest().get("files", {})
        return sorted(f for f in files if is_heavy(self.kind, f) and not (self.path / f).is_file())

    def light_missing(self) -> list[str]:
        """The files the manifest lists, heavy ones aside, that are not here (sorted): every
        one a reader of the artifact opens."""
        files = self.manifest().get("files", {})
        return sorted(
            f for f in files if not is_heavy(self.kind, f) and not (self.path / f).is_file()
        )

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def foreign_files(self) -> list[str]:
        """Files in the artifact's writable folder that its manifest there does not list
        (sorted, relative). Without a readable manifest every file is foreign: the cache cannot
        tell what it wrote. (A read-only cache is never written, so it is never checked.)"""
        folder = self.write_path
        if not folder.is_dir():
            return []
        try:
            listed = set(read_manifest(folder / MANIFEST)["files"]) | {MANIFEST}
        except (OSError, ArtifactError):
            listed = set()
        return sorted(f for f in _entries(folder) if f not in listed)

    def lock(self) -> FileLock:
        lock_dir = data_root() / ".locks"
        lock_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(lock_dir / f"{self.kind}-{self.name}-{self.key}.lock"))


def provenance() -> dict[str, Any]:
    """Git commit, the versions of the packages that change numbers, and the sha256 of the
    environment lock the run was installed from."""
    pkgs = {}
    for p in ("jepa-geometry", "torch", "numpy", "stable-worldmodel", "mujoco", "gymnasium"):
        try:
            pkgs[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pkgs[p] = None
    return {"git_commit": _git_commit(), "packages": pkgs, "environment_lock": lock_digest()}


def lock_digest() -> str | None:
    """sha256 of the repository's ``requirements.lock`` (the exact environment), if there is one."""
    root = repo_root(Path(__file__).parent) or repo_root()
    lock = root / "requirements.lock" if root else None
    return sha256_file(lock) if lock is not None and lock.is_file() else None


def _git_commit() -> str | None:
    root = repo_root(Path(__file__).parent) or repo_root()
    if root is None:
        return None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (a build's own pools): a
    build stopped for a while (``kill -STOP``, a suspended laptop) keeps its wall time but
    not its CPU time, so the cost model is calibrated on this one."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _finalize(
    art: Artifact, tmp: Path, wall_s: float, extra: dict[str, Any] | None, cpu_s: float
) -> None:
    files = {
        str(p.relative_to(tmp)): {"size": p.stat().st_size, "sha256": sha256_file(p)}
        for p in sorted(tmp.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    if not files:
        raise ArtifactError(f"builder for {art.kind}/{art.name} wrote no file")
    manifest = {
        "kind": art.kind,
        "name": art.name,
        "key": art.key,
        "spec": art.spec,
        "files": files,
        "wall_time_s": round(wall_s, 3),
        "cpu_time_s": round(cpu_s, 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **provenance(),
        **(extra or {}),
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, default=_jsonable))


def get_or_build(
    art: Artifact,
    build: Callable[[Path], dict[str, Any] | None],
    *,
    rebuild: bool = False,
    heavy: bool = False,
    how: str | None = None,
) -> Path:
    """Return ``art.path``, building it first if absent, corrupt, or ``rebuild`` is set.

    ``build(tmpdir)`` writes the payload files into ``tmpdir`` and may return extra manifest
    fields (e.g. training logs). The directory appears under its final name only after the
    builder returned and the manifest is written; a crash leaves the cache as it was.

    A present artifact that passes its check is returned without a lock and without writing
    anything. With ``heavy`` the caller will open the heavy files, so their absence counts as
    a miss (built, or under :func:`cache_only` reported with ``how``, the command that builds
    it); without it an artifact whose heavy files alone are absent is present.
    """
    if art.exists() and not rebuild:
        try:
            art.verify(heavy)
            return art.path
        except ArtifactError as e:
            problem = e
    else:
        problem = None
    if os.environ.get(CACHE_ONLY_ENV) == "1":
        hint = f"; build it with `{how}`" if how else ""
        if problem is None:
            where = art.path.parent
            damaged = "".join(
                f", and {folder} holds files but no {MANIFEST} (damaged: restore it from git or "
                "export it again)"
                for folder in _without_manifest(art)
            )
            raise NotCached(
                f"{art.kind}/{art.name}/{art.key} is not in the cache {where}{damaged}{hint}"
            )
        raise NotCached(f"{art.kind}/{art.name}/{art.key} fails its check: {problem}{hint}")
    with art.lock():
        if art.exists() and not rebuild:  # another process may have built it meanwhile
            try:
                art.verify(heavy)
                return art.path
            except ArtifactError as e:
                warnings.warn(f"rebuilding {art.kind}/{art.name}/{art.key}: {e}", stacklevel=2)
        _refuse_foreign(art)
        target = art.write_path
        made = not target.parent.exists()
        _remove_leftovers(art)
        tmp = _build_dir(target.parent, f"{TMP_PREFIX}{art.key}-")
        try:
            t0, c0 = time.perf_counter(), _cpu_seconds()
            extra = build(tmp)
            _finalize(art, tmp, time.perf_counter() - t0, extra, _cpu_seconds() - c0)
            replace_dir(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
            if made:  # a failed first build leaves no empty <kind>/<name>/ behind
                _remove_if_empty(target.parent)
    note_read(art.kind, art.name, art.key)
    return target


def _build_dir(parent: Path, prefix: str) -> Path:
    """:func:`fresh_dir` in ``parent``, made first: another key's failed build may remove
    ``parent`` between the two (:func:`_remove_if_empty`), so a vanished one is made again."""
    for _ in range(10):
        parent.mkdir(parents=True, exist_ok=True)
        try:
            return fresh_dir(parent, prefix)
        except FileNotFoundError:
            continue
    return fresh_dir(parent, prefix)


def _remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` if it holds nothing (a build that failed before writing anything,
    such as a reader's objective raising in its first step, left an empty
    ``checkpoints/<task>-<arm>/`` that read as a model); a folder with anything in it (a
    resume checkpoint, another key, another builder's temporary folder) stays."""
    with contextlib.suppress(OSError):
        folder.rmdir()  # fails, harmlessly, unless empty


def _without_manifest(art: Artifact) -> list[Path]:
    """The folders of ``art`` in the read-only caches (the evidence tree) that hold files but
    no manifest: a read skips them as absent, so the one line that reports the artifact
    missing names them, and the damage, too."""
    folders = (root / art.kind / art.name / art.key for root in read_only_roots())
    return [f for f in folders if f.is_dir() and not (f / MANIFEST).is_file() and any(f.iterdir())]


def _fresh(parent: Path, prefix: str, make: Callable[[Path], None]) -> Path:
    """``make(parent / (prefix + random))`` for a name nobody holds yet."""
    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(6)}"
        try:
            make(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free name {prefix}* in {parent}")


def fresh_dir(parent: Path, prefix: str) -> Path:
    """A new empty folder ``parent/<prefix><random>`` with the mode the umask gives every new
    folder (``tempfile.mkdtemp`` makes them 0700, which would leave each artifact readable by
    its builder alone, even in a cache a group shares with umask 002)."""
    return _fresh(parent, prefix, lambda p: p.mkdir())


def fresh_file(parent: Path, prefix: str) -> Path:
    """A new empty file ``parent/<prefix><random>`` with the mode the umask gives every new
    file (``tempfile.mkstemp`` makes them 0600), for the same reason as :func:`fresh_dir`."""
    return _fresh(
        parent, prefix, lambda p: os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    )


def replace_dir(tmp: Path, target: Path) -> None:
    """Put the finished folder ``tmp`` at ``target``: an old ``target`` is first renamed to a
    temporary sibling (``.tmp-<name>-old-<pid>``) and removed, so ``target`` never holds a
    mix of the two."""
    if target.exists():
        old = target.with_name(f"{TMP_PREFIX}{target.name}-old-{os.getpid()}")
        os.replace(target, old)
        shutil.rmtree(old)
    os.replace(tmp, target)


@contextlib.contextmanager
def environ(changes: dict[str, str]) -> Iterator[None]:
    """Inside the block the environment variables ``changes`` hold their values (inherited by
    kernels and worker processes started there); afterwards each is as it was, or unset."""
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _refuse_foreign(art: Artifact) -> None:
    """Stop before a rebuild would delete files the cache did not write."""
    foreign = art.foreign_files()
    if not foreign:
        return
    try:
        read_manifest(art.write_path / MANIFEST)
    except (OSError, ArtifactError):
        raise ArtifactError(
            f"{art.write_path} holds files but no valid {MANIFEST} ({', '.join(foreign[:5])}"
            f"{', ...' if len(foreign) > 5 else ''}): the cache did not write them or their "
            "manifest was deleted or damaged; move the folder aside (or delete it) and rerun "
            "to rebuild"
        ) from None
    raise ArtifactError(
        f"{art.write_path} must be rebuilt but holds files its manifest does not list: "
        f"{', '.join(foreign)}; move them out of the folder and rerun"
    )


def _remove_leftovers(art: Artifact) -> None:
    """Delete what a killed build of *this* artifact left (caller holds its lock): its temporary
    build folders and the half-written temporary files of its resume checkpoint."""
    for old in art.write_path.parent.glob(f"{TMP_PREFIX}{art.key}-*"):
        shutil.rmtree(old, ignore_errors=True)
    for old in art.write_path.parent.glob(f".{art.key}.*{TMP_FILE_SUFFIX}*"):
        old.unlink(missing_ok=True)


def load(art: Artifact, heavy: bool = False) -> Path:
    """Return the verified path of an existing artifact, or raise :class:`ArtifactError`;
    with ``heavy`` its heavy files must be here too (:meth:`Artifact.verify`)."""
    if not art.exists():
        raise ArtifactError(
            f"artifact {art.kind}/{art.name}/{art.key} does not exist at {art.path}"
        )
    art.verify(heavy)
    return art.path


MEMO_FILES = ("value.parquet", "value.npz", "value.json")


def memo(name: str, spec: dict[str, Any], compute: Callable[[], Any]) -> Any:
    """A small value derived from heavy artifacts, computed once and cached as the artifact
    ``results/<name>/<key>/``: a page renders it from the evidence tree without the dataset or
    model it came from. ``spec`` names every input (the keys of the artifacts ``compute``
    reads and its parameters). The value is a DataFrame (stored as parquet), a dict of
    numpy arrays (npz; strings as unicode arrays, never pickled) or anything JSON holds.
    """
    import numpy as np
    import pandas as pd

    art = Artifact("results", name, spec)

    def build(tmp: Path) -> None:
        value = compute()
        if isinstance(value, pd.DataFrame):
            value.to_parquet(tmp / MEMO_FILES[0])
        elif (
            isinstance(value, dict)
            and value
            and all(isinstance(v, np.ndarray) for v in value.values())
        ):
            with open(tmp / MEMO_FILES[1], "wb") as f:
                np.savez(f, **value)
        else:  # json keeps a dict's key order (a table's column order)
            (tmp / MEMO_FILES[2]).write_text(json.dumps(value, default=_jsonable))

    path = get_or_build(art, build)
    if (path / MEMO_FILES[0]).is_file():
        return pd.read_parquet(path / MEMO_FILES[0])
    if (path / MEMO_FILES[1]).is_file():
        with np.load(path / MEMO_FILES[1], allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    return json.loads((path / MEMO_FILES[2]).read_text())


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    Used for single files that are rewritten in place (checkpoints during training).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # ".<name>.tmp<random>": ignored by DVC (.dvcignore), and torch.save names its archive
    # records after the stem ".<name>", so a checkpoint's bytes do not depend on the suffix
    tmp = fresh_file(path.parent, f".{path.name}{TMP_FILE_SUFFIX}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


VERIFIED_MAGIC = b"jepa-geometry verified file v1\n"


def write_verified(path: Path, payload: bytes) -> None:
    """Write ``payload`` atomically behind a header carrying its sha256 (see :func:`read_verified`).

    For files the cache trusts outside any manifest, such as a training run's resume checkpoint:
    ``MAGIC + sha256 hex + "\\n" + payload``.
    """
    digest = hashlib.sha256(payload).hexdigest().encode()
    with atomic_path(Path(path)) as tmp:
        tmp.write_bytes(VERIFIED_MAGIC + digest + b"\n" + payload)


def read_verified(path: Path) -> bytes:
    """The payload of a :func:`write_verified` file; :class:`ArtifactError` if it is not one,
    is truncated, or any byte changed since it was written."""
    blob = Path(path).read_bytes()
    head = len(VERIFIED_MAGIC) + 65
    if not blob.startswith(VERIFIED_MAGIC) or len(blob) < head or blob[head - 1 : head] != b"\n":
        raise ArtifactError(f"{path} has no verification header (not written by this version)")
    digest, payload = blob[len(VERIFIED_MAGIC) : head - 1].decode(), blob[head:]
    if hashlib.sha256(payload).hexdigest() != digest:
        raise ArtifactError(f"{path} does not match its sha256: it is truncated or corrupted")
    return payload


def set_aside(path: Path, reason: str) -> Path:
    """Rename a file the cache no longer trusts to ``<name>.corrupt-<time>`` (never delete it)
    and warn in one line naming both; returns the new path."""
    path = Path(path)
    new = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    os.replace(path, new)
    warnings.warn(f"{reason}: set {path} aside as {new.name}", stacklevel=3)
    return new
