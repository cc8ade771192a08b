import json

import pytest

from electra_tf.config import ConfigError, ElectraConfig, list_recipes, load_recipe


def test_shipped_recipes_have_the_papers_sizes():
    assert set(list_recipes()) >= {"tiny", "small", "base", "large"}
    small, base, large = (load_recipe(n) for n in ("small", "base", "large"))
    rows = [
        (small, 12, 256, 128, 4, 1024, 0.15, 5e-4, 128, 1_000_000),
        (base, 12, 768, 768, 12, 3072, 0.15, 2e-4, 256, 766_000),
        (large, 24, 1024, 1024, 16, 4096, 0.25, 2e-4, 2048, 400_000),
    ]
    for config, layers, hidden, emb, heads, ffn, rate, lr, batch, steps in rows:
        m = config.model
        assert (m.num_layers, m.hidden_dim, m.embedding_dim, m.num_heads) == (
            layers,
            hidden,
            emb,
            heads,
        )
        assert m.intermediate_dim == ffn and m.vocabulary_size == 30522
        assert m.layer_norm_epsilon == 1e-12 and m.initializer_range == 0.02 and m.dropout == 0.1
        assert config.objective.mask_rate == rate
        assert (config.train.learning_rate, config.train.batch_size) == (lr, batch)
        assert config.train.num_steps == steps and config.train.warmup_steps == 10_000
        assert config.objective.discriminator_weight == 50.0 and config.train.adam_epsilon == 1e-6


def test_generator_sizes_follow_the_reference_rule():
    small = load_recipe("small").model.generator()
    assert (small.hidden_dim, small.num_heads, small.intermediate_dim, small.num_layers) == (
        64,
        1,
        256,
        12,
    )
    base = load_recipe("base").model.generator()
    assert (base.hidden_dim, base.num_heads, base.intermediate_dim) == (256, 4, 1024)
    large = load_recipe("large").model.generator()
    assert (large.hidden_dim, large.num_heads, large.intermediate_dim) == (256, 4, 1024)
    same = load_recipe("small").override("model.generator_size_fraction=1.0").model.generator()
    assert same == load_recipe("small").model.discriminator()


def test_num_predictions_is_int_of_rate_plus_half_percent():
    assert load_recipe("small").num_predictions == 19  # int(0.155 * 128)
    assert load_recipe("large").override("data.sequence_length=512").num_predictions == 130
    fixed = load_recipe("small").override("objective.max_predictions_per_seq=7")
    assert fixed.num_predictions == 7


def test_override_parses_by_field_type_and_round_trips():
    config = load_recipe("tiny").override(
        "train.learning_rate=1e-4",
        "train.num_steps=1_000",
        "train.bias_correction=false",
        "model.weight_tying=none",
        "train.num_steps=2e3",
    )
    assert config.train.learning_rate == 1e-4 and config.train.num_steps == 2000
    assert config.train.bias_correction is False and config.model.weight_tying == "none"
    assert ElectraConfig.from_json(config.to_json()) == config
    assert json.loads(config.to_json())["train"]["learning_rate"] == 1e-4


def test_unknown_keys_and_bad_types_name_the_key():
    config = load_recipe("tiny")
    with pytest.raises(ConfigError, match="train.learning_rat'"):
        config.override("train.learning_rat=1")
    with pytest.raises(ConfigError, match="no section 'trian'"):
        config.override("trian.learning_rate=1")
    with pytest.raises(ConfigError, match="train.num_steps expects int, got 'ten'"):
        config.override("train.num_steps=ten")
    with pytest.raises(ConfigError, match="train.num_steps expects int"):
        config.override("train.num_steps=1.5")
    with pytest.raises(ConfigError, match="section.key=value"):
        config.override("learning_rate")
    with pytest.raises(ConfigError, match="model.hidden_dim expects int"):
        ElectraConfig.from_dict({"model": {"hidden_dim": "big"}})
    with pytest.raises(ConfigError, match="unknown config key 'model.size'"):
        ElectraConfig.from_dict({"model": {"size": 3}})


def test_values_are_validated_with_one_sentence():
    config = load_recipe("tiny")
    with pytest.raises(ConfigError, match="divisible by model.num_heads"):
        config.override("model.num_heads=3")
    with pytest.raises(ConfigError, match="weight_tying = 'all' needs"):
        config.override("model.weight_tying=all")
    with pytest.raises(ConfigError, match="exceeds model.max_sequence_length"):
        config.override("data.sequence_length=256")
    with pytest.raises(ConfigError, match="objective.sampler must be one of inverse_cdf, gumbel"):
        load_recipe("tiny").override("objective.sampler=multinomial")
    with pytest.raises(ConfigError, match="train.strategy must be one of"):
        config.override("train.strategy=horovod")
    assert config.override("data.sequence_length=256", "model.max_sequence_length=512")


def test_recipe_files_and_unknown_names(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("[train]\nlearning_rate = 3e-4\n[model]\nnum_layers = 2\n")
    config = load_recipe(str(path))
    assert config.train.learning_rate == 3e-4 and config.model.num_layers == 2
    assert config.model.hidden_dim == 256  # the defaults are ELECTRA-Small's
    with pytest.raises(ConfigError, match="Unknown pretrain recipe 'huge'"):
        load_recipe("huge")
    bad = tmp_path / "bad.toml"
    bad.write_text("[train]\nwarmup = 3\n")
    with pytest.raises(ConfigError, match="unknown config key 'train.warmup'"):
        load_recipe(str(bad))
