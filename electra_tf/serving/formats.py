"""Every export format behind one call, and a release that writes and checks them all.

`export_model(model, out, format)` writes one format:

- `serving`: a TF Serving SavedModel, `OUT/<model_name>/<version>/`;
- `hub`: the TF-Hub-style `encoder/` and `preprocessor/` pair;
- `keras-hub`: a keras-hub `ElectraBackbone` preset;
- `hugging-face`: `discriminator/` and `generator/` folders transformers loads;
- `reference`: a TF1 checkpoint with the reference code's variable names.

`write_release(model, out)` (`electra-tf export --format all`) writes the
serving, hub and keras-hub formats side by side, loads each back the way its
consumers load it, and compares it with the Keras discriminator on a few
sentences: the id-based exports must agree within 1e-5 (keras-hub uses
tanh-approximate GELU, so its difference is reported, not required).
"""

from __future__ import annotations

import contextlib
import errno
from pathlib import Path

__all__ = ["FORMATS", "export_model", "write_release", "RELEASE_TOLERANCE"]

FORMATS = ("serving", "hub", "keras-hub", "hugging-face", "reference", "all")
RELEASE_TOLERANCE = 1e-5  # largest difference an id-based export may have from Keras


def export_model(
    model,
    out,
    format: str = "serving",
    *,
    vocab_file=None,
    model_name: str = "electra",
    version: int = 1,
    seq_length: int = 128,
    lower_case: bool | None = None,
    jit_compile: bool = False,
    kernel_layout: str = "auto",
    lanes: int | None = None,
):
    """Writes `model` (a pretrainer) in one of `FORMATS`; returns what was written.

    `vocab_file` and `lower_case` default to what the model's config records;
    `jit_compile` makes the TF Serving SavedModel (formats serving and all) run its
    encoder under XLA; `kernel_layout` and `lanes` are that SavedModel's (see
    `ServingModule`). An
    output folder that cannot be written (read-only, full) fails in one sentence and
    leaves nothing half-written: each format is written under a scratch name first.
    """
    import tensorflow as tf

    from electra_tf.config import ConfigError
    from electra_tf.io.durable import os_reason, variables_bytes

    options = dict(
        vocab_file=vocab_file or model.config.data.vocab_file,
        model_name=model_name,
        version=version,
        seq_length=seq_length,
        lower_case=model.config.data.lower_case if lower_case is None else lower_case,
        jit_compile=jit_compile,
        kernel_layout=kernel_layout,
        lanes=lanes,
    )
    _refuse(model, format, options, vocab_given=bool(vocab_file))
    out = Path(out)
    existed = out.exists()
    try:
        # The pretrainer's weights bound one format's (a release writes three).
        _check_room(out, variables_bytes(model.weights) * (3 if format == "all" else 1))
        return _WRITERS[format](model, out, options)
    except (OSError, tf.errors.OpError) as error:
        if not existed:
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty
        raise ConfigError(
            f"Could not write the export into {out} ({os_reason(error)}); nothing was left "
            "half-written: free space or choose a writable --out."
        ) from None


def _refuse(model, format: str, options: dict, vocab_given: bool) -> None:
    """Raises ConfigError, in one sentence, for what `export_model` cannot write: weights
    that are not finite, an unknown format, a serving-only flag for another format, a
    vocabulary file that is not there."""
    from electra_tf.config import ConfigError
    from electra_tf.pretraining.checkpoint import first_nonfinite_weight

    bad = first_nonfinite_weight(model)
    if bad is not None:
        raise ConfigError(
            f"The checkpoint's weight {bad} is not finite, so nothing was exported; export an "
            "earlier checkpoint (a step-N folder of the run)."
        )
    if format not in _WRITERS:
        raise ConfigError(f"Unknown export format {format!r}: choose one of {', '.join(FORMATS)}.")
    for flag, given in (
        ("--xla", options["jit_compile"]),
        ("--lanes", options["lanes"] is not None),
    ):
        if given and format not in ("serving", "all"):
            raise ConfigError(
                f"{flag} applies to the TF Serving SavedModel only, not to format {format!r}; "
                "use --format serving or all."
            )
    recorded = options["vocab_file"]
    if recorded and "://" not in recorded and not Path(recorded).is_file():
        where = "given" if vocab_given else "that the checkpoint's config records"
        raise ConfigError(
            f"The vocabulary {where}, {recorded}, is not there (moved or deleted?); give "
            "--vocab-file with the vocabulary the model was trained with."
        )


def _check_room(out: Path, needed: int) -> None:
    """Raises OSError when `out` cannot take about `needed` bytes: a read-only folder says
    so first; a full one says how much is needed and free."""
    from electra_tf.io.durable import ensure_space, probe_writable

    try:
        probe_writable(out)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            ensure_space(out, needed)  # the sentence with the sizes
        raise
    ensure_space(out, needed)


