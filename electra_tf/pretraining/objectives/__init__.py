"""Pre-training objectives: ELECTRA and the paper's baselines and ablations, one module each.

`OBJECTIVES` maps the config's `objective.name` to its class:

- `electra`: the paper's objective (generator MLM + 50 x replaced-token detection);
- `electra_15`: the discriminator's loss only at the masked positions;
- `bert_mlm`: BERT's masked LM on the discriminator-sized model (set 80/10/10 masking);
- `replace_mlm`: masked positions show generator samples; predict the originals there;
- `all_tokens_mlm`: Replace MLM predicting every token, with a copy mechanism;
- `unigram`: replacements sampled by corpus frequency instead of a generator;
- `two_stage`: generator-only MLM, then the discriminator from its weights, generator frozen;
- `adversarial`: the generator trained by REINFORCE to fool the discriminator.

They share masking (`Objective.mask`), sampling and the loss functions
(`electra_tf.ops`), and each reports its Appendix-E `train_flops`.
"""

import keras

from electra_tf.pretraining.objectives.adversarial import AdversarialObjective
from electra_tf.pretraining.objectives.all_tokens_mlm import AllTokensMlmObjective
from electra_tf.pretraining.objectives.base import Objective, StepContext, StepOutput, Streams
from electra_tf.pretraining.objectives.bert_mlm import BertMlmObjective
from electra_tf.pretraining.objectives.electra import ElectraObjective
from electra_tf.pretraining.objectives.electra_15 import Electra15Objective
from electra_tf.pretraining.objectives.replace_mlm import ReplaceMlmObjective
from electra_tf.pretraining.objectives.two_stage import TwoStageObjective
from electra_tf.pretraining.objectives.unigram import UnigramObjective

OBJECTIVES = {
    cls.name: cls
    for cls in (
        ElectraObjective,
        Electra15Objective,
        BertMlmObjective,
        ReplaceMlmObjective,
        AllTokensMlmObjective,
        UnigramObjective,
        TwoStageObjective,
        AdversarialObjective,
    )
}


def train_flops_per_step(config, convention: str = "paper") -> float:
    """Appendix-E FLOPs of one training step of the objective `config` names, counted by
    `convention` ("paper" or "sparse": see `electra_tf.pretraining.flops`)."""
    from electra_tf.config import ConfigError
    from electra_tf.pretraining import flops

    name = config.objective.name
    if name not in OBJECTIVES:
        raise ConfigError(
            f"Unknown objective.name {name!r}: choose one of {', '.join(sorted(OBJECTIVES))}."
        )
    with flops.convention(convention):
        return OBJECTIVES[name].train_flops(config)


def make_objective(config, generator, discriminator) -> Objective:
    """The objective named by `config.objective.name`, bound to the two models."""
    from electra_tf.config import ConfigError

    name = config.objective.name
    if name not in OBJECTIVES:
        raise ConfigError(
            f"Unknown objective.name {name!r}: choose one of {', '.join(sorted(OBJECTIVES))}."
        )
    objective = OBJECTIVES[name]
    backend = keras.config.backend()
    if backend != "tensorflow" and not objective.portable:
        portable = ", ".join(sorted(n for n, c in OBJECTIVES.items() if c.portable))
        raise ConfigError(
            f"objective.name={name!r} trains on the TensorFlow backend only for now; on "
            f"{backend} choose one of {portable}, or set KERAS_BACKEND=tensorflow."
        )
    return objective(config, generator, discriminator)


__all__ = [
    "OBJECTIVES",
    "Objective",
    "StepContext",
    "StepOutput",
    "Streams",
    "ElectraObjective",
    "Electra15Objective",
    "BertMlmObjective",
    "ReplaceMlmObjective",
    "AllTokensMlmObjective",
    "UnigramObjective",
    "TwoStageObjective",
    "AdversarialObjective",
    "make_objective",
    "train_flops_per_step",
]
