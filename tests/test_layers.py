"""The package's architecture: imports point only downwards through jepa_geometry.layers.LAYERS."""

from pathlib import Path

import pytest

import jepa_geometry
import jepa_geometry.layers
from jepa_geometry.layers import LAYERS, import_violations, layer_of

PACKAGE = Path(jepa_geometry.__file__).parent


def test_every_module_is_in_a_layer_and_no_import_points_up_or_cycles():
    assert import_violations(PACKAGE) == []


def test_every_subpackage_folder_is_named_in_the_layers():
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    named = {n for layer in LAYERS for n in layer}
    assert folders <= named


def test_the_test_folders_mirror_the_subpackages():
    tests = Path(__file__).parent
    folders = {p.name for p in tests.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders <= subpackages, f"test folders without a subpackage: {folders - subpackages}"


def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "jepa_geometry"
    for rel, text in {"__init__.py": "", **files}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


def test_an_upward_import_is_reported(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "envs/__init__.py": "from jepa_geometry.study.cells import plan_study\n",
            "study/__init__.py": "",
            "study/cells.py": "plan_study = 1\n",
        },
    )
    assert import_violations(pkg) == [
        "jepa_geometry.envs imports jepa_geometry.study.cells from a higher layer"
    ]


def test_an_import_inside_a_function_is_reported(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "envs/__init__.py": "",
            "envs/dataset.py": "x = 1\n",
            "wm/__init__.py": "",
            "wm/training.py": "def f():\n    from jepa_geometry.envs import dataset\n",
        },
    )
    assert import_violations(pkg) == [
        "jepa_geometry.wm.training imports jepa_geometry.envs inside a function",
        "jepa_geometry.wm.training imports jepa_geometry.envs.dataset inside a function",
    ]


def test_a_cycle_within_one_layer_is_reported(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "analysis/__init__.py": "",
            "analysis/probes.py": "from jepa_geometry.analysis import ranking\n",
            "analysis/ranking.py": "from . import probes\n",
        },
    )
    assert import_violations(pkg) == [
        "import cycle: jepa_geometry.analysis.probes -> jepa_geometry.analysis.ranking"
    ]


def test_a_cycle_through_a_package_init_is_reported(tmp_path):
    # importing study.pages.shared runs study/pages/__init__.py first, which imports
    # pages.gate, which imports decisions.gate before decisions.gate has finished: Python's
    # "partially initialized module" error, with no module-to-module cycle in the imports
    pkg = _write(
        tmp_path,
        {
            "study/__init__.py": "",
            "study/pages/__init__.py": "from jepa_geometry.study.pages import gate, shared\n",
            "study/pages/shared.py": "x = 1\n",
            "study/pages/gate.py": "from jepa_geometry.study.decisions.gate import rule\n",
            "study/decisions/__init__.py": "",
            "study/decisions/gate.py": "from jepa_geometry.study.pages.shared import x\nrule = x\n",
        },
    )
    assert import_violations(pkg) == [
        "import cycle: jepa_geometry.study.decisions.gate -> jepa_geometry.study.pages"
        " -> jepa_geometry.study.pages.gate"
    ]
    # a package's own __init__ importing its submodules is not a cycle
    ok = _write(
        tmp_path / "ok",
        {
            "study/__init__.py": "",
            "study/pages/__init__.py": "from jepa_geometry.study.pages import shared\n",
            "study/pages/shared.py": "from jepa_geometry.study.pages.helper import x\n",
            "study/pages/helper.py": "x = 1\n",
        },
    )
    assert import_violations(ok) == []


def test_layer_of_names_the_valid_layers_or_refuses():
    assert layer_of("jepa_geometry.profiles") == 0
    assert layer_of("jepa_geometry.study.cells") > layer_of("jepa_geometry.planning.protocol")
    with pytest.raises(ValueError, match="no layer"):
        layer_of("jepa_geometry.nowhere")


def test_the_package_root_exports_the_papers_names():
    for name in (
        "sigreg",
        "LambdaReg",
        "scale_loss",
        "AuxHead",
        "WorldModel",
        "Planner",
        "metric_leverage",
        "pca",
        "plan_study",
        "paper_claims",
    ):
        assert name in jepa_geometry.__all__
    for name in jepa_geometry.__all__:
        obj = getattr(jepa_geometry, name)
        assert getattr(obj, "__name__", name) == name or not callable(obj)


def test_the_layers_follow_the_data_flow():
    assert [layer[0] for layer in LAYERS] == [
        "profiles",
        "envs",
        "wm",
        "planning",
        "analysis",
        "theory",
        "study",
        "cluster",
        "verdict",
        "extensions",
        "book",
        "cli",
    ]
    assert layer_of("jepa_geometry.study.load") < layer_of("jepa_geometry.verdict.across")
    assert layer_of("jepa_geometry.verdict.rule") < layer_of("jepa_geometry.book.tables.shared")


def test_the_longest_name_decides_a_module_s_layer(monkeypatch):
    monkeypatch.setattr(jepa_geometry.layers, "LAYERS", (("study",), ("verdict",), ("study.x",)))
    assert layer_of("jepa_geometry.study.cells") == 0
    assert layer_of("jepa_geometry.study.x.y") == 2
