"""A fine-tuned model on disk: everything needed to use it, without the training data.

`RUN/model/` holds

- `model.keras`: the Keras task model (an `ElectraTextClassifier` with its
  preprocessor, label names, vocabulary and casing inside, or an
  `ElectraTokenClassifier` or `ElectraQuestionAnswerer`), loadable with
  `keras.saving.load_model` once `electra_tf.tasks.registry.load_kinds()` has run;
- `vocab.txt`: the vocabulary, for tools that want the file;
- `finetuned.json`: the kind, label names, text columns, maximum length,
  casing, where it started from, the seed and epoch kept and why, and its
  metrics on every split;
- `record.json`, written last: the size and SHA-256 of the files above.

The folder is written under a scratch name and published in one rename
(`electra_tf.io.durable`); reading verifies it against its record first.
"""

from __future__ import annotations

import json
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.io.durable import (
    ensure_space,
    os_reason,
    publishing,
    recover_within,
    variables_bytes,
    verify_record,
    write_record,
)
from electra_tf.tasks.initialization import FINETUNED_MARKER, FINETUNED_MODEL

__all__ = [
    "write_model_folder",
    "load_finetuned",
    "model_folder_of",
    "read_model_info",
    "without_optimizer",
]


def write_model_folder(model, folder, info: dict) -> Path:
    """Writes `model` and `info` as a verified model folder at `folder` (replacing it).

    `info["vocabulary_tokens"]` gives the vocabulary when the model has no preprocessor.
    """
    folder = Path(folder)
    try:
        ensure_space(folder.parent, variables_bytes(model.weights))  # h5py crashes when full
        with publishing(folder) as scratch:
            without_optimizer(model).save(scratch / FINETUNED_MODEL)
            vocabulary = info.get("vocabulary_tokens")
            if vocabulary is None and getattr(model, "preprocessor", None) is not None:
                vocabulary = model.preprocessor.vocabulary
            if vocabulary is not None:
                (scratch / "vocab.txt").write_text("".join(f"{t}\n" for t in vocabulary), "utf-8")
            info = {k: v for k, v in info.items() if k != "vocabulary_tokens"}
            (scratch / FINETUNED_MARKER).write_text(json.dumps(info, indent=2) + "\n")
            write_record(scratch)
    except OSError as error:
        raise ConfigError(
            f"Could not write the model folder {folder} ({os_reason(error)}); free space or "
            "choose a writable --output-dir."
        ) from None
    return folder


def without_optimizer(model):
    """`model`, or a twin with its weights and no optimizer when it has one: the kept model
    needs no optimizer state (the resume checkpoints hold it), which was two thirds of its
    file (Adam's two moments per weight)."""
    from electra_tf.layers.initializers import draws_skipped

    if getattr(model, "optimizer", None) is None:
        return model
    with draws_skipped():  # every weight is set below, or the model is saved as it is
        twin = model.__class__.from_config(model.get_config())
        if getattr(model, "preprocessor", None) is not None:  # its vocabulary is an asset
            twin.preprocessor.set_vocabulary(model.preprocessor.vocabulary)
        twin.build()
    if len(twin.weights) != len(model.weights):
        return model  # a model that builds differently: saved as it is
    twin.set_weights(model.get_weights())
    return twin


def model_folder_of(path) -> Path:
    """The model folder of a fine-tuned run (`RUN/model/`) or of the folder itself.

    A model folder whose publishing was killed between its two renames is put back
    first (`recover_within`)."""
    path = Path(path)
    recover_within(path)
    for candidate in (path, path / "model"):
        if (candidate / FINETUNED_MARKER).exists():
            return candidate
    raise ConfigError(
        f"{path} is not a fine-tuned run (no {FINETUNED_MARKER} in it or in its model/ folder); "
        "give the --output-dir of `electra-tf finetune`."
    )


def read_model_info(path) -> dict:
    """The `finetuned.json` of a fine-tuned run or model folder."""
    return json.loads((model_folder_of(path) / FINETUNED_MARKER).read_text())


def load_finetuned(path):
    """(Keras model, info) of a fine-tuned run or model folder, verified first."""
    import keras

    from electra_tf.layers.initializers import draws_skipped
    from electra_tf.tasks.registry import load_kinds

    load_kinds()  # every kind's Keras classes, registered for `load_model`

    folder = model_folder_of(path)
    reason = verify_record(folder, required=(FINETUNED_MODEL, FINETUNED_MARKER))
    if reason:
        raise ConfigError(
            f"The fine-tuned model {folder} is not usable ({reason}); fine-tune again with the "
            "same command (it resumes) to write it anew."
        )
    with draws_skipped():  # every weight is read from the file, or `load_model` raises
        model = keras.saving.load_model(folder / FINETUNED_MODEL, compile=False)
    return model, json.loads((folder / FINETUNED_MARKER).read_text())
