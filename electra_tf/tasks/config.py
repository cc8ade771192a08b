"""Fine-tuning hyperparameters: a frozen dataclass, task recipes and the paper's per-size values.

Zero means "the paper's value" for the learning rate (3e-4 small, 1e-4 base,
5e-5 large), the layer-wise decay (0.8; 0.9 for large) and the epochs (3;
10 for RTE and STS-B; 2 for SQuAD). Encoders of hidden size 128 or less
(the `tiny` recipe, not in the paper) get 1e-3: on the movie-review task the
tiny demo model reaches 0.70 dev accuracy at 1e-3 and stays at chance (0.52)
at small's 3e-4 within 3 epochs. A task recipe
(`recipes/finetune/<task>.toml`) is a flat table over these defaults.

Settings left unset are filled by `resolved()` from one of two recipes, chosen by the
`defaults` field: "standard" (the default: transformers' example scripts, which learn on
sparse labels where the paper's recipe stays at the majority class, docs/results/tagging.md)
or "paper" (ELECTRA's reference code; the GLUE and SQuAD task recipes select it).
"""

from __future__ import annotations

import dataclasses
import json

from electra_tf.config import ConfigError, parse_assignments, read_recipe_file, replace_fields

__all__ = [
    "FinetuneConfig",
    "RECIPES",
    "load_finetune_recipe",
    "size_of",
    "add_flags",
    "flag_assignments",
]

PAPER_LEARNING_RATE = {"tiny": 1e-3, "small": 3e-4, "base": 1e-4, "large": 5e-5}
PAPER_LAYERWISE_DECAY = {"tiny": 0.8, "small": 0.8, "base": 0.8, "large": 0.9}

# The reference code's QA 2.0 head: an answerability loss and logit on [CLS]; the joint head
# (`joint_end`) takes it under either recipe, as transformers' rule needs the plain head.
REFERENCE_QA_HEAD = {
    "answerable_loss_weight": 1.0,
    "no_answer": "answerability",
    "span_head_init": "truncated_normal",
}

# What each recipe gives the settings left unset (layer-wise decay None: the paper's by size).
RECIPES = {
    "standard": {
        "layerwise_decay": 1.0,
        "group_by_length": False,
        "warmup_fraction": 0.0,
        "adam_epsilon": 1e-8,
        # QA: BertForQuestionAnswering's head (docs/results/question-answering.md).
        "answerable_loss_weight": 0.0,
        "no_answer": "null_score",
        "span_head_init": "truncated_normal",
    },
    "paper": {
        "layerwise_decay": None,
        "group_by_length": True,
        "warmup_fraction": 0.1,
        "adam_epsilon": 1e-6,
        **REFERENCE_QA_HEAD,
    },
}


def size_of(hidden_dim: int) -> str:
    """Size bucket of an encoder: tiny (<= 128 hidden), small (<= 256), base (<= 768), large."""
    if hidden_dim <= 128:
        return "tiny"
    return "small" if hidden_dim <= 256 else "base" if hidden_dim <= 768 else "large"


