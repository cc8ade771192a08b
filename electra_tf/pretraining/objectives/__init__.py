"""Pre-training objectives: ELECTRA and (in later modules) the paper's baselines and ablations.

Each objective is one module; `OBJECTIVES` maps the config's `objective.name`
to its class.
"""

from electra_tf.pretraining.objectives.base import Objective, StepContext, StepOutput, Streams
from electra_tf.pretraining.objectives.electra import ElectraObjective

OBJECTIVES = {
    ElectraObjective.name: ElectraObjective,
}


def make_objective(config, generator, discriminator) -> Objective:
    """The objective named by `config.objective.name`, bound to the two models."""
    from electra_tf.config import ConfigError

    name = config.objective.name
    if name not in OBJECTIVES:
        raise ConfigError(
            f"Unknown objective.name {name!r}: choose one of {', '.join(sorted(OBJECTIVES))}."
        )
    return OBJECTIVES[name](config, generator, discriminator)


__all__ = [
    "OBJECTIVES",
    "Objective",
    "StepContext",
    "StepOutput",
    "Streams",
    "ElectraObjective",
    "make_objective",
]