def _serving(model, out, o):
    from electra_tf.serving.saved_model import export_for_serving

    serving = ("model_name", "version", "jit_compile", "kernel_layout", "lanes")
    return export_for_serving(model, out, **_common(o), **{k: o[k] for k in serving})


def _common(o) -> dict:
    return {k: o[k] for k in ("vocab_file", "seq_length", "lower_case")}


def _hub(model, out, o):
    from electra_tf.serving.hub import export_hub

    return export_hub(model, out, **_common(o))


def _keras_hub(model, out, o):
    from electra_tf.serving.keras_hub_preset import write_keras_hub_preset

    return write_keras_hub_preset(
        model, out, vocab_file=o["vocab_file"], lower_case=o["lower_case"]
    )


def _hugging_face(model, out, o):
    from electra_tf.serving.conversion import export_hugging_face

    return export_hugging_face(model, out)


def _reference(model, out, o):
    from electra_tf.serving.conversion import export_reference_checkpoint

    return export_reference_checkpoint(model, out / "model.ckpt")


def _all(model, out, o):
    return write_release(model, out, **o)


_WRITERS = {
    "serving": _serving,
    "hub": _hub,
    "keras-hub": _keras_hub,
    "hugging-face": _hugging_face,
    "reference": _reference,
    "all": _all,
}


def write_release(
    model,
    out,
    *,
    vocab_file=None,
    model_name: str = "electra",
    version: int = 1,
    seq_length: int = 128,
    lower_case: bool | None = None,
    jit_compile: bool = False,
    kernel_layout: str = "auto",
    lanes: int | None = None,
) -> dict:
    """Writes the serving, hub and keras-hub formats into `out/` and checks each one.

    `jit_compile`, `kernel_layout` and `lanes` apply to the serving SavedModel (see
    `export_for_serving`).

    Returns:
        {"serving", "hub", "keras_hub": folders, "max_abs_difference_vs_keras": {format:
        difference}, "verified": whether the id-based exports agree within
        `RELEASE_TOLERANCE`}.
    """
    from electra_tf.config import ConfigError
    from electra_tf.serving.hub import export_hub
    from electra_tf.serving.keras_hub_preset import write_keras_hub_preset
    from electra_tf.serving.saved_model import export_for_serving

    vocab = vocab_file or model.config.data.vocab_file
    lower_case = model.config.data.lower_case if lower_case is None else lower_case
    if not vocab:
        raise ConfigError("The checkpoint's config names no vocabulary file; give --vocab-file.")
    out = Path(out)
    common = dict(vocab_file=vocab, seq_length=seq_length, lower_case=lower_case)
    serving = export_for_serving(
        model, out / "serving", model_name=model_name, version=version,
        jit_compile=jit_compile, kernel_layout=kernel_layout, lanes=lanes, **common,
    )  # fmt: skip
    encoder_dir, preprocessor_dir = export_hub(model, out / "hub", **common)
    preset = write_keras_hub_preset(
        model, out / "keras_hub", vocab_file=vocab, lower_case=lower_case
    )
    checks = _release_differences(model, serving, encoder_dir, preprocessor_dir, preset)
    return {
        "serving": str(serving),
        "hub": [str(encoder_dir), str(preprocessor_dir)],
        "keras_hub": str(preset),
        "max_abs_difference_vs_keras": checks,
        "verified": all(checks[name] <= RELEASE_TOLERANCE for name in ("serving", "hub_encoder")),
    }


def _release_differences(model, serving, encoder_dir, preprocessor_dir, preset) -> dict:
    """Each written format's largest difference from the Keras encoder on two sentences,
    tokenized by the hub preprocessor."""
    import keras_hub
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the text signatures' ops)

    sentences = tf.constant(["The markets rallied today.", "A new film opens this week."])
    preprocessor = tf.saved_model.load(str(preprocessor_dir))
    ids = {k: tf.cast(v, tf.int32) for k, v in preprocessor(sentences).items()}
    ours_inputs = {
        "token_ids": ids["input_word_ids"],
        "padding_mask": ids["input_mask"],
        "segment_ids": ids["input_type_ids"],
    }
    ours = model.discriminator.encoder(ours_inputs, training=False).numpy()
    served = tf.saved_model.load(str(serving)).signatures["serving_default"](**ids)
    encoder = tf.saved_model.load(str(encoder_dir))
    backbone = keras_hub.models.ElectraBackbone.from_preset(str(preset))
    theirs = np.asarray(backbone(ours_inputs)["sequence_output"])
    return {
        "serving": float(np.abs(served["sequence_output"].numpy() - ours).max()),
        "hub_encoder": float(np.abs(encoder(ids)["sequence_output"].numpy() - ours).max()),
        "keras_hub_tanh_gelu": float(np.abs(theirs - ours).max()),
    }
