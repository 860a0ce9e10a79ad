"""The package's layers, lowest first: a module may import only from its own layer or below.

The folders follow the data flow (tasks and data -> world model -> planning -> measurements
-> theory -> a task's study -> the grid on a job engine -> the verdict -> the extensions ->
the book -> the command line); ``tests/test_layers.py`` fails when an import points upwards or
forms a cycle, so the architecture stays what ``ls`` shows. Names are dotted module prefixes
below ``jepa_geometry``.
"""

from __future__ import annotations

import ast
from pathlib import Path

LAYERS: tuple[tuple[str, ...], ...] = (
    ("profiles", "presets", "artifacts", "stats", "jobs", "layers"),  # foundations
    ("envs",),  # the five tasks on stable-worldmodel, datasets
    ("wm",),  # the world model, the loss terms, arms, training
    ("planning",),  # latent goal cost, solvers, the goal-reaching protocol
    ("analysis",),  # probes, rank channels, cost landscapes, per-model measurements
    ("theory",),  # closed forms of both papers, the 2-D toy
    ("study",),  # a task's study: spec, levers, cells, build, job calls, decisions, regression
    ("cluster",),  # units, estimates, submission and the run loop of the grid on submitit
    ("verdict",),  # the verdict rule, the papers' numbers, every claim record, their evaluation
    ("extensions",),  # beyond one task's study: the κ sweep, the scaling study, your objective
    ("book",),  # chapter pipeline, papermill I/O, page tables and plots
    ("cli",),  # the command line
)


def layer_of(module: str) -> int:
    """The layer index of ``jepa_geometry.<module>`` (dotted); ValueError if it has none.

    The longest name that holds the module decides, so a module could sit in another layer
    than its package (none does: every entry of :data:`LAYERS` is a top-level name)."""
    rel = module.removeprefix("jepa_geometry.")
    found = [
        (len(n), i)
        for i, names in enumerate(LAYERS)
        for n in names
        if rel == n or rel.startswith(n + ".")
    ]
    if not found:
        raise ValueError(f"module {module!r} is in no layer of jepa_geometry.layers.LAYERS")
    return max(found)[1]


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The absolute module names an ``ImportFrom`` node imports (a name may be a submodule)."""
    if node.level:
        parts = module.split(".")
        base = parts if is_package else parts[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    return [target, *(f"{target}.{a.name}" for a in node.names)]


def imports_of(path: Path, module: str) -> list[tuple[str, bool]]:
    """``(imported jepa_geometry module, at module level?)`` for every import in a source file.

    ``from jepa_geometry.x import y`` yields ``jepa_geometry.x`` and, when ``y`` is a module,
    ``jepa_geometry.x.y``; imports under ``if TYPE_CHECKING:`` count like any other.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    top_level = {id(n) for n in tree.body}
    for n in tree.body:  # a module-level `if` / `try` block is still module level
        if isinstance(n, ast.If | ast.Try):
            top_level |= {id(c) for c in ast.walk(n)}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = _resolve(module, is_package, node)
        else:
            continue
        for name in names:
            if name == "jepa_geometry" or name.startswith("jepa_geometry."):
                found.append((name, id(node) in top_level))
    return found


def import_violations(package_dir: Path) -> list[str]:
    """Every breach of the layering in a package tree, one line each (empty: none).

    * an import of a module in a higher layer than the importer's;
    * a ``jepa_geometry`` import inside a function (imports belong at the top, where they show
      the real dependencies; within one subpackage a lazy import is allowed);
    * a cycle between modules (importing ``a.b.c`` counts as importing the package ``a.b``
      too, since its ``__init__`` runs first).

    The package root ``__init__.py`` is exempt: it re-exports names lazily and imports nothing.
    """
    package_dir = Path(package_dir)
    modules = {
        ".".join(("jepa_geometry", *p.relative_to(package_dir).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): p
        for p in sorted(package_dir.rglob("*.py"))
        if "__pycache__" not in p.parts
    }
    problems: list[str] = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        if mod == "jepa_geometry":
            continue
        src_layer = layer_of(mod)
        for target, at_top in imports_of(path, mod):
            if target not in modules or target == "jepa_geometry" or target == mod:
                continue
            if layer_of(target) > src_layer:
                problems.append(f"{mod} imports {target} from a higher layer")
            same_package = target.rsplit(".", 1)[0] == mod.rsplit(".", 1)[0]
            if not at_top and not same_package:
                problems.append(f"{mod} imports {target} inside a function")
            graph[mod].add(target)
            # importing a.b.c first runs the __init__ of a.b: an edge to every package above
            # the target that does not also hold the importer
            parts = target.split(".")
            for i in range(2, len(parts)):
                package = ".".join(parts[:i])
                if package in modules and not (mod + ".").startswith(package + "."):
                    graph[mod].add(package)
    # cycles: depth-first search with colours; each cycle reported once by its members
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: set[tuple[str, ...]] = set()

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.add(tuple(sorted(stack[stack.index(t) :])))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    problems += [f"import cycle: {' -> '.join(c)}" for c in sorted(cycles)]
    return problems
