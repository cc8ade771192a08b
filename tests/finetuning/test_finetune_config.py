"""Fine-tuning recipes and the paper's per-size values."""

import pytest

from electra_tf.config import ConfigError
from electra_tf.tasks.config import FinetuneConfig, load_finetune_recipe


def test_recipes_and_paper_values():
    config = load_finetune_recipe("rte")
    assert config.epochs == 10 and config.task == "rte"
    small = FinetuneConfig().resolved(hidden_dim=256, task_epochs=3)
    large = FinetuneConfig().resolved(hidden_dim=1024, task_epochs=3)
    assert (small.learning_rate, small.layerwise_decay, small.epochs) == (3e-4, 0.8, 3)
    assert (large.learning_rate, large.layerwise_decay) == (5e-5, 0.9)
    assert FinetuneConfig().resolved(768, 3).learning_rate == 1e-4
    assert FinetuneConfig().resolved(128, 3).learning_rate == 1e-3  # tiny, not in the paper
    assert FinetuneConfig().override("learning_rate=2e-5", "seeds=3").seeds == 3
    with pytest.raises(ConfigError, match="has no field 'learning_rat'"):
        FinetuneConfig().override("learning_rat=1")
