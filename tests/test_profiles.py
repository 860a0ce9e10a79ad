import pytest

from jepa_geometry.profiles import PROFILES, ProfileError, load_profile


@pytest.mark.parametrize("name", PROFILES)
def test_shipped_profiles_validate(name):
    prof = load_profile(name)
    assert prof.name == name
    tiers = prof.plan.tiers
    assert list(tiers) == ["T1", "T2", "T3", "T4", "T5"]
    # Budget tiers are strictly ordered by compute (samples x iterations).
    compute = [s * i for s, i in tiers.values()]
    assert compute == sorted(compute, reverse=True) and len(set(compute)) == 5
    assert prof.data.episodes > prof.data.heldout_episodes > 0


def test_paper_profile_matches_lewm():
    p = load_profile("paper")
    assert (p.data.image_size, p.model.patch_size, p.model.embed_dim) == (224, 14, 192)
    assert (p.model.vit_width, p.model.vit_depth, p.model.vit_heads) == (192, 12, 3)
    assert (p.model.predictor_depth, p.model.predictor_heads) == (6, 16)
    assert p.plan.tiers == {
        "T1": (300, 30),
        "T2": (150, 15),
        "T3": (50, 10),
        "T4": (20, 5),
        "T5": (10, 3),
    }
    assert (p.train.lr, p.train.batch_size, p.train.sigreg_weight) == (5e-5, 128, 0.09)


def test_laptop_is_default_and_fits_the_constraints():
    from jepa_geometry.profiles import DEFAULT_PROFILE

    assert DEFAULT_PROFILE == "laptop"
    p = load_profile()
    assert p.model.embed_dim >= 64 and p.data.image_size <= 64


def test_unknown_profile_names_valid_choices():
    with pytest.raises(ProfileError, match=r"'nosuch'.*smoke, laptop, paper"):
        load_profile("nosuch")


def test_override_applies_and_is_typed():
    assert load_profile("smoke", {"train.steps": 7}).train.steps == 7
    assert load_profile("smoke", {"train.lr": 1}).train.lr == 1.0  # int accepted as float
    with pytest.raises(ProfileError, match=r"'stepz'.*valid: .*steps"):
        load_profile("smoke", {"train.stepz": 7})
    with pytest.raises(ProfileError, match=r"train\.steps: expected an integer, got 'x'"):
        load_profile("smoke", {"train.steps": "x"})
    with pytest.raises(ProfileError, match="expected an integer"):
        load_profile("smoke", {"train.steps": True})
    with pytest.raises(ProfileError, match="expected 2 items"):
        load_profile("smoke", {"plan.tiers": {"T1": [1, 2, 3]}})
    assert load_profile("smoke", {"train.precision": "fp32"}).train.precision == "fp32"
    with pytest.raises(
        ProfileError, match=r"train\.precision must be one of bf16, fp32, got 'fp16'"
    ):
        load_profile("smoke", {"train.precision": "fp16"})


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("train.lr", float("nan"), r"train\.lr must be > 0 and finite, got nan"),
        ("train.lr", float("inf"), r"train\.lr must be > 0 and finite, got inf"),
        ("theory.toy_noise_levels", [0.1, float("nan")], "toy_noise_levels must be > 0 and finite"),
        ("seeds.train", [0, 2**32], r"seeds\.train must be >= 0 and <= 4,294,967,295, got"),
        (
            "seeds.train",
            [1, 0, 1],
            r"seeds\.train names independent units, each once; got \[1, 0, 1\]",
        ),
    ],
)
def test_non_finite_too_large_and_repeated_values_are_refused(key, value, message):
    with pytest.raises(ProfileError, match=message):
        load_profile("smoke", {key: value})
    assert load_profile("smoke", {"seeds.train": [2**32 - 1, 0]}).seeds.train == (2**32 - 1, 0)


def test_profile_is_frozen_and_serialisable():
    p = load_profile("smoke")
    with pytest.raises(AttributeError):
        p.train.steps = 3  # type: ignore[misc]
    d = p.to_dict()
    assert d["plan"]["tiers"]["T1"] == [30, 3]
    assert p.section("train") == d["train"]
    with pytest.raises(ProfileError, match="unknown profile section"):
        p.section("nosuch")


@pytest.mark.parametrize("name", PROFILES)
def test_per_task_episode_counts_name_known_tasks(name):
    from jepa_geometry.envs import TASKS

    per_task = load_profile(name).data.task_episodes
    assert set(per_task) <= set(TASKS)
    assert all(train >= 1 and held >= 1 for train, held in per_task.values())
