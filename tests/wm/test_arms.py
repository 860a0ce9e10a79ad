"""Arms (jepa_geometry.wm.arms): canonical names, sums, the papers' default weights per task,
overrides and ΛReg's variants validated, DINO-WM an arm of its own."""

import pytest

from jepa_geometry.wm.arms import arm_name, arm_weights, check_arms, parse_arm


def test_arm_names_are_canonical_and_weights_are_the_papers_per_task():
    assert parse_arm("anisowm+scale") == ("scale", "anisowm")
    assert parse_arm("lewm") == ("lewm",) and arm_name("lewm+aux") == "aux"
    with pytest.raises(ValueError, match=r"unknown arm component\(s\) \['scal'\].*valid: lewm"):
        parse_arm("scal+anisowm")
    w = arm_weights("scale", "reacher")
    assert (w.sigreg, w.scale, w.aux, w.kappa) == (0.09, 0.15, None, None)
    assert arm_weights("aux", "pusht").aux == 0.3
    assert arm_weights("scale+anisowm", "tworoom").as_dict() == {
        "sigreg": 0.09,
        "scale": 0.1,
        "kappa": 2.0,
    }
    assert arm_weights("anisowm", "cube", overrides={"kappa": 4}).kappa == 4.0
    with pytest.raises(ValueError, match="has no 'aux' term"):
        arm_weights("scale", "pusht", overrides={"aux": 0.1})
    with pytest.raises(ValueError, match="unknown weight 'lam'"):
        arm_weights("scale", "pusht", overrides={"lam": 0.1})
    with pytest.raises(ValueError, match="kappa must be >= 1"):
        arm_weights("anisowm", "pusht", overrides={"kappa": 0.5})
    with pytest.raises(ValueError, match="unknown task 'maze'"):
        arm_weights("lewm", "maze")


def test_lambdareg_variants_are_validated_weights_of_lambdareg_arms_only():
    w = arm_weights(
        "anisowm", "tworoom", 0.09, {"bound": "tanh", "alpha_lr": 30, "alpha_warmup": 100}
    )
    assert (w.bound, w.alpha_lr, w.alpha_warmup, w.kappa) == ("tanh", 30.0, 100.0, 2.0)
    published = arm_weights("scale+anisowm", "tworoom", 0.09)
    assert (published.bound, published.alpha_lr, published.alpha_warmup) == (None, None, None)
    assert "bound" not in published.as_dict()  # unset variants leave the artifact key alone
    with pytest.raises(ValueError, match="arm 'lewm' has no 'bound' term"):
        arm_weights("lewm", "tworoom", 0.09, {"bound": "tanh"})
    with pytest.raises(ValueError, match="bound must be one of clamp, tanh, project, got 'soft'"):
        arm_weights("anisowm", "tworoom", 0.09, {"bound": "soft"})
    with pytest.raises(ValueError, match="alpha_lr must be a number > 0"):
        arm_weights("anisowm", "tworoom", 0.09, {"alpha_lr": 0})
    with pytest.raises(ValueError, match="whole number of steps"):
        arm_weights("anisowm", "tworoom", 0.09, {"alpha_warmup": 2.5})


def test_dinowm_is_an_arm_of_its_own():
    assert parse_arm("dinowm") == ("dinowm",) and check_arms(["lewm", "dinowm"])
    assert arm_weights("dinowm", "pusht").as_dict() == {"sigreg": 0.0}
    with pytest.raises(ValueError, match="sums with no arm"):
        parse_arm("scale+dinowm")
    with pytest.raises(ValueError, match="no weights to override"):
        arm_weights("dinowm", "tworoom", overrides={"scale": 1.0})