def _field(default, help: str):
    """A config field with its one-line help (the CLI's flag help)."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Fine-tuning settings (paper Table 7 and the reference code)."""

    task: str = _field("sst2", "the task's name")
    defaults: str = _field(
        "standard", "fills unset settings: standard (transformers' scripts) or paper (ELECTRA's)"
    )
    learning_rate: float = _field(0.0, "peak learning rate; 0: the paper's for the size")
    batch_size: int = _field(32, "examples per step")
    epochs: int = _field(0, "epochs; 0: the task's in the paper (3; RTE, STS-B 10; SQuAD 2)")
    warmup_fraction: float | None = _field(None, "linear warmup share, then linear decay to 0")
    weight_decay: float = _field(0.0, "decoupled weight decay (LayerNorm and biases excluded)")
    layerwise_decay: float = _field(0.0, "layer-wise rate decay; 1: off; 0: the defaults'")
    layerwise_decay_reference: bool = _field(False, "the reference code's extra decay level")
    max_seq_length: int = _field(128, "longest input in tokens (QA: window length)")
    dropout: float = _field(0.1, "dropout in the encoder and before the head")
    adam_epsilon: float | None = _field(None, "Adam's epsilon")
    clip_norm: float = _field(1.0, "global gradient-norm clip; 0: off")
    seed: int = _field(1, "first seed; the run's seeds are seed, seed + 1, ...")
    seeds: int = _field(1, "fine-tunings from the same initialization")
    patience: int = _field(0, "stop after N epochs without a better dev score; 0: never")
    group_by_length: bool | None = _field(None, "batch rows of similar length together")
    pad_to: str = _field(
        "longest", "longest (per batch; on JAX in quarters of the length) or max (one shape)"
    )
    max_train_examples: int = _field(0, "train on a random N rows; 0: all")
    eval_batch_size: int = _field(128, "examples per scoring step")
    doc_stride: int = _field(128, "QA: window stride over long contexts (tokens)")
    max_query_length: int = _field(64, "QA: question tokens kept")
    max_answer_length: int = _field(30, "QA: longest answer predicted (tokens)")
    n_best: int = _field(20, "QA: candidate starts and ends per window")
    joint_end: bool = _field(False, "QA: the reference's end-given-start head")
    beam_size: int = _field(20, "QA joint head: starts kept")
    answerable_loss_weight: float | None = _field(
        None, "QA 2.0: answerability loss weight; 0: spans only"
    )
    no_answer: str | None = _field(
        None, "QA 2.0 rule: answerability (logit) or null_score (transformers')"
    )
    span_head_init: str | None = _field(
        None, "QA: start/end kernels' law: truncated_normal (reference) or normal"
    )

    def __post_init__(self):
        if self.batch_size < 1 or self.seeds < 1 or self.max_seq_length < 8:
            raise ConfigError("batch_size and seeds must be >= 1 and max_seq_length >= 8.")
        if self.defaults not in RECIPES:
            raise ConfigError(
                f'defaults must be "standard" or "paper", got {self.defaults!r}: use '
                '"paper" for the ELECTRA paper\'s recipe.'
            )
        if self.warmup_fraction is not None and not 0 <= self.warmup_fraction < 1:
            raise ConfigError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction}.")
        if self.pad_to not in ("longest", "max"):
            raise ConfigError(f'pad_to must be "longest" or "max", got {self.pad_to!r}.')
        if self.layerwise_decay < 0 or self.layerwise_decay > 1:
            raise ConfigError(f"layerwise_decay must be in [0, 1], got {self.layerwise_decay}.")
        if self.answerable_loss_weight is not None and self.answerable_loss_weight < 0:
            raise ConfigError(
                f"answerable_loss_weight must be >= 0, got {self.answerable_loss_weight}."
            )
        if self.no_answer not in (None, "answerability", "null_score"):
            raise ConfigError(
                f'no_answer must be "answerability" or "null_score", got {self.no_answer!r}.'
            )
        if self.span_head_init not in (None, "truncated_normal", "normal"):
            raise ConfigError(
                'span_head_init must be "truncated_normal" or "normal", got '
                f"{self.span_head_init!r}."
            )
        if self.no_answer == "null_score" and self.joint_end:
            raise ConfigError(
                "no_answer=null_score needs the plain head: set joint_end=false or "
                "no_answer=answerability."
            )

    def override(self, *assignments: str) -> FinetuneConfig:
        return replace_fields(self, parse_assignments(self, assignments), "", "override")

    def resolved(self, hidden_dim: int, task_epochs: int) -> FinetuneConfig:
        """The config with unset settings filled in for an encoder of `hidden_dim`: from
        the `defaults` recipe, and the learning rate from the paper's per size in both."""
        size = size_of(hidden_dim)
        recipe = RECIPES[self.defaults]
        if self.joint_end:
            recipe = {**recipe, **REFERENCE_QA_HEAD}
        unset = {
            name: value
            for name, value in recipe.items()
            if getattr(self, name) is None and name != "layerwise_decay"
        }
        return dataclasses.replace(
            self,
            learning_rate=self.learning_rate or PAPER_LEARNING_RATE[size],
            layerwise_decay=self.layerwise_decay
            or recipe["layerwise_decay"]
            or PAPER_LAYERWISE_DECAY[size],
            epochs=self.epochs or task_epochs,
            **unset,
        )

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)


def load_finetune_recipe(name_or_path: str) -> FinetuneConfig:
    """The fine-tuning config of a task recipe (`recipes/finetune/<name>.toml`) or a TOML file."""
    values, source = read_recipe_file(name_or_path, "finetune")
    return replace_fields(FinetuneConfig(), values, "", source)


def _flag_type(kind):
    if kind is bool:

        def boolean(text: str) -> bool:
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return lowered in ("true", "1", "yes")

        boolean.__name__ = "true/false"
        return boolean
    return kind


def add_flags(parser, skip=("task",)) -> None:
    """One `--name` flag per `FinetuneConfig` field (`--learning-rate 1e-4`), default unset,
    with the field's help: the CLI's settings are the config's, nothing kept by hand."""
    kinds = {"int": int, "float": float, "bool": bool, "str": str}
    for field in dataclasses.fields(FinetuneConfig):
        if field.name in skip:
            continue
        name = field.type if isinstance(field.type, str) else field.type.__name__
        kind = kinds[name.split(" |")[0]]
        default = "the defaults'" if field.default is None else field.default
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            dest=f"config_{field.name}",
            type=_flag_type(kind),
            metavar=kind.__name__.upper() if kind is not bool else "true/false",
            help=f"{field.metadata['help']} (default {default})",
        )


def flag_assignments(args) -> list[str]:
    """`key=value` of each `add_flags` flag given, for `FinetuneConfig.override`."""
    return [
        f"{field.name}={value}"
        for field in dataclasses.fields(FinetuneConfig)
        if (value := getattr(args, f"config_{field.name}", None)) is not None
    ]
