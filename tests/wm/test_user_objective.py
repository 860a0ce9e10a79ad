"""A loss term of the reader's own, read from a file: summed with the arm's terms as it returns,
its file's sha256 in every key it touches (the built-in arms' keys without any new field),
trained at smoke through the command line, and checked by a grid job against the hash it was
listed with. Bad files: ``tests/test_faults_objective.py``."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import torch

from jepa_geometry import cluster
from jepa_geometry.analysis.measurements import GeometrySettings, geometry_artifact
from jepa_geometry.cli import main
from jepa_geometry.envs import TASKS, task_class
from jepa_geometry.planning.evaluator import PlanningCell
from jepa_geometry.profiles import load_profile
from jepa_geometry.wm.arms import (
    ARMS,
    DINOWM,
    arm_label,
    arm_name,
    objective_file,
    parse_arm,
)
from jepa_geometry.wm.checkpoint import LOG_FILE
from jepa_geometry.wm.losses import sigreg
from jepa_geometry.wm.training import world_model_artifact
from jepa_geometry.wm.user_objective import (
    ObjectiveFileError,
    call_term,
    file_sha256,
    load_term,
)
from tests.conftest import REPO
from tests.wm.test_training import make_run

SMOKE = load_profile("smoke")
EXAMPLE = REPO / "examples" / "objectives" / "variance_match.py"
SPREAD = """
import torch

def term(z, z_hat, q, step):
    value = {weight} * (z.pow(2).mean() - 1.0).abs()
    return value, {{"mean_sq": z.pow(2).mean().detach()}}
"""


def write_term(folder: Path, weight: float, name: str = "spread") -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(SPREAD.format(weight=weight)))
    return path


def test_the_term_is_added_to_lewm_s_loss_as_it_returns(tmp_path):
    """The loss of ``lewm+file`` is LeWM's prediction + λ_sig SIGReg + the file's value,
    each recomputed here from the same encoder outputs, and the diagnostics come back under
    ``objective.<name>``."""
    path = write_term(tmp_path, 0.7)
    prof, model, obj, src = make_run(f"lewm+{path}")
    batch = next(src(0))
    model.train()
    terms = obj(model, batch, torch.Generator().manual_seed(3), check=True)
    z = model.encode(batch["pixels"])
    z_hat = model.predict(z[:, :-1], batch["actions"][:, :-1])
    pred = ((z_hat - z[:, 1:]) ** 2).mean()
    reg = sigreg(
        z.transpose(0, 1),
        prof.train.sigreg_projections,
        generator=torch.Generator().manual_seed(3),
    )
    mine = 0.7 * (z.pow(2).mean() - 1.0).abs()
    assert terms["objective"].item() == pytest.approx(mine.item(), rel=1e-5)
    assert terms["objective.mean_sq"].item() == pytest.approx(z.pow(2).mean().item(), rel=1e-5)
    want = pred + obj.weights.sigreg * reg + mine
    assert terms["loss"].item() == pytest.approx(want.item(), rel=1e-5)
    terms["loss"].backward()  # the term's gradient reaches the encoder
    assert all(p.grad is not None for p in model.encoder.parameters() if p.requires_grad)


@pytest.mark.parametrize(
    ("body", "ok"),
    [
        ("z.mean()", True),
        ("z_hat.pow(2).mean()", True),  # a gradient to z_hat alone
        ("0 * z.sum()", True),  # off at this step: zero, with a gradient
        ("z.mean().detach()", False),
        ("torch.tensor(0.5)", False),
        ("z.detach().mean() + z_hat.detach().mean()", False),
    ],
)
def test_the_first_step_checks_that_the_term_reaches_z_or_z_hat(tmp_path, body, ok):
    """A value without a gradient to z or z_hat stops at the first step (``check``) in one
    line; later steps do not check it (no backward of their own), and the graph is kept
    for the step's backward."""
    path = tmp_path / "grad.py"
    path.write_text(f"import torch\n\ndef term(z, z_hat, q, step):\n    return {body}\n")
    user = load_term(path)
    z = torch.randn(2, 3, 4, requires_grad=True) * 1.0
    z_hat = torch.randn(2, 2, 4, requires_grad=True) * 1.0
    q = torch.zeros(2, 3, 1)
    if ok:
        value, _ = call_term(user, z, z_hat, q, 0, check=True)
        (value + z.sum()).backward()  # the graph survives the check
    else:
        with pytest.raises(ObjectiveFileError, match=f"{path}: term.*no gradient to z or z_hat"):
            call_term(user, z, z_hat, q, 0, check=True)
        call_term(user, z, z_hat, q, 5, check=False)  # later steps: as fast as before


def test_an_arm_spells_its_file_canonically_and_names_its_model_by_the_stem(tmp_path):
    path = write_term(tmp_path, 0.1)
    assert parse_arm(f"lewm+{path}") == (str(path),)  # lewm is the base, as in every sum
    assert arm_name(f"{path}+anisowm+scale") == f"scale+anisowm+{path}"
    assert arm_name(f"lewm+{REPO}/examples/objectives/./variance_match.py") == (
        "examples/objectives/variance_match.py"  # inside the repository: relative to it
    )
    assert arm_label(f"scale+{path}") == "scale+spread"
    assert objective_file("scale+aux") is None
    with pytest.raises(ValueError, match="at most one objective file"):
        parse_arm(f"lewm+{path}+{EXAMPLE}")
    with pytest.raises(ValueError, match="sums with no arm"):
        parse_arm(f"dinowm+{path}")
    with pytest.raises(ValueError, match="not one of lewm"):
        parse_arm(f"lewm+{write_term(tmp_path, 0.1, name='scale')}")


