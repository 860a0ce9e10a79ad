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
    with pytest.raises(ProfileError, match=r"train\.steps must be a valid integer, got 'x'"):
        load_profile("smoke", {"train.steps": "x"})
    with pytest.raises(ProfileError, match=r"train\.steps must be a valid integer, got True"):
        load_profile("smoke", {"train.steps": True})
    with pytest.raises(ProfileError, match=r"plan\.tiers\.T1 .*at most 2 items.*got \[1, 2, 3\]"):
        load_profile("smoke", {"plan.tiers": {"T1": [1, 2, 3]}})
    assert load_profile("smoke", {"train.precision": "fp32"}).train.precision == "fp32"
    with pytest.raises(
        ProfileError, match=r"train\.precision must be one of bf16, fp32, got 'fp16'"
    ):
        load_profile("smoke", {"train.precision": "fp16"})


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("train.lr", float("nan"), r"train\.lr must be a finite number, got nan"),
        ("train.lr", float("inf"), r"train\.lr must be a finite number, got inf"),
        (
            "theory.toy_noise_levels",
            [0.1, float("nan")],
            r"toy_noise_levels\[1\] must be a finite number, got nan",
        ),
        (
            "seeds.train",
            [0, 2**32],
            r"seeds\.train\[1\] must be less than or equal to 4294967295, got 4294967296",
        ),
        (
            "seeds.train",
            [1, 0, 1],
            r"seeds\.train names independent units, each once, got \[1, 0, 1\]",
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
    from jepa_geometry.envs import TASKS, task_class

    assert load_profile(name).data.task_episodes == {}  # a task's counts are the task's
    for task in TASKS:
        counts = task_class(task).episodes
        assert set(counts) <= set(PROFILES)
        assert all(train >= 1 and held >= 1 for train, held in counts.values())


def _with_stray_key() -> dict:
    return {"train": {**load_profile("smoke").section("train"), "stepz": 1}}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"train": {"steps": 1}}, r"missing key train\.batch_size"),
        (_with_stray_key(), r"unknown key 'train\.stepz'; valid: steps, batch_size, lr, "),
        ({"train": 3}, r"train must be a dictionary or an instance of TrainSettings, got 3"),
        ({"model.encoder": "mlp"}, r"model\.encoder must be one of cnn, vit, got 'mlp'"),
        ({"cluster.device": "tpu"}, r"cluster\.device must be one of cpu, cuda, got 'tpu'"),
        (
            {"cluster.train": {"gpus": 0}},
            r"cluster\.train must give gpus, cpus, mem_gb, hours \(hours > 0\), got \{'gpus': 0\}",
        ),
        (
            {"data.task_episodes": {"cube": [0, 1]}},
            r"data\.task_episodes\.cube\[0\] must be greater than or equal to 1, got 0",
        ),
        ({"ladder.max_factor": float("nan")}, r"ladder\.max_factor must be greater than or"),
        ({"train.lr": "1e-3"}, r"train\.lr must be a valid number, got '1e-3'"),
        ({"seeds.train": []}, r"seeds\.train .*at least 1 item.*got \[\]"),
    ],
)
def test_every_fault_of_a_tree_is_one_line_naming_key_value_and_what_is_valid(overrides, message):
    with pytest.raises(ProfileError, match=rf"^profile 'smoke': {message}") as caught:
        load_profile("smoke", overrides)
    assert "\n" not in str(caught.value)


def test_infinity_is_a_setting_only_where_a_type_says_so():
    assert load_profile("smoke", {"ladder.max_factor": float("inf")}).ladder.max_factor == float(
        "inf"
    )
    with pytest.raises(ProfileError, match=r"train\.sigreg_weight must be a finite number"):
        load_profile("smoke", {"train.sigreg_weight": float("inf")})
