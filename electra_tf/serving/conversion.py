"""Released weights in and out, behind one import call.

The formats live in their own modules: `reference_checkpoint` (the reference
code's TF1 checkpoints) and `hugging_face` (Hugging Face ELECTRA and BERT-family
weights). This module keeps their public names in one place and adds what
`electra-tf import` does on top: a run folder whose checkpoint records the
vocabulary and casing (`import_weights`, `with_vocabulary`).
"""

from __future__ import annotations

from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.serving.hugging_face import (
    HUGGING_FACE_TYPES,
    export_hugging_face,
    hugging_face_config,
    hugging_face_name,
    hugging_face_vocabulary,
    import_hugging_face,
)
from electra_tf.serving.reference_checkpoint import (
    export_reference_checkpoint,
    import_reference_checkpoint,
    reference_names,
)

__all__ = [
    "reference_names",
    "export_reference_checkpoint",
    "import_reference_checkpoint",
    "export_hugging_face",
    "import_hugging_face",
    "hugging_face_name",
    "hugging_face_config",
    "with_vocabulary",
    "vocabulary_for",
    "hugging_face_vocabulary",
    "import_weights",
    "HUGGING_FACE_TYPES",
]


def vocabulary_for(model, vocab_file) -> list[str]:
    """The tokens of `vocab_file`, refused in one sentence unless they are as many as the
    rows of `model`'s embeddings."""
    from electra_tf.data.vocabulary import read_vocabulary

    tokens = read_vocabulary(vocab_file)
    if len(tokens) != model.config.model.vocabulary_size:
        raise ConfigError(
            f"{vocab_file} holds {len(tokens)} tokens but the weights' vocabulary has "
            f"{model.config.model.vocabulary_size}; give the vocabulary they were trained with."
        )
    return tokens


def with_vocabulary(model, vocab_file, lower_case: bool | None = None):
    """`model` rebuilt with a config that records `vocab_file`, its special ids and casing."""
    from electra_tf.data.vocabulary import special_ids
    from electra_tf.layers.initializers import draws_skipped
    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    tokens = vocabulary_for(model, vocab_file)
    data = {"vocab_file": str(vocab_file), **{f"{k}_id": v for k, v in special_ids(tokens).items()}}
    if lower_case is not None:
        data["lower_case"] = bool(lower_case)
    with draws_skipped():  # every weight is assigned below, or the zip raises
        rebuilt = ElectraPretrainer(model.config.update({"data": data}))
    for target, source in zip(rebuilt.weights, model.weights, strict=True):
        target.assign(source)
    rebuilt.import_report = getattr(model, "import_report", None)
    return rebuilt


def import_weights(
    out,
    *,
    hugging_face=None,
    hugging_face_generator=None,
    reference=None,
    num_heads: int | None = None,
    vocab_file=None,
    lower_case: bool | None = None,
):
    """Released weights into a run folder `out` whose step-0 checkpoint the commands read.

    The vocabulary (`vocab_file`, or the Hugging Face folder's vocab.txt; a Hugging Face
    folder with neither is refused) is copied into
    `out/vocab.txt` and recorded in the checkpoint's config with its casing (the folder's
    tokenizer_config.json, unless `lower_case` is given), so `export`, `finetune` and
    `pretrain --init` need no vocabulary flag afterwards. The checkpoint's `state.json`
    records what was imported (`import_report`).

    Returns:
        (the checkpoint folder, the imported `ElectraPretrainer`).
    """
    import shutil

    from electra_tf.pretraining.checkpoint import save_pretrainer

    folder_lower = None
    if reference:
        model = import_reference_checkpoint(reference, num_heads=num_heads)
        model.import_report = {"source": str(reference), "model_type": "electra (TF1)"}
    else:
        model = import_hugging_face(hugging_face, hugging_face_generator)
        found, folder_lower = hugging_face_vocabulary(hugging_face)
        vocab_file = vocab_file or found
        if not vocab_file:
            raise ConfigError(
                f"{hugging_face} has no vocab.txt; pass --vocab-file (the vocabulary the "
                "weights were trained with), so the imported checkpoint records one."
            )
    out = Path(out)
    if vocab_file:
        out.mkdir(parents=True, exist_ok=True)
        copy = out / "vocab.txt"
        if Path(vocab_file).resolve() != copy.resolve():
            shutil.copyfile(vocab_file, copy)
        casing = lower_case if lower_case is not None else folder_lower
        model = with_vocabulary(model, copy.resolve(), casing)
    report = getattr(model, "import_report", None) or {}
    folder = save_pretrainer(model, out, extra={"import_report": report})
    return folder, model