def _keys(arm: str) -> dict[str, str]:
    """The keys of every kind of artifact a model of ``arm`` touches: the model, a planning
    cell and its geometry."""
    cell = PlanningCell("tworoom", arm, 0, SMOKE)
    geometry = geometry_artifact("tworoom", arm, 0, SMOKE, GeometrySettings.of(SMOKE))
    return {
        "model": world_model_artifact("tworoom", arm, 0, SMOKE).key,
        "plan": cell.plan()[3].key,
        "geometry": geometry.key,
    }


def test_an_edited_file_changes_every_key_it_touches_and_a_moved_one_none(tmp_path):
    path = write_term(tmp_path, 0.1)
    arm = f"lewm+{path}"
    before = _keys(arm)
    art = world_model_artifact("tworoom", arm, 0, SMOKE)
    assert art.name == "tworoom-spread" and art.spec["method"] == "spread"
    assert art.spec["objective"] == {"file": "spread.py", "sha256": file_sha256(path)}
    write_term(tmp_path, 0.2)  # one weight changed
    after = _keys(arm)
    assert all(before[k] != after[k] for k in before), (before, after)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(path, moved / path.name)
    assert _keys(f"lewm+{moved / path.name}") == after  # the content, not the place
    assert _keys("lewm")["model"] != after["model"]


@pytest.mark.parametrize("task", TASKS)
def test_the_built_in_arms_keys_have_no_new_field(task):
    """Objective files must not move a key the laptop build has written: a built-in arm's
    model key has no ``objective`` field and spells the arm as before (``arm_name``), and a
    planning cell's key records the arm as given."""
    arms = [*ARMS, "scale+anisowm", "anisowm+scale", "scale+aux"]
    arms += ["scale-halfq"] if task_class(task).half_q is not None else [DINOWM]
    for arm in arms:
        art = world_model_artifact(task, arm, 0, SMOKE)
        assert "objective" not in art.spec and art.spec["method"] == arm_name(arm)
        assert art.name == f"{task}-{arm_name(arm)}"
    cell = PlanningCell(task, "anisowm+scale", 0, SMOKE)
    assert cell.plan()[3].spec["method"] == "anisowm+scale"


@pytest.mark.slow
def test_a_term_trains_at_smoke_through_the_command_line(
    smoke_datasets, data_root, tmp_path, monkeypatch, capsys
):
    """``train --arm lewm+<stem> --objective <file>``: the model is named by the stem, its
    log carries the term and its diagnostics, and an edited file trains a second model beside
    the first."""
    shutil.copytree(smoke_datasets / "tworoom", data_root / "datasets" / "tworoom")
    monkeypatch.chdir(tmp_path)  # the file is given relative to the user's folder
    path = write_term(tmp_path, 0.1)
    argv = ["train", "--task", "tworoom", "--arm", "lewm+spread", "--objective", path.name]
    argv += ["--profile", "smoke", "--set", "train.steps=4", "--set", "train.log_every=2"]
    assert main(argv) == 0, capsys.readouterr().err
    folder = data_root / "checkpoints" / "tworoom-spread"
    (first,) = folder.iterdir()
    log = json.loads((first / LOG_FILE).read_text())
    assert [r["step"] for r in log] == [2, 4]
    assert all(r["objective"] > 0 and "objective.mean_sq" in r for r in log)
    write_term(tmp_path, 0.2)
    assert main(argv) == 0, capsys.readouterr().err
    assert len([p for p in folder.iterdir() if not p.name.startswith(".")]) == 2


def test_a_grid_job_reads_the_file_and_checks_it_against_its_unit(tmp_path, capsys):
    """The grid's units carry the file by its path (in the arm) and its sha256; a job whose
    file changed after the grid listed it stops in one line instead of training, planning or
    measuring another objective's model. The dry run lists the arm's units."""
    path = write_term(tmp_path, 0.1)
    arm = arm_name(f"lewm+{path}")
    train = cluster.train_unit("tworoom", arm, 0, SMOKE)
    measure = cluster.measure_unit("tworoom", arm, 0, SMOKE)
    (plan,) = cluster.plan_units("plan", "tworoom", [PlanningCell("tworoom", arm, 0, SMOKE)])
    digest = file_sha256(path)
    assert train.args[1] == arm and train.args[-1] == digest
    assert measure.args[-1] == digest and plan.args[-1] == digest
    assert cluster.train_unit("tworoom", "lewm", 0, SMOKE).args[-1] is None  # no weights
    write_term(tmp_path, 0.3)
    for unit in (train, measure, plan):
        with pytest.raises(ObjectiveFileError, match=f"{path} changed while in use"):
            unit.call(*unit.args)
    argv = ["grid", "--tasks", "tworoom", "--arms", f"lewm,lewm+{path}", "--dry-run", "--units"]
    assert main([*argv, "--profile", "smoke"]) == 0
    out = capsys.readouterr().out
    assert f"train tworoom {arm} seed 0" in out and f"measure tworoom {arm} seed 0" in out
